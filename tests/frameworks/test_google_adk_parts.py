"""ADK events that hold more than text (an image, files, a thought, code, errors), written by
google-adk 2.13's Runner (``writer_google_adk_parts.py``); ADK's own ``get_session`` is the oracle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.store import open_store
from inspector.ui.models.messages import build_conversation, find_message_lists

ORACLE = json.loads((Path(__file__).parent / "stores" / "adk_parts_oracle.json").read_text())
NAMES = sorted(ORACLE)


def expected_parts(parts: list[dict]) -> list[dict]:
    """The oracle's parts (function calls and responses aside) in the message's ``parts`` shape."""
    out = []
    for part in parts:
        (kind, value), = part.items()
        if kind in ("text", "thought"):
            out.append({"type": kind, "text": value})
        elif kind != "function":
            out.append({"type": kind, **{k: v for k, v in value.items() if v is not None}})
    return out


@pytest.mark.parametrize("name", NAMES)
def test_every_part_is_in_the_conversation_as_adk_reads_it(store_copy, name: str) -> None:
    with open_store(store_copy(name)) as store:
        for session, events in ORACLE[name].items():
            assert store.count_checkpoints(session) == len(events)
            head = store.load(f"{session}:-1").state["messages"]
            said = [m for m in head if m.get("type") != "error"]
            spoken = [e for e in events if e["parts"]]
            assert [m["author"] for m in said] == [e["author"] for e in spoken]
            for message, event in zip(said, spoken, strict=True):
                parts = expected_parts(event["parts"])
                if any(p["type"] != "text" for p in parts):
                    assert message["parts"] == parts
                thoughts = [p["text"] for p in parts if p["type"] == "thought"]
                assert message.get("thought", "") == "\n".join(thoughts)
                for part in parts:
                    shown = [str(v) for k, v in part.items() if k not in ("type", "size")]
                    if part["type"] == "thought":
                        assert part["text"] not in message["content"]     # kept apart from the answer
                    else:
                        assert all(s.strip() in message["content"] for s in shown), (message, part)
            assert "iVBOR" not in json.dumps(head)      # the image's bytes (base64) are never shown


@pytest.mark.parametrize("name", NAMES)
def test_an_image_is_a_placeholder_with_its_type_and_size(store_copy, name: str) -> None:
    with open_store(store_copy(name)) as store:
        first = store.get_checkpoint("s-media:0")
        assert (first.kind, first.change) == ("input", "user: [image/png 12.0 KB]")
        answer = store.get_checkpoint("s-media:1")
        assert answer.change == "studio_helper: It is a dark square."      # not its thought
        state = store.load("s-media:1").state
        conversation = build_conversation(state, find_message_lists(state)[0])
        assert [m.text for m in conversation.messages] == ["[image/png 12.0 KB]", "It is a dark square."]
        assert ("thought", "a small picture, mostly black") in conversation.messages[1].extras


@pytest.mark.parametrize("name", NAMES)
def test_an_error_event_is_the_checkpoints_error_and_fails_its_invocation(store_copy, name: str) -> None:
    with open_store(store_copy(name)) as store:
        runs = {r.id: r for r in store.list_runs()}
        for session, events in ORACLE[name].items():
            for seq, event in enumerate(events):
                info = store.get_checkpoint(f"{session}:{seq}")
                snap = store.load(info.id)
                if event["error_code"]:
                    error = f"{event['error_code']}: {event['error_message']}"
                    assert info.change == f"error {error}" and snap.meta["error"] == error
                    assert snap.state["errors"][-1]["seq"] == seq
                    assert snap.state["messages"][-1] == {
                        "role": "assistant", "type": "error", "author": event["author"], "content": f"error {error}",
                        "error_code": event["error_code"], "error_message": event["error_message"]}
                else:
                    assert "error" not in snap.meta
            last = [e for e in events if e["invocation_id"] == events[-1]["invocation_id"] and e["error_code"]]
            run = runs[session]
            if last:    # ADK ends the invocation at its error: nothing answered it
                assert run.status == "failed"
                assert run.last_error == f"{last[-1]['error_code']}: {last[-1]['error_message']}"
            else:       # the user spoke again and was answered: the earlier error stays its checkpoint's
                assert run.status == "completed" and run.last_error is None
        assert runs["s-media"].status == "failed" and runs["s-recovered"].status == "completed"

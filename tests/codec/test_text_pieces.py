"""Long strings edited in place (format 4 text pieces): a save costs about the edit, and every
reader gives back the string exactly."""

from __future__ import annotations

import random
import sqlite3
import string
from pathlib import Path

import pytest

from inspector.codec import ChunkedText, PieceEncoder, Ref, resolve, unpack
from inspector.codec.encoder import SEGMENT_MAX, TEXT_MIN, text_segments
from inspector.diff import diff_checkpoints
from inspector.diff.lazy_value import load_view
from inspector.errors import CorruptDataError
from inspector.record import Checkpointer
from inspector.store import open_store
from tests.conftest import blob_bytes

_RND = random.Random(11)
_WORDS = ["".join(_RND.choices(string.ascii_lowercase, k=_RND.randint(2, 9))) for _ in range(2000)]


def _prose(lines: int, rnd: random.Random) -> str:
    return "".join(" ".join(rnd.choices(_WORDS, k=rnd.randint(2, 14))) + "\n" for _ in range(lines))


def _edits(text: str, rnd: random.Random) -> list[str]:
    """The text after each of the edits an agent makes to a document or a log, one after another."""
    def middle(t: str) -> int:
        return t.index("\n", len(t) // 2) + 1

    edits = [
        lambda t, m: t[:m] + _prose(12, rnd) + t[m:],                                   # lines inserted
        lambda t, m: t[:m] + "a rewritten line ü€😀\r\n" + t[t.index("\n", m) + 1:],   # one line replaced
        lambda t, m: t + _prose(10, rnd),                                              # appended
        lambda t, m: t[:m] + t[m + 2000:],                                             # a passage cut
        lambda t, m: t[:m] + "x" * 5000 + t[m:],                                       # one long line inserted
        lambda t, m: t[:-1] + "tail without a newline",                                # the end changed
    ]
    out = []
    for edit in edits:
        text = edit(text, middle(text))
        out.append(text)
    return out


def _decode(store: dict, root: bytes) -> object:
    return resolve(unpack(store[root]), lambda d: unpack(store[d]))


def test_an_edited_long_text_costs_about_the_edit_and_decodes_exactly() -> None:
    rnd = random.Random(1)
    text = _prose(12_000, rnd)        # ~0.6 MB
    enc, pieces = PieceEncoder(), {}
    for step, edited in enumerate([text, *_edits(text, rnd)]):
        state = {"doc": edited, "step": step}
        root, _, new = enc.encode(state)
        written = sum(len(raw) for digest, raw in new.items() if digest not in pieces)   # as a store keeps them
        made = sum(map(len, new.values()))      # what the writer made again, stored before or not
        pieces.update(new)
        assert _decode(pieces, root) == state
        if step >= 2:      # the first text is one piece; the first edit cuts it into lines once
            assert written < 40_000 and made < 60_000, (step, written, made)
        text_refs = [unpack(pieces[root])["doc"]]
        assert type(text_refs[0]) is Ref
    # what the edits made is a text piece, and unchanged text costs nothing more
    assert any(type(unpack(raw)) is ChunkedText for raw in pieces.values())
    root, _, new = enc.encode(state)
    assert _decode(pieces, root) == state and sum(len(raw) for d, raw in new.items() if d not in pieces) < 200


@pytest.mark.parametrize("text", [
    "ligne\r\nline\rzeile\x0bvt\x0cff\x1cfs\x1dgs\x1ers\x85nel\u2028ls\u2029ps\n" * 900,   # every line end
    ("é" * 300 + "\n") * 80 + "😀" * 7000,                                              # long lines, astral characters
    "no line end at all " * 2000,
])
def test_every_line_end_and_character_comes_back(text: str) -> None:
    assert "".join(text_segments(text) or [text]) == text
    enc, pieces = PieceEncoder(), {}
    for value in (text, text + "!", "?" + text + "!"):
        root, _, new = enc.encode({"doc": value})
        pieces.update(new)
        assert _decode(pieces, root) == {"doc": value}
    segments = text_segments(text)
    assert segments is None or max(map(len, segments)) <= SEGMENT_MAX


def test_texts_that_chunking_would_not_help_stay_one_piece() -> None:
    enc, pieces = PieceEncoder(), {}
    rnd = random.Random(2)
    heading = _prose(60, rnd)
    states = [{"doc": _prose(600, rnd)}, {"doc": _prose(600, rnd)},                  # replaced, not edited
              {"doc": heading + _prose(600, rnd)}, {"doc": heading + _prose(600, rnd)},  # written anew below a heading
              {"doc": "\n" * (TEXT_MIN * 2)}, {"doc": "\n" * (TEXT_MIN * 2) + "x"}]   # one segment per character
    for state in states:
        root, _, new = enc.encode(state)
        pieces.update(new)
        assert _decode(pieces, root) == state
        ref = unpack(pieces[root])["doc"]
        assert type(unpack(pieces[ref.digest])) is str


def _stored_as(pieces: dict, form: object) -> list[type]:
    """How each long string under a piece's form is stored: ChunkedText or str (one piece)."""
    from inspector.codec import ChunkedList, ChunkedMap
    if type(form) is Ref:
        piece = unpack(pieces[form.digest])
        return [type(piece)] if type(piece) in (ChunkedText, str) else _stored_as(pieces, piece)
    if type(form) in (ChunkedList, ChunkedMap):
        return [kind for chunk in form.chunks for kind in _stored_as(pieces, unpack(pieces[chunk.digest]))]
    if type(form) is dict:
        return [kind for value in form.values() for kind in _stored_as(pieces, value)]
    if type(form) is list:
        return [kind for value in form for kind in _stored_as(pieces, value)]
    return []


def _saved(path: Path | str, texts: list[str]) -> str:
    with Checkpointer(path, name="doc", heartbeat=60) as cp:
        for step, text in enumerate(texts):
            cp.save({"doc": text, "step": step}, force=True)
        return cp.run_id


def test_a_store_reads_diffs_shows_and_prunes_text_pieces(tmp_path: Path) -> None:
    rnd = random.Random(3)
    base = _prose(20_000, rnd)          # ~1 MB
    texts = [base, *_edits(base, rnd)]
    path = tmp_path / "texts.db"
    run = _saved(path, texts)
    with sqlite3.connect(path) as conn:
        sizes = [n for (n,) in conn.execute("SELECT length(data) FROM ci_blobs")]
    # the text whole, then once as lines (chunks compress less than one piece), then the edits:
    # under two copies of the text, where each save storing it whole stored seven compressed ones
    assert sum(sizes) < 2 * len(base.encode())
    with open_store(path) as store:
        for seq, text in enumerate(texts):
            assert store.load(f"{run}:{seq}").state == {"doc": text, "step": seq}
        (doc, step) = diff_checkpoints(store, f"{run}:1", f"{run}:2").changes
        assert doc.display_path == "doc" and doc.old == texts[1] and doc.new == texts[2]
        assert doc.detail is not None and step.display_path == "step"
        shown = load_view(store, store.load(f"{run}:3").info.id)
        assert shown.state["doc"] == texts[3] or shown.state["doc"].materialize() == texts[3]
    from inspector.cli import main
    from tests.retention.test_native_prune import integrity
    before = integrity(path)
    assert before["reachable"] == before["pieces"]
    assert main(["prune", str(path), "--keep-last", "1", "--apply"]) == 0
    after = integrity(path)      # the head's text chunks kept, the others' collected
    assert after["reachable"] == after["pieces"] < before["pieces"]
    with open_store(path) as store:
        assert store.load(f"{run}:-1").state == {"doc": texts[-1], "step": len(texts) - 1}
    from inspector.resume.fork import fork as fork_run
    with open_store(path, readonly=False) as store:
        forked = fork_run(store, f"{run}:-1", reason="edit", state={"doc": texts[-1] + "forked\n", "step": 0}).id
    with open_store(path) as store:
        assert store.load(f"{forked}:0").state == {"doc": texts[-1] + "forked\n", "step": 0}


@pytest.mark.parametrize("items, count, message", [
    (["line\n", 7], None, "segment that is not text"),
    (["line\n"] * 3, 99, "does not match"),
])
def test_a_damaged_text_piece_is_a_clear_error(tmp_path: Path, items: list, count: int | None, message: str) -> None:
    from inspector.codec import Chunk, digest_of, frame_chunk, pack
    path = tmp_path / "texts.db"
    run = _saved(path, ["x"])
    chunk = frame_chunk([pack(item) for item in items])
    text = pack(ChunkedText((Chunk(len(items) if count is None else count, len(chunk), digest_of(chunk)),)))
    root = pack({"doc": Ref(digest_of(text), 100)})
    with sqlite3.connect(path) as conn:
        conn.executemany("INSERT INTO ci_blobs (hash, codec, size, data) VALUES (?, 0, ?, ?)",
                         [(digest_of(raw), len(raw), raw) for raw in (chunk, text, root)])
        conn.execute("UPDATE ci_checkpoints SET state_hash = ?", (digest_of(root),))
    with open_store(path) as store, pytest.raises(CorruptDataError, match=message):
        store.load(f"{run}:0")


def test_a_growing_text_is_cut_where_it_grew_as_a_whole_cut_would_cut_it() -> None:
    """A log or transcript that only grows: its segments up to its last line are kept and only
    the rest is cut again (a \r at the end may become a \r\n, a long last line grows), giving
    the very segments cutting the whole text gives; a save costs what was appended."""
    from inspector.codec import encoder
    rnd = random.Random(15)
    pieces_of = ["plain words ", "\n", "\r", "\r\n", "é😀", "\u2028", "x" * 119, "y" * 121, "z" * 240, "\x85"]
    text = _prose(400, rnd)[:TEXT_MIN + 100] + "\r"
    enc, pieces = PieceEncoder(), {}
    appended_fast = 0
    real = encoder._edited

    def checked(last: object, new: str) -> tuple:
        nonlocal appended_fast
        out, same, tail = real(last, new)
        assert out == text_segments(new)
        assert out[:same] == last.segments[:same] and tail == 0
        appended_fast += 1
        return out, same, tail
    encoder._edited = checked
    try:
        for step in range(300):
            text += "".join(rnd.choices(pieces_of, k=rnd.randint(1, 12)))
            written = _new_bytes(enc, pieces, {"log": text})
            if step >= 2:
                assert written < 40_000, (step, written)     # the open last chunk, the table
    finally:
        encoder._edited = real
    assert appended_fast >= 290


@pytest.mark.parametrize("damage", ["the first chunk's", "a middle chunk's", "the last chunk's"])
def test_an_edit_cut_from_wrong_chunk_lengths_is_cut_whole_instead(damage: str) -> None:
    """The characters a writer keeps per chunk of a text only save work (they say where the
    edit's lines are): kept wrong, the kept segments would not join to the text, so the offsets
    found through them are checked against the text, and a mismatch cuts the whole text."""
    rnd = random.Random(16)
    text = _prose(3000, rnd)
    enc, pieces = PieceEncoder(), {}
    for step in range(4):
        text = text[:len(text) // 2] + f"edit {step}\n" + text[len(text) // 2:]
        _new_bytes(enc, pieces, {"doc": text})
    path = ("$", "doc")
    kept = enc._texts[path]
    chars = list(kept.chars)
    at = {"the first chunk's": 0, "a middle chunk's": len(chars) // 2, "the last chunk's": -1}[damage]
    chars[at] += 7
    if damage == "a middle chunk's":
        chars[at + 1] -= 7          # the total still right: only the place of the middle is wrong
    enc._texts[path] = kept._replace(chars=chars)
    text = text[:len(text) // 2] + "after the damage\n" + text[len(text) // 2:]
    _new_bytes(enc, pieces, {"doc": text})        # decodes exactly (checked inside)


@pytest.mark.parametrize("where", ["key", "list item"])
def test_random_edits_of_a_text_decode_exactly_save_after_save(where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Random insertions, deletions and replacements anywhere (inside a line, across line ends,
    splitting a \\r\\n, with every kind of line end and character), 150 saves: each decodes to
    the text exactly, from the pieces of one writer and from a fresh writer's; at a key, and in
    an item of a chunked list (found by its ends)."""
    rnd = random.Random(12)
    alphabet = "abcdefghijklmnopqrstuvwxyz " * 3 + "\n\r\u2028\x85é😀\t"   # a line end in about 20 characters
    text = _prose(400, rnd)[: TEXT_MIN + 5000]
    enc, pieces = PieceEncoder(), {}
    chunked = edited = 0
    from inspector.codec import encoder
    real = encoder._edited

    def checked(last: object, new: str) -> tuple:
        nonlocal edited
        out, same, tail = real(last, new)
        if out is not None:
            assert out == text_segments(new)
            assert out[:same] == last.segments[:same]
            assert tail == 0 or out[-tail:] == last.segments[-tail:]
            edited += 1
        return out, same, tail
    monkeypatch.setattr(encoder, "_edited", checked)
    for step in range(150):
        at = rnd.randrange(len(text))
        cut = rnd.choice([0, 0, 1, 2, 50, 700])
        added = "".join(rnd.choices(alphabet, k=rnd.choice([0, 1, 3, 40, 900])))
        text = text[:at] + added + text[at + cut:]
        if len(text) < TEXT_MIN:
            text += _prose(200, rnd)
        state = {"doc": text, "step": step}
        if where == "list item":
            state = {"items": [f"item {i}" for i in range(20)] + [{"doc": text, "step": step}]}
        root, _, new = enc.encode(state)
        pieces.update(new)
        assert _decode(pieces, root) == state, step
        chunked += _stored_as(pieces, unpack(pieces[root])) == [ChunkedText]
        if step % 50 == 0:
            fresh_root, _, fresh = PieceEncoder().encode(state)
            assert _decode(fresh, fresh_root) == state
    assert chunked == 149, chunked      # every save but the first (a text a writer has not seen is one piece)
    assert edited >= 130, edited        # cut where it was edited (but saves that changed nothing), checked against a whole cut


def test_text_pieces_on_each_backend(store_url: str) -> None:
    rnd = random.Random(5)
    base = _prose(3000, rnd)
    texts = [base, *_edits(base, rnd)]
    run = _saved(store_url, texts)     # a URL works as a path does
    with open_store(store_url) as store:
        for seq, text in enumerate(texts):
            assert store.load(f"{run}:{seq}").state == {"doc": text, "step": seq}
        (doc, _) = diff_checkpoints(store, f"{run}:2", f"{run}:3").changes
        assert doc.display_path == "doc" and doc.new == texts[3]
        stored = store.read_raw_pieces([store.load(f"{run}:3").info.state_hash])
        root = unpack(next(iter(stored.values())))
        assert type(unpack(store.read_raw_pieces([root["doc"].digest])[root["doc"].digest])) is ChunkedText


def test_texts_inside_maps_and_small_lists_are_text_pieces_too() -> None:
    """A file's contents in a big map of files (a chunked map), in a nested map and in a short
    list: each edit costs about its lines; decoded exactly."""
    rnd = random.Random(6)
    files = {f"src/module_{i}.py": f"# module {i}\n" for i in range(100)}
    state = {"files": files, "notes": {"draft": {"body": _prose(2000, rnd)}}, "pages": ["cover", _prose(2000, rnd)]}
    enc, pieces = PieceEncoder(), {}
    files["src/module_7.py"] = _prose(2000, rnd)
    for step in range(4):
        root, _, new = enc.encode(state)
        written = sum(len(raw) for digest, raw in new.items() if digest not in pieces)
        pieces.update(new)
        assert _decode(pieces, root) == state
        if step >= 2:
            assert written < 30_000, (step, written)
        for text in (files["src/module_7.py"], state["notes"]["draft"]["body"], state["pages"][1]):
            assert len(text) > TEXT_MIN
        files["src/module_7.py"] = files["src/module_7.py"].replace("\n", "\nnew line\n", 1)
        state["notes"]["draft"]["body"] += "appended\n"
        state["pages"][1] = "a new first line\n" + state["pages"][1]


def _new_bytes(enc: PieceEncoder, pieces: dict, state: object) -> int:
    """Encode ``state``, check it decodes exactly and return the bytes of pieces a store did not hold."""
    root, _, new = enc.encode(state)
    written = sum(len(raw) for digest, raw in new.items() if digest not in pieces)
    pieces.update(new)
    assert _decode(pieces, root) == state
    return written


def test_texts_in_the_items_of_a_chunked_list_are_found_again_by_their_ends() -> None:
    """The items of a long list have no path (its chunks are cut by content): a long text in
    one (a document in a list of records, a long string in a list of strings) was stored whole
    at every edit. It is found again by its first and last characters; an edit costs its lines."""
    rnd = random.Random(9)
    records = [{"path": f"notes/{i}.md", "body": f"note {i}\n"} for i in range(40)]
    records[17]["body"] = _prose(8000, rnd)                          # ~0.4 MB
    logs = [f"short log {i}" for i in range(30)] + [_prose(8000, rnd)]
    state = {"records": records, "logs": logs}
    enc, pieces = PieceEncoder(), {}
    for step in range(6):
        written = _new_bytes(enc, pieces, state)
        if step >= 2:     # the first text is one piece; the first edit cuts it into lines once
            assert written < 40_000, (step, written)
        body = records[17]["body"]
        at = body.index("\n", len(body) // 2) + 1
        records[17] = {**records[17], "body": body[:at] + _prose(10, rnd) + body[at:], "edited": step}
        logs[-1] += _prose(5, rnd)


def test_a_text_moved_to_another_key_or_place_is_found_again() -> None:
    """A key renamed (a draft becoming the final text), an item inserted before a text in a
    short list (every index after it moves): the edited text costs its lines, not a new copy."""
    rnd = random.Random(10)
    enc, pieces = PieceEncoder(), {}
    draft, page = _prose(8000, rnd), _prose(8000, rnd)
    _new_bytes(enc, pieces, {"draft": draft, "pages": [page]})
    draft, page = draft + "edited\n", "edited\n" + page      # cut into lines once
    _new_bytes(enc, pieces, {"draft": draft, "pages": [page]})
    assert _new_bytes(enc, pieces, {"final": draft + "signed\n", "pages": ["cover", page + "end\n"]}) < 40_000
    # two texts alike at one end (a shared heading) are each found by their other end
    heading = _prose(60, rnd)
    items = [f"item {i}" for i in range(20)] + [heading + _prose(6000, rnd), heading + _prose(6000, rnd)]
    _new_bytes(enc, pieces, {"items": items})
    items[-2], items[-1] = items[-2] + "a\n", items[-1] + "b\n"
    _new_bytes(enc, pieces, {"items": items})
    items[-2], items[-1] = items[-2] + "c\n", items[-1] + "d\n"
    assert _new_bytes(enc, pieces, {"items": items}) < 40_000


def test_a_writer_keeps_a_bounded_amount_of_text() -> None:
    """Texts no longer in the state are forgotten past a bound of bytes (a writer's
    memory does not grow with every long string a run ever held)."""
    from inspector.codec import encoder
    rnd = random.Random(13)
    enc, pieces = PieceEncoder(), {}
    saved = encoder.TEXT_KEEP
    encoder.TEXT_KEEP = 200_000
    try:
        for step in range(30):
            _new_bytes(enc, pieces, {"items": [f"item {i}" for i in range(20)] + [_prose(400, rnd) + str(step)]})
            assert enc._text_bytes <= 200_000 and len(enc._texts) <= 10
    finally:
        encoder.TEXT_KEEP = saved


def test_a_fork_shares_the_long_texts_it_did_not_edit(tmp_path: Path) -> None:
    """The Fork dialog says what is not edited is shared by reference: so are text pieces (a
    fresh encoder would have stored each text whole once more), at the top and nested."""
    from inspector.codec import digest_of, pack
    rnd = random.Random(7)
    doc, note, readme = _prose(6000, rnd), _prose(2000, rnd), _prose(2000, rnd)
    files = {f"src/module_{i}.py": f"# module {i}\n" for i in range(100)}      # a chunked map
    path = tmp_path / "texts.db"
    with Checkpointer(path, name="doc", heartbeat=60) as cp:
        for step in range(3):
            doc, note, readme = doc + f"line {step}\n", note + f"note {step}\n", readme + f"more {step}\n"
            files["README.md"] = readme
            cp.save({"doc": doc, "notes": {"today": note, "n": step}, "files": dict(files), "step": step},
                    force=True)
        run = cp.run_id

    before = blob_bytes(path)
    source_root, root = _fork_with_its_state(path, f"{run}:2")
    assert unpack(root)["doc"] == unpack(source_root)["doc"]
    assert type(unpack(store_raw(path, unpack(root)["doc"].digest))) is ChunkedText
    assert blob_bytes(path) - before < 2_000, "only the new root and the small map that changed"
    assert digest_of(pack(doc)) != unpack(root)["doc"].digest


def test_a_fork_shares_the_texts_in_the_items_of_a_long_list(tmp_path: Path) -> None:
    """A fork's fresh writer finds the text pieces of a long list's items by their ends (the
    items have no path) once they are adopted from the source's chunks and sub-tables."""
    rnd = random.Random(14)
    records = [{"path": f"notes/{i}.md", "body": f"note {i}\n"} for i in range(3000)]   # a table of sub-tables
    records[2500]["body"] = _prose(6000, rnd)
    path = tmp_path / "texts.db"
    with Checkpointer(path, name="doc", heartbeat=60) as cp:
        for step in range(3):
            records[2500] = {**records[2500], "body": records[2500]["body"] + f"line {step}\n"}
            cp.save({"records": list(records), "step": step}, force=True)
        run = cp.run_id

    before = blob_bytes(path)
    _, root = _fork_with_its_state(path, f"{run}:2")
    with open_store(path) as store:
        pieces = {d: store.read_raw_pieces([d])[d] for d in _all_digests(path)}
    assert _stored_as(pieces, unpack(root)) == [ChunkedText]
    assert blob_bytes(path) - before < 2_000, "the fork's root only: the list's chunks and the text are the source's"


def _fork_with_its_state(path: Path, ref: str) -> tuple[bytes, bytes]:
    """Fork checkpoint ``ref`` with its state but for its step; the raw root pieces of the
    source and of the fork (whose state is checked)."""
    from inspector.resume.fork import fork as fork_run
    with open_store(path, readonly=False) as store:
        source = store.load(ref)
        forked = fork_run(store, ref, reason="try another step", state={**source.state, "step": 99}).id
    with open_store(path) as store:
        assert store.load(f"{forked}:0").state == {**source.state, "step": 99}
        (root,) = store.read_raw_pieces([store.load(f"{forked}:0").info.state_hash]).values()
        (source_root,) = store.read_raw_pieces([source.info.state_hash]).values()
    return source_root, root


def _all_digests(path: Path) -> list[bytes]:
    with sqlite3.connect(path) as conn:
        return [d for (d,) in conn.execute("SELECT hash FROM ci_blobs")]


def store_raw(path: Path, digest: bytes) -> bytes:
    with open_store(path) as store:
        return store.read_raw_pieces([digest])[digest]


def test_a_resumed_run_shares_its_restored_texts_and_cuts_the_next_edit(tmp_path: Path) -> None:
    """A resumed writer starts with nothing seen: it stored every long text whole again at the
    resume checkpoint, and once more when next edited. Now it shares them, and an edit after the
    resume is cut into lines at once."""
    import os
    import socket
    from inspector.record import Handoff
    from inspector.store import create_store
    from inspector.store.native.writer import NativeWriter
    rnd = random.Random(8)
    doc = _prose(6000, rnd)
    path = tmp_path / "texts.db"
    first = Checkpointer(path, name="doc", heartbeat=60)
    for step in range(3):
        doc += f"line {step}\n"
        first.save({"doc": doc, "step": step}, force=True)
    first.finish("failed", "killed")

    store = create_store(path)
    epoch = NativeWriter(store).take_ownership(first.run_id, host=socket.gethostname(), pid=os.getpid())
    before = blob_bytes(path)
    second = Checkpointer(path, heartbeat=60, handoff=Handoff(str(path), first.run_id, f"{first.run_id}:2", epoch))
    assert second.restored_state == {"doc": doc, "step": 2}
    after_resume = blob_bytes(path)
    second.save({"doc": doc + "after the resume\n", "step": 3}, force=True)
    second.finish()
    store.close()
    assert after_resume - before < 2_000, "the resume checkpoint shares the stored text"
    assert blob_bytes(path) - after_resume < 60_000, "the first edit after it is cut into lines, not stored whole"
    with open_store(path) as ro:
        assert ro.load(f"{first.run_id}:-1").state == {"doc": doc + "after the resume\n", "step": 3}

"""Run inside an environment with ``google-adk[db]`` (see write_stores.py): write ADK sessions
whose events hold more than text — an image, files, a thought, code and its result, errors.

A scripted fake model answers (no network); the real Runner writes the events through
SqliteSessionService and DatabaseSessionService (SQLite URL). What ADK's own API reads back
(``get_session``: each event's parts, error and ``is_final_response()``) goes to
``adk_parts_oracle.json``, what the tests compare the conversation with.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.genai import types

IMAGE = b"\x89PNG\r\n\x1a\n" + bytes(12 * 1024 - 8)    # 12 KB: a placeholder must say so, never show it
SESSIONS = {   # session → what the user sends, turn by turn (a text, or parts)
    "s-media": [[types.Part(inline_data=types.Blob(mime_type="image/png", data=IMAGE))],
                [types.Part(text="summarise these notes"),
                 types.Part(file_data=types.FileData(file_uri="gs://desk/notes.txt", mime_type="text/plain"))],
                "compute six times seven",
                "and once more"],
    "s-recovered": ["hello", "hello again"],
}


def _part(text: str, **kw) -> types.Part:
    return types.Part(text=text, **kw)


class ScriptedModel(BaseLlm):
    """Answers by what the last user message holds: thoughts for an image, a file for notes,
    code for a sum, a quota error for a repeat, an overload error for the first greeting."""

    model: str = "scripted-model"

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        parts = llm_request.contents[-1].parts or []
        said = " ".join(p.text for p in parts if p.text)
        if any(p.inline_data for p in parts):
            reply = [_part("a small picture, mostly black", thought=True), _part("It is a dark square.")]
        elif any(p.file_data for p in parts):
            reply = [_part("Here is the summary."),
                     types.Part(file_data=types.FileData(file_uri="gs://desk/summary.pdf",
                                                         mime_type="application/pdf", display_name="summary.pdf"))]
        elif "compute" in said:
            reply = [types.Part(executable_code=types.ExecutableCode(code="print(6 * 7)", language="PYTHON")),
                     types.Part(code_execution_result=types.CodeExecutionResult(outcome="OUTCOME_OK", output="42\n")),
                     _part("It is 42.")]
        elif said in ("and once more", "hello"):
            code, message = ("RESOURCE_EXHAUSTED", "quota 💥") if said != "hello" else ("UNAVAILABLE", "overloaded")
            yield LlmResponse(error_code=code, error_message=message)
            return
        else:
            reply = [_part(f"You said: {said}")]
        yield LlmResponse(content=types.Content(role="model", parts=reply))


async def converse(service, session_id: str, turns: list) -> None:
    agent = LlmAgent(name="studio_helper", model=ScriptedModel(), instruction="Help.")
    runner = Runner(app_name="studio", agent=agent, session_service=service)
    await service.create_session(app_name="studio", user_id="ana", session_id=session_id)
    for turn in turns:
        parts = [types.Part(text=turn)] if isinstance(turn, str) else turn
        async for _event in runner.run_async(user_id="ana", session_id=session_id,
                                             new_message=types.Content(role="user", parts=parts)):
            pass


def described(part: types.Part) -> dict:
    """A part as ADK's API reads it (bytes as their count)."""
    if part.function_call or part.function_response:
        return {"function": (part.function_call or part.function_response).name}
    if part.text is not None:
        return {"thought" if part.thought else "text": part.text}
    if part.inline_data:
        blob = part.inline_data
        return {"inline_data": {"mime_type": blob.mime_type, "size": len(blob.data or b""),
                                "display_name": blob.display_name}}
    if part.file_data:
        f = part.file_data
        return {"file_data": {"file_uri": f.file_uri, "mime_type": f.mime_type, "display_name": f.display_name}}
    if part.executable_code:
        return {"executable_code": {"language": part.executable_code.language.value,
                                    "code": part.executable_code.code}}
    if part.code_execution_result:
        result = part.code_execution_result
        return {"code_execution_result": {"outcome": result.outcome.value, "output": result.output}}
    return {"other": part.model_dump(exclude_none=True)}


async def oracle(service) -> dict:
    out = {}
    for session_id in SESSIONS:
        session = await service.get_session(app_name="studio", user_id="ana", session_id=session_id)
        out[session_id] = [{"author": e.author, "invocation_id": e.invocation_id, "error_code": e.error_code,
                            "error_message": e.error_message, "final": e.is_final_response(),
                            "parts": [described(p) for p in (e.content.parts or [] if e.content else [])]}
                           for e in session.events]
    return out


async def main(out: Path) -> None:
    from google.adk.sessions.database_session_service import DatabaseSessionService
    from google.adk.sessions.sqlite_session_service import SqliteSessionService
    out.mkdir(parents=True, exist_ok=True)
    found = {}
    for name, make in (("adk_parts_sqlite.db", lambda p: SqliteSessionService(str(p))),
                       ("adk_parts_database.db", lambda p: DatabaseSessionService(f"sqlite+aiosqlite:///{p}"))):
        path = out / name
        path.unlink(missing_ok=True)
        service = make(path)
        for session_id, turns in SESSIONS.items():
            await converse(service, session_id, turns)
        found[name] = await oracle(service)
        if hasattr(service, "db_engine"):
            await service.db_engine.dispose()
    (out / "adk_parts_oracle.json").write_text(json.dumps(found, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))

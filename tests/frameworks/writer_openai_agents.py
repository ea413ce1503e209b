"""Run inside an environment with ``openai-agents`` (see write_stores.py): write its session stores.

A scripted fake model answers (no network); the real Runner writes the items through the real
SQLiteSession, AdvancedSQLiteSession (turns, usage, a branch) and SQLAlchemySession.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText


@function_tool
def lookup_weather(city: str) -> str:
    """Weather in a city (canned)."""
    return f"{city}: 18 C and clear"


def _message(text: str, n: int) -> ResponseOutputMessage:
    return ResponseOutputMessage(id=f"msg_{n}", type="message", role="assistant", status="completed",
                                 content=[ResponseOutputText(type="output_text", text=text, annotations=[])])


class ScriptedModel(Model):
    """Answers: a tool call when the last input is a user question about weather, else text."""

    def __init__(self) -> None:
        self.n = 0

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema,
                           handoffs, tracing, **_kw) -> ModelResponse:
        self.n += 1
        last = input[-1] if isinstance(input, list) and input else {"content": input}
        usage = Usage(requests=1, input_tokens=40 + self.n, output_tokens=10 + self.n,
                      total_tokens=50 + 2 * self.n)
        text = str(last.get("content", "")) if isinstance(last, dict) else ""
        if isinstance(last, dict) and last.get("role") == "user" and "weather" in text.lower():
            call = ResponseFunctionToolCall(id=f"fc_{self.n}", call_id=f"call_{self.n}", type="function_call",
                                            name="lookup_weather", arguments=json.dumps({"city": "Lisbon"}),
                                            status="completed")
            return ModelResponse(output=[call], usage=usage, response_id=None)
        if isinstance(last, dict) and last.get("type") == "function_call_output":
            return ModelResponse(output=[_message(f"It is {last.get('output')}.", self.n)], usage=usage,
                                 response_id=None)
        return ModelResponse(output=[_message(f"Answer {self.n}: noted ({text[:30]}).", self.n)],
                             usage=usage, response_id=None)

    def stream_response(self, *args, **kwargs):  # pragma: no cover - not used
        raise NotImplementedError


def agent() -> Agent:
    return Agent(name="Travel helper", instructions="Help with travel.", model=ScriptedModel(),
                 tools=[lookup_weather])


async def plain(out: Path) -> None:
    from agents import SQLiteSession
    path = out / "agents_sqlite.db"
    path.unlink(missing_ok=True)
    for sid, questions in (("trip-lisbon", ["What's the weather in Lisbon?", "Pack list please"]),
                           ("quick-chat", ["Hello there"])):
        session = SQLiteSession(sid, str(path))
        a = agent()
        for q in questions:
            await Runner.run(a, q, session=session)
        session.close()


async def advanced(out: Path) -> None:
    from agents.extensions.memory import AdvancedSQLiteSession
    path = out / "agents_advanced.db"
    path.unlink(missing_ok=True)
    session = AdvancedSQLiteSession(session_id="planner", db_path=str(path), create_tables=True)
    a = agent()
    for q in ["What's the weather in Lisbon?", "Book a table for two", "Suggest a museum"]:
        result = await Runner.run(a, q, session=session)
        await session.store_run_usage(result)
    branch = await session.create_branch_from_turn(2, "retry-booking")
    assert branch == "retry-booking"
    result = await Runner.run(a, "Book a table for four instead", session=session)
    await session.store_run_usage(result)
    session.close()


async def alchemy(out: Path) -> None:
    from agents.extensions.memory import SQLAlchemySession
    path = out / "agents_sqlalchemy.db"
    path.unlink(missing_ok=True)
    session = SQLAlchemySession.from_url("notes", url=f"sqlite+aiosqlite:///{path}", create_tables=True)
    a = agent()
    for q in ["Remember: flight at 9", "What's the weather in Lisbon?"]:
        await Runner.run(a, q, session=session)
    await session.engine.dispose()


async def alchemy_postgres(url: str) -> None:
    """SQLAlchemySession on PostgreSQL (the driver dumps the database as SQL afterwards)."""
    from agents.extensions.memory import SQLAlchemySession
    a = agent()
    for sid, questions in (("pg-trip", ["What's the weather in Lisbon?", "Thanks"]), ("pg-hello", ["Hello"])):
        session = SQLAlchemySession.from_url(sid, url=url, create_tables=True)
        for q in questions:
            await Runner.run(a, q, session=session)
        await session.engine.dispose()


async def others(out: Path) -> None:
    """AsyncSQLiteSession (same tables) and EncryptedSession over a SQLiteSession (items encrypted)."""
    from agents import SQLiteSession
    from agents.extensions.memory import AsyncSQLiteSession, EncryptedSession
    path = out / "agents_async_encrypted.db"
    path.unlink(missing_ok=True)
    session = AsyncSQLiteSession("async-chat", db_path=str(path))
    await Runner.run(agent(), "Hello from the async session", session=session)
    await session.close()
    inner = SQLiteSession("secret-chat", str(path))
    secret = EncryptedSession("secret-chat", underlying_session=inner,
                              encryption_key="a-test-key-with-enough-entropy-0123456789")
    await Runner.run(agent(), "My passport number is X123", session=secret)
    inner.close()


async def main(out: Path) -> None:
    set_tracing_disabled(True)
    out.mkdir(parents=True, exist_ok=True)
    await plain(out)
    await advanced(out)
    await alchemy(out)
    await others(out)
    if os.environ.get("FIXTURE_PG_URL"):
        await alchemy_postgres(os.environ["FIXTURE_PG_URL"])


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))

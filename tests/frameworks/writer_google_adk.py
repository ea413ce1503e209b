"""Run inside an environment with ``google-adk[db]`` (see write_stores.py): write its session stores.

A scripted fake model answers (no network); the real Runner writes sessions and events with
state deltas (session-, user- and app-scoped keys) through SqliteSessionService and
DatabaseSessionService (SQLite URL).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.tools.tool_context import ToolContext
from google.genai import types


def add_to_cart(item: str, tool_context: ToolContext) -> dict:
    """Add an item to the cart (kept in session state), count it per user and per app."""
    cart = list(tool_context.state.get("cart", []))
    cart.append(item)
    tool_context.state["cart"] = cart
    tool_context.state["user:orders"] = tool_context.state.get("user:orders", 0) + 1
    tool_context.state["app:items_sold"] = tool_context.state.get("app:items_sold", 0) + 1
    tool_context.state["temp:last_item"] = item
    return {"status": "added", "cart_size": len(cart)}


class ScriptedModel(BaseLlm):
    """Calls add_to_cart for a user message that says 'add', then answers in text."""

    model: str = "scripted-model"

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1]
        part = last.parts[0] if last.parts else None
        usage = types.GenerateContentResponseUsageMetadata(prompt_token_count=30, candidates_token_count=8,
                                                           total_token_count=38)
        if last.role == "user" and part is not None and part.text and part.text.lower().startswith("add "):
            call = types.FunctionCall(name="add_to_cart", args={"item": part.text[4:].strip()})
            yield LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]),
                              usage_metadata=usage)
            return
        if part is not None and part.function_response is not None:
            text = f"Done: {part.function_response.response}"
        else:
            text = f"You said: {part.text if part is not None else ''}"
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]),
                          usage_metadata=usage)


def agent() -> LlmAgent:
    return LlmAgent(name="shop_assistant", model=ScriptedModel(), instruction="Help the shopper.",
                    tools=[add_to_cart], output_key="last_reply")


async def converse(service, user: str, session_id: str, lines: list[str], initial: dict | None = None) -> None:
    runner = Runner(app_name="shop", agent=agent(), session_service=service)
    await service.create_session(app_name="shop", user_id=user, session_id=session_id, state=initial or {})
    for line in lines:
        message = types.Content(role="user", parts=[types.Part(text=line)])
        async for _event in runner.run_async(user_id=user, session_id=session_id, new_message=message):
            pass


async def write(service) -> None:
    await converse(service, "ana", "s-groceries", ["add apples", "add pears", "thanks"], {"budget": 20})
    await converse(service, "ana", "s-quick", ["hello"])
    await converse(service, "ben", "s-ben", ["add bread"])


async def main(out: Path) -> None:
    from google.adk.sessions.database_session_service import DatabaseSessionService
    from google.adk.sessions.sqlite_session_service import SqliteSessionService
    out.mkdir(parents=True, exist_ok=True)
    lite = out / "adk_sqlite.db"
    lite.unlink(missing_ok=True)
    await write(SqliteSessionService(str(lite)))
    db = out / "adk_database.db"
    db.unlink(missing_ok=True)
    service = DatabaseSessionService(f"sqlite+aiosqlite:///{db}")
    await write(service)
    await service.db_engine.dispose()
    await legacy_v0(out / "adk_database_v0.db")
    if os.environ.get("FIXTURE_PG_URL"):   # DatabaseSessionService on PostgreSQL (dumped as SQL)
        service = DatabaseSessionService(os.environ["FIXTURE_PG_URL"])
        await write(service)
        await service.db_engine.dispose()


async def legacy_v0(path: Path) -> None:
    """A database made with ADK's v0 schema (older ADK releases; ADK still writes to one it finds):
    ``actions`` are pickled there."""
    import sqlalchemy as sa
    from google.adk.sessions.database_session_service import DatabaseSessionService
    from google.adk.sessions.schemas.v0 import Base as BaseV0
    path.unlink(missing_ok=True)
    engine = sa.create_engine(f"sqlite:///{path}")
    BaseV0.metadata.create_all(engine)
    engine.dispose()
    service = DatabaseSessionService(f"sqlite+aiosqlite:///{path}")
    await converse(service, "ana", "s-legacy", ["add plums", "thanks"], {"budget": 5})
    await service.db_engine.dispose()


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))

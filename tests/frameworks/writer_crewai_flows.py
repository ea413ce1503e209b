"""Run inside an environment with ``crewai`` (see write_stores.py): write flow persistence stores.

Real Flows of plain methods (no LLM) persist their state through crewai's ``@persist`` with
``SQLiteFlowPersistence``: a structured (pydantic) state persisted after every method, resumed
once by ``kickoff(inputs={"id": …})`` (crewai restores the latest saved state and goes on); a
dict state persisted by one method only; a flow paused for human feedback (its provider defers,
so crewai saves the state with a ``pending_feedback`` row); and, in a second file, a flow persisting next to the
SQLite checkpoint provider's table of a real crew (both CrewAI tables in one file). After every
save, ``load_state`` (crewai's own reader) is asked for the flow's state: the answers are kept in
``crewai_flows_oracle.json``, what the tests compare every checkpoint's state with.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")

from crewai.flow import HumanFeedbackPending, human_feedback
from crewai.flow.flow import Flow, listen, start
from crewai.flow.persistence import SQLiteFlowPersistence, persist
from pydantic import BaseModel

ORACLE: dict[str, dict[str, list]] = {}


class Recorded(SQLiteFlowPersistence):
    """crewai's SQLite persistence; after each save, what crewai's ``load_state`` reads back."""

    def save_state(self, flow_uuid: str, method_name: str, state_data: Any) -> None:
        super().save_state(flow_uuid, method_name, state_data)
        self._record(flow_uuid, method_name)

    def save_pending_feedback(self, flow_uuid: str, context: Any, state_data: Any) -> None:
        super().save_pending_feedback(flow_uuid, context, state_data)
        self._record(flow_uuid, context.method_name)

    def _record(self, flow_uuid: str, method_name: str) -> None:
        ORACLE.setdefault(Path(self.db_path).name, {}).setdefault(flow_uuid, []).append(
            [method_name, self.load_state(flow_uuid)])


class Article(BaseModel):
    id: str = ""
    topic: str = ""
    facts: list[str] = []
    outline: dict[str, Any] = {}
    words: int = 0
    note: str = ""


def article_flow(persistence: SQLiteFlowPersistence) -> type[Flow]:
    @persist(persistence)
    class ArticleFlow(Flow[Article]):
        @start()
        def research(self) -> None:
            self.state.facts = [f"{self.state.topic} fact {n}" for n in range(1, 4)]
            self.state.note = "Olá 🌍 — 日本"

        @listen(research)
        def outline(self) -> None:
            self.state.outline = {"sections": ["intro", "body", "end"], "depth": {"intro": 1, "body": 3}}

        @listen(outline)
        def draft(self) -> None:
            self.state.words += 120 * len(self.state.facts)

    return ArticleFlow


def tally_flow(persistence: SQLiteFlowPersistence) -> type[Flow]:
    class TallyFlow(Flow[dict]):
        @start()
        def count(self) -> None:
            self.state["seen"] = self.state.get("seen", 0) + 3

        @listen(count)
        @persist(persistence)
        def total(self) -> None:
            self.state["total"] = self.state["seen"] * 2
            self.state["tags"] = ["a", "b"]

    return TallyFlow


class Later:
    """A feedback provider that defers: the flow pauses until someone answers."""

    def request_feedback(self, context: Any, flow: Any) -> str:
        raise HumanFeedbackPending(context=context)


def review_flow(persistence: SQLiteFlowPersistence) -> type[Flow]:
    @persist(persistence)
    class ReviewFlow(Flow[Article]):
        @start()
        def research(self) -> None:
            self.state.facts = ["draft fact"]

        @listen(research)
        @human_feedback(message="Are the facts right?", provider=Later())
        def review(self) -> str:
            return "facts ready for review"

    return ReviewFlow


def flows_store(out: Path) -> None:
    path = out / "crewai_flows.db"
    path.unlink(missing_ok=True)
    persistence = Recorded(str(path))
    flow_cls = article_flow(persistence)
    first = flow_cls()
    first.kickoff(inputs={"topic": "tides"})
    again = flow_cls()   # crewai restores the saved state of that id, then runs the flow on it
    again.kickoff(inputs={"id": first.state.id, "topic": "tides"})
    flow_cls().kickoff(inputs={"topic": "glaciers"})
    tally_flow(persistence)().kickoff()
    paused = review_flow(persistence)().kickoff(inputs={"topic": "review"})
    assert isinstance(paused, HumanFeedbackPending), paused


def both_store(out: Path) -> bool:
    """The checkpoint provider's table of a real crew and a flow's states in one file."""
    try:
        import pysqlite3.dbapi2 as newer_sqlite
    except ImportError:
        return False
    from crewai.state.checkpoint_config import CheckpointConfig
    from crewai.state.provider import sqlite_provider
    from crewai.state.provider.sqlite_provider import SqliteProvider
    from writer_crewai import crew
    sqlite_provider.sqlite3 = newer_sqlite
    path = out / "crewai_both.db"
    path.unlink(missing_ok=True)
    crew(CheckpointConfig(location=str(path), provider=SqliteProvider(), on_events=["task_completed"])
         ).kickoff(inputs={"topic": "reefs"})
    article_flow(Recorded(str(path)))().kickoff(inputs={"topic": "reefs"})
    return True


if __name__ == "__main__":
    target = Path(sys.argv[1])
    target.mkdir(parents=True, exist_ok=True)
    flows_store(target)
    print("both tables:", "written" if both_store(target) else "skipped (no SQLite >= 3.45)")
    (target / "crewai_flows_oracle.json").write_text(json.dumps(ORACLE, indent=1, ensure_ascii=False) + "\n")

"""Run inside an environment with ``crewai`` (see write_stores.py): write its checkpoint stores.

A fake LLM answers (no network). The real crew writes JSON checkpoints (a folder per branch,
forked once through ``Crew.fork``) and, when a SQLite ≥ 3.45 is importable as ``pysqlite3``
(Python's own here is 3.40, too old for ``jsonb()``), the real SQLite provider's table.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")

from crewai import Agent, Crew, Process, Task
from crewai.llms.base_llm import BaseLLM
from crewai.state.checkpoint_config import CheckpointConfig


class FakeLLM(BaseLLM):
    """Answers every call with a final answer naming the call's number (no network)."""

    calls: int = 0

    def call(self, messages: Any, tools: Any = None, callbacks: Any = None, available_functions: Any = None,
             from_task: Any = None, from_agent: Any = None, response_model: Any = None) -> str:
        self.calls += 1
        topic = getattr(from_task, "name", None) or "the task"
        return f"Thought: I now know the final answer\nFinal Answer: Result {self.calls} for {topic}."

    def supports_function_calling(self) -> bool:
        return False

    def get_context_window_size(self) -> int:
        return 8192


def crew(checkpoint: CheckpointConfig) -> Crew:
    llm = FakeLLM(model="fake-model")
    researcher = Agent(role="Researcher", goal="Find facts", backstory="Careful.", llm=llm)
    writer = Agent(role="Writer", goal="Write it up", backstory="Clear.", llm=llm)
    tasks = [Task(name="research", description="List three facts about {topic}.", expected_output="Three facts",
                  agent=researcher),
             Task(name="outline", description="Outline an article on {topic}.", expected_output="An outline",
                  agent=writer),
             Task(name="draft", description="Draft the article on {topic}.", expected_output="A draft",
                  agent=writer)]
    return Crew(agents=[researcher, writer], tasks=tasks, process=Process.sequential, checkpoint=checkpoint)


def first_checkpoint(folder: Path) -> Path:
    """The branch's first snapshot: the one without a parent (file names sort by time, not order)."""
    return next(f for f in sorted((folder / "main").glob("*.json")) if f.stem.endswith("_p-none"))


def json_store(out: Path) -> None:
    location = out / "crewai_json"
    if location.exists():
        for f in sorted(location.rglob("*"), reverse=True):
            f.unlink() if f.is_file() else f.rmdir()
    config = CheckpointConfig(location=str(location), on_events=["task_completed"])
    crew(config).kickoff(inputs={"topic": "tides"})
    restore = first_checkpoint(location)
    forked = Crew.fork(CheckpointConfig(location=str(location), restore_from=str(restore),
                                        on_events=["task_completed"]), branch="retry-outline")
    for agent in forked.agents:   # a restored crew gets a default LLM back: keep it offline
        agent.llm = FakeLLM(model="fake-model")
    forked.kickoff()


def sqlite_store(out: Path) -> bool:
    try:
        import pysqlite3.dbapi2 as newer_sqlite
    except ImportError:
        return False
    from crewai.state.provider import sqlite_provider
    from crewai.state.provider.sqlite_provider import SqliteProvider
    sqlite_provider.sqlite3 = newer_sqlite  # the provider's own code, on a SQLite with jsonb()
    path = out / "crewai_checkpoints.db"
    path.unlink(missing_ok=True)
    config = CheckpointConfig(location=str(path), provider=SqliteProvider(), on_events=["task_completed"])
    crew(config).kickoff(inputs={"topic": "glaciers"})
    with newer_sqlite.connect(str(path)) as conn:
        first = conn.execute("SELECT id FROM checkpoints ORDER BY rowid LIMIT 1").fetchone()[0]
    forked = Crew.fork(CheckpointConfig(location=str(path), provider=SqliteProvider(),
                                        restore_from=f"{path}#{first}", on_events=["task_completed"]),
                       branch="retry-outline")
    for agent in forked.agents:
        agent.llm = FakeLLM(model="fake-model")
    forked.kickoff()
    with newer_sqlite.connect(str(path)) as conn:
        conn.execute("PRAGMA journal_mode=DELETE")
    return True


if __name__ == "__main__":
    target = Path(sys.argv[1])
    target.mkdir(parents=True, exist_ok=True)
    json_store(target)
    print("sqlite provider:", "written" if sqlite_store(target) else "skipped (no SQLite >= 3.45)")

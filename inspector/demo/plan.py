"""The demo agent's deterministic plan: tasks, simulated LLM steps and real local tools."""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable

TOPICS = ("solar microgrids", "urban beekeeping", "tidal energy", "soil carbon", "heat pumps",
          "river restoration", "vertical farming", "e-bike logistics")
SOURCES = ("field survey 2024", "national statistics office", "peer-reviewed meta-study",
           "industry white paper", "municipal pilot report", "NGO interview notes")

TASKS = [
    ("research", "Research sources"),
    ("outline", "Outline the report"),
    ("draft", "Draft the report"),
    ("budget", "Estimate the budget"),
    ("review", "Editorial review"),
    ("revise", "Revise after review"),
    ("publish", "Publish the report"),
]


@dataclass(frozen=True)
class Step:
    """One unit of work: a simulated LLM call or a real tool call, then a checkpoint."""

    kind: str          # "llm" | "tool"
    name: str
    task: str
    run: Callable[[dict, dict, Tools], None]


class Tools:
    """Real, local, deterministic tools working in a workspace folder."""

    def __init__(self, workspace: Path, seed: int) -> None:
        self.workspace = workspace
        self.seed = seed
        workspace.mkdir(parents=True, exist_ok=True)

    def write_file(self, name: str, text: str) -> dict:
        """Write a file in the workspace; return its size and digest."""
        path = self.workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        with (self.workspace / "actions.log").open("a", encoding="utf-8") as log:
            log.write(f"write {name}\n")
        return {"bytes": len(text.encode()), "sha1": hashlib.sha1(text.encode()).hexdigest()[:12]}

    def read_file(self, name: str) -> str:
        """Read a workspace file ('' when absent)."""
        path = self.workspace / name
        return path.read_text(encoding="utf-8") if path.exists() else ""

    @staticmethod
    def calculator(expression: str) -> float:
        """Evaluate + - * / ( ) on numbers only (no eval of names)."""
        if not re.fullmatch(r"[0-9+\-*/(). ]+", expression):
            raise ValueError(f"calculator only accepts arithmetic, not {expression!r}")
        tokens = re.findall(r"\d+\.?\d*|[+\-*/()]", expression)
        return _Arith(tokens).parse()

    @staticmethod
    def word_count(text: str) -> int:
        """Words in a text."""
        return len(text.split())


class _Arith:
    """A tiny recursive-descent parser for the calculator tool."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens, self.pos = tokens, 0

    def _peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _take(self) -> str:
        tok = self.tokens[self.pos]
        self.pos += 1
        return tok

    def parse(self) -> float:
        value = self._expr()
        if self._peek() is not None:
            raise ValueError("unexpected token in expression")
        return value

    def _expr(self) -> float:
        value = self._term()
        while self._peek() in ("+", "-"):
            value = value + self._term() if self._take() == "+" else value - self._term()
        return value

    def _term(self) -> float:
        value = self._atom()
        while self._peek() in ("*", "/"):
            value = value * self._atom() if self._take() == "*" else value / self._atom()
        return value

    def _atom(self) -> float:
        tok = self._take()
        if tok == "(":
            value = self._expr()
            self._take()
            return value
        if tok == "-":
            return -self._atom()
        return float(tok)


def rng(state: dict, salt: str) -> random.Random:
    """A random generator fixed by the run's seed, the step number and a salt."""
    return random.Random(f"{state['seed']}:{state['step']}:{salt}")


def say(state: dict, role: str, content: str, **extra: object) -> None:
    """Append a chat message to the state."""
    state["messages"].append({"role": role, "content": content, **extra})


def sentence(r: random.Random, topic: str) -> str:
    """A deterministic filler sentence about the topic."""
    verbs = ("reduces", "improves", "complicates", "reshapes", "accelerates", "stabilises")
    objs = ("local costs", "grid resilience", "community uptake", "maintenance needs",
            "seasonal demand", "permitting timelines", "supply chains")
    return f"{topic.capitalize()} {r.choice(verbs)} {r.choice(objs)} by {r.randint(3, 40)}%."

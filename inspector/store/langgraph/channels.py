"""A graph's channels as the user's graph reports them (``graph_runner --action channels``).

Without the graph, whether a channel is a reducer is inferred from the thread's own writes
(``reducers``); with it, each channel's kind is known: ``last`` (``LastValue``), ``reducer``
(``BinaryOperatorAggregate``: operator ``add``, ``or``, ``messages`` or ``custom``), ``topic``
(``Topic``, ``accumulate`` or emptied every step), ``ephemeral`` (``EphemeralValue``: cleared
at the next step), ``barrier``, ``untracked`` or ``other``; and its empty value, which
``get_state`` shows for a reducer never written (``[]`` for ``Annotated[list, add]``, ``0``
for ``Annotated[int, max]``). Subgraphs are keyed by their node path (``review``,
``review|inner``), which a checkpoint namespace (``review:TASK|inner:TASK``) maps to.

The report comes from the runner's stdout, so it is checked here and never trusted further
than a value of known shape: anything else is a ``ValueError``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

KINDS = frozenset({"last", "reducer", "topic", "ephemeral", "barrier", "untracked", "other"})
OPERATORS = frozenset({"add", "or", "messages", "custom"})
MAX_REPORT_CHARS = 4_000_000


@dataclass(frozen=True)
class ChannelKind:
    """How one channel combines writes; ``empty`` is meaningful only when ``has_empty``."""

    kind: str
    operator: str | None = None
    operator_name: str | None = None
    has_empty: bool = False
    empty: Any = None
    accumulate: bool = False

    @property
    def label(self) -> str:
        """Short words for the user: ``reducer operator.add``, ``last value``, ``topic``…"""
        if self.kind == "reducer":
            return f"reducer {self.operator_name or self.operator or ''}".strip()
        return {"last": "last value", "topic": "topic (accumulating)" if self.accumulate else "topic"}.get(
            self.kind, self.kind)


# the pending writes of channels with a custom reducer: channel → (stored?, stored value, the
# finished tasks' writes in order), all in display form
CustomWrites = Mapping[str, tuple[bool, Any, list[Any]]]
# what combines them with the graph's own reducers (in the graph's runner, never in this process;
# the resume layer injects it): (thread, namespace, checkpoint id, writes) → channel → (True, the
# combined value in display form) or (False, why it could not); StoreError when the graph cannot
Combiner = Callable[[str, str, str, CustomWrites], Mapping[str, tuple[bool, Any]]]

INFERRED_REDUCER = ChannelKind("reducer")   # proven by the thread's writes; operator by the value's type
INFERRED_LAST = ChannelKind("last")


@dataclass(frozen=True)
class GraphChannels:
    """Channel kinds of a graph and its subgraphs, and the output channels ``get_state`` shows."""

    graph: str
    graphs: Mapping[str, Mapping[str, ChannelKind]]
    outputs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def graph_key(self, ns: str) -> str:
        """The subgraph path of a checkpoint namespace (``a:T1|b:T2`` → ``a|b``)."""
        return "|".join(part.split(":", 1)[0] for part in ns.split("|")) if ns else ""

    def kinds(self, ns: str) -> Mapping[str, ChannelKind] | None:
        """The channels of the (sub)graph that writes namespace ``ns`` (None: not in this graph)."""
        return self.graphs.get(self.graph_key(ns))

    def output(self, ns: str) -> tuple[str, ...]:
        """The channels ``get_state`` shows for namespace ``ns``."""
        return self.outputs.get(self.graph_key(ns), ())


def _kind(raw: Any) -> ChannelKind:
    if not isinstance(raw, dict) or raw.get("kind") not in KINDS:
        raise ValueError("a channel without a known kind")
    operator = raw.get("operator")
    if operator is not None and operator not in OPERATORS:
        raise ValueError(f"an unknown reducer operator {operator!r}")
    name = raw.get("operator_name")
    return ChannelKind(raw["kind"], operator, name if isinstance(name, str) else None, "empty" in raw,
                       raw.get("empty"), raw.get("accumulate") is True)


def parse_report(graph: str, data: Any) -> GraphChannels:
    """The runner's ``channels`` answer (a parsed JSON object) as ``GraphChannels``."""
    graphs = data.get("graphs") if isinstance(data, dict) else None
    if not isinstance(graphs, dict) or "" not in graphs:
        raise ValueError("the channels report has no graph")
    kinds: dict[str, dict[str, ChannelKind]] = {}
    outputs: dict[str, tuple[str, ...]] = {}
    for key, entry in graphs.items():
        channels = entry.get("channels") if isinstance(entry, dict) else None
        if not isinstance(key, str) or not isinstance(channels, dict):
            raise ValueError("a graph of the channels report has no channels")
        kinds[key] = {str(name): _kind(raw) for name, raw in channels.items()}
        output = entry.get("output")
        outputs[key] = tuple(str(c) for c in output) if isinstance(output, list) else tuple(kinds[key])
    return GraphChannels(graph, kinds, outputs)


def parse_line(graph: str, text: str) -> tuple[GraphChannels, dict]:
    """``GraphChannels`` and the raw report from the runner's ``channels JSON`` stdout line."""
    if len(text) > MAX_REPORT_CHARS:
        raise ValueError("the channels report is too large")
    report = json.loads(text.removeprefix("channels "))
    return parse_report(graph, report), report

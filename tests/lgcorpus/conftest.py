"""Fixtures of the corpus tests: the graphs' channel kinds. The corpus itself (``corpus_sqlite``,
``corpus_pg`` and their copies) is in ``fixtures``, shared by the whole suite."""

from __future__ import annotations

import json
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from inspector.resume.graph_channels import GraphCombiner
    from inspector.store.langgraph.channels import GraphChannels

REPO = str(Path(__file__).resolve().parents[2])


@pytest.fixture(scope="session")
def graph_kinds() -> Callable[[str], GraphChannels]:
    """``graph_kinds(scenario name)``: the channel kinds the scenario's graph reports — the
    runner's own ``channels_report`` and the inspector's ``parse_report``, called in this process
    (the tests import the corpus graphs anyway; ``tests/resume/test_graph_channels.py`` runs the
    real runner subprocess and its cache), once per session."""
    from inspector.store.langgraph.channels import parse_report
    from inspector.store.langgraph.graph_runner import channels_report, load_graph

    from . import BY_NAME
    found: dict[str, GraphChannels] = {}

    def kinds(name: str) -> GraphChannels:
        if name not in found:
            spec = BY_NAME[name].graph
            found[name] = parse_report(spec, json.loads(json.dumps(channels_report(load_graph(spec, None), spec,
                                                                                     [REPO]))))
        return found[name]
    return kinds


@pytest.fixture(scope="session")
def graph_combiner(graph_kinds: Callable[[str], GraphChannels]) -> Callable[[str], GraphCombiner]:
    """``graph_combiner(scenario name)``: what ``attach`` gives a store for the scenario's graph
    (set as ``module:attr`` with the repository as working directory): the graph's custom
    reducers run in the real runner subprocess (``--action combine``), one per scenario and
    session (its answers are cached in memory)."""
    from inspector.resume.graph_channels import GraphCombiner
    from inspector.store.langgraph.settings import GraphSettings

    from . import BY_NAME
    found: dict[str, GraphCombiner] = {}

    def combiner(name: str) -> GraphCombiner:
        if name not in found:
            spec = BY_NAME[name].graph
            found[name] = GraphCombiner(f"corpus:{name}", GraphSettings(graph=spec, cwd=REPO), graph_kinds(name),
                                        {str(Path(REPO) / "tests" / "lgcorpus" / f"{name}.py"): 0})
        return found[name]
    return combiner

"""A value's history compares two LangGraph states on the top-level key of its path alone
(``_Reader.states(x, y, key)``): against the whole states' diff, on every parent → child pair of
every thread of the corpus (every namespace's lanes too) and every key either state holds, the
changes at or inside that key are the same, in the same order."""

from __future__ import annotations

import pytest

from inspector.diff.checkpoints import _Reader
from inspector.store import open_store


def _pairs_checked(target: str) -> int:
    checked = 0
    with open_store(target, readonly=True) as store:
        for run in store.list_runs():
            infos = store.list_checkpoints(run.id)
            by_id = {i.id: i for i in infos}
            reader = _Reader(store, None, None, lazy=True)
            for info in infos:
                parent = by_id.get(info.parent_id)
                if parent is None:
                    continue
                whole = reader.states(parent, info)
                old, new = reader.snapshot(parent).state, reader.snapshot(info).state
                if not (isinstance(old, dict) and isinstance(new, dict)):
                    continue
                assert all(c.path for c in whole)       # (two maps: every change is under a key)
                for key in sorted(set(old) | set(new), key=str):
                    assert reader.states(parent, info, key) == tuple(c for c in whole if c.path[0] == key), \
                        (run.id, info.seq, key)
                checked += 1
    return checked


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def corpus(request: pytest.FixtureRequest) -> str:
    """The corpus written by SqliteSaver, then by PostgresSaver."""
    return str(request.getfixturevalue(f"corpus_{'pg' if request.param == 'postgres' else 'sqlite'}"))


def test_states_compared_on_one_key(corpus: str) -> None:
    assert _pairs_checked(corpus) > 50


_MISSING = object()


def _channel_views_checked(target: str) -> tuple[int, int]:
    """``load_channel_view(id, channel)`` holds the channel as ``load_state_view`` shows it, for
    every checkpoint and every channel of its state (and one it lacks)."""
    checked = narrower = 0
    with open_store(target, readonly=True) as store:
        for run in store.list_runs():
            for info in store.list_checkpoints(run.id):
                whole = store.load_state_view(info.id).state
                if not isinstance(whole, dict):
                    continue
                for channel in [*whole, "no-such-channel"]:
                    one = store.load_channel_view(info.id, channel).state
                    assert one.get(channel, _MISSING) == whole.get(channel, _MISSING), (run.id, info.seq, channel)
                    assert set(one) <= set(whole)
                    checked += 1
                    narrower += set(one) < set(whole)
    return checked, narrower


def test_channel_views(corpus: str) -> None:
    checked, narrower = _channel_views_checked(corpus)
    # SqliteSaver's bodies: the other channels left out (PostgresSaver's blobs are read whole)
    assert checked > 200 and (narrower > 100 or corpus.startswith("postgresql"))


def _ancestors_checked(target: str) -> tuple[int, int]:
    """``LangGraphStore.common_ancestor`` (the thread's parent links alone, and the first
    checkpoint of a subgraph lane's metadata) against the walk over the listings
    (``lineage.ancestry``), for pairs of checkpoints of each thread of the corpus, of one
    namespace or two (branches, forks, replays, subgraph lanes within lanes)."""
    from inspector.diff.lineage import ancestry
    from inspector.store.langgraph.ids import parse_id
    checked = across = 0
    with open_store(target, readonly=True) as store:
        for run in store.list_runs():
            infos = store.list_checkpoints(run.id)[:30]
            for a in infos:
                of_a = ancestry(store, a)
                for b in infos:
                    of_b = {(c.run_id, c.id) for c in ancestry(store, b)}
                    walked = next((c for c in of_a if (c.run_id, c.id) in of_b), None)
                    assert store.common_ancestor(a, b) == walked, (run.id, a.seq, b.seq)
                    checked += walked is not None
                    across += walked is not None and parse_id(str(a.id)).ns != parse_id(str(b.id)).ns
    return checked, across


def test_common_ancestors(corpus: str) -> None:
    checked, across = _ancestors_checked(corpus)
    assert checked > 500 and across > 50


class _WithoutTaskViews:
    """The store, as one that cannot load task states alone (its whole states are read)."""

    def __init__(self, store) -> None:
        self._store = store

    def __getattr__(self, name: str):
        if name == "load_task_view":
            raise AttributeError(name)
        return getattr(self._store, name)


def _task_views_checked(target: str) -> tuple[int, int, int]:
    """``load_task_view`` gives the task state (goal, tasks, scores) ``load_state`` gives, at
    every checkpoint of the corpus, and the task history walked on it is the one walked on
    whole states."""
    from inspector.diff.history import task_history
    checked = with_goal = narrower = 0
    with open_store(target, readonly=True) as store:
        for run in store.list_runs():
            for info in store.list_checkpoints(run.id):
                full, view = store.load_state(info.id), store.load_task_view(info.id)
                assert view.tasks == full.tasks and view.info == full.info, (run.id, info.seq)
                checked += 1
                with_goal += bool(full.tasks["goal"])
                narrower += isinstance(view.state, dict) and set(view.state) < set(full.state)
            assert task_history(store, run.id) == task_history(_WithoutTaskViews(store), run.id), run.id
    return checked, with_goal, narrower


def test_task_views(corpus: str) -> None:
    checked, with_goal, narrower = _task_views_checked(corpus)
    # SqliteSaver's bodies: the other channels left out (PostgresSaver's blobs are read whole)
    assert checked > 80 and with_goal > 20 and (narrower > 60 or corpus.startswith("postgresql"))


def test_the_diff_finds_ancestors_across_lanes_without_walking_the_listing(corpus_sqlite, monkeypatch) -> None:
    """The Diff tab's ancestor of a subgraph checkpoint and a root one (or two lanes') comes
    from the store's links, not from listing the whole thread (1 s for 50,000 checkpoints)."""
    from inspector.diff import lineage
    from inspector.store.langgraph.ids import parse_id
    with open_store(str(corpus_sqlite), readonly=True) as store:
        pairs = []
        for run in store.list_runs():
            infos = store.list_checkpoints(run.id)
            pairs += [(a, b, lineage.common_ancestor(store, a, b)) for a in infos for b in infos
                      if parse_id(str(a.id)).ns != parse_id(str(b.id)).ns]
        assert len(pairs) > 80 and sum(found is not None for *_, found in pairs) > 40

        def no_walk(self, run_id):
            raise AssertionError(f"the listing of {run_id} was walked")
        monkeypatch.setattr(lineage._Listing, "by_id", no_walk)
        for a, b, found in pairs:
            if found is not None:
                assert lineage.common_ancestor(store, a, b) == found

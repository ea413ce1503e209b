"""The write workload's turns: every participant runs every step, blocks in rotating order."""

from __future__ import annotations

from collections import Counter

from inspector.bench._lgwrite import BLOCKS, _turns


def test_each_participant_runs_every_step_in_blocks_whose_order_rotates() -> None:
    names = ["", "theirs", "ours"]
    turns = list(_turns(1003, names))
    steps = Counter()
    for name, size in turns:
        steps[name] += size
    assert steps == {name: 1003 for name in names}
    assert len(turns) == BLOCKS * len(names)
    firsts = [turns[r * len(names)][0] for r in range(BLOCKS)]
    assert Counter(firsts) == {"": 4, "theirs": 3, "ours": 3}       # nobody always goes first
    assert {size for _, size in turns} == {100, 101}


def test_a_short_run_takes_fewer_turns() -> None:
    assert list(_turns(2, ["", "x"])) == [("", 1), ("x", 1), ("x", 1), ("", 1)]

"""thread_branches on hand-built trees: lanes follow the step that ran them, damage stays bounded."""

from __future__ import annotations

from inspector.store.branches import (MAX_BRANCHES, TopologyRow, choices, divergences, follow, leaf_count,
                                      thread_branches)


def _row(seq: int, cid: str, parent: str | None, lane: str = "", source: str = "loop", step: int = 0) -> TopologyRow:
    return TopologyRow(seq, cid, parent, lane, source, step)


# a → b → c (head) ; b → d (update) ; sub lane run from d, another from c
TREE = [_row(0, "a", None, source="input", step=-1), _row(1, "b", "a"), _row(2, "d", "b", source="update"),
        _row(3, "s1", "d", lane="sub:1"), _row(4, "s2", "s1", lane="sub:1"),
        _row(5, "c", "b", step=1), _row(6, "t1", "c", lane="sub:2"), _row(7, "n1", "t1", lane="sub:2|in:9")]


def test_each_leaf_is_a_branch_with_the_lanes_its_steps_ran() -> None:
    main, other = thread_branches(TREE)
    assert main.main and main.head_id == "c" and main.seqs == (0, 1, 5, 6, 7)
    assert other.head_id == "d" and other.seqs == (0, 1, 2, 3, 4)
    assert (other.fork_id, other.fork_seq, other.source) == ("b", 1, "update")
    assert other.label.startswith("update at #1") and main.label.startswith("Head branch")
    assert divergences(TREE) == {1: [2, 5]}
    assert choices([main, other], [2, 5], 0) == [1, 0]


def test_follow_keeps_the_shown_branch_and_moves_to_its_continuation() -> None:
    main, other = thread_branches(TREE)
    grown = thread_branches([*TREE, _row(8, "e", "d", step=2)])   # the update branch grew: now the head
    assert grown[0].head_id == "e" and follow(grown, other) == 0
    assert grown[1].head_id == "c" and follow(grown, main) == 1


def test_a_parent_cycle_or_a_second_root_does_not_hang() -> None:
    rows = [_row(0, "a", "b"), _row(1, "b", "a"), _row(2, "x", None), _row(3, "y", "x")]
    branches = thread_branches(rows)
    assert branches[0].head_id == "y" and branches[0].seqs == (2, 3)
    assert thread_branches([]) == []


def test_a_fork_inside_a_lane_is_a_branch_of_its_own_with_its_nested_lanes() -> None:
    # main a → b; lane L run from b: l0 → l1 → l2 (loop) and l1 → l3 (update, newest); a nested
    # lane run from l2 and one from l3
    rows = [_row(0, "a", None, source="input"), _row(1, "b", "a"),
            _row(2, "l0", "b", lane="L:1", source="input"), _row(3, "l1", "l0", lane="L:1"),
            _row(4, "l2", "l1", lane="L:1", step=1), _row(5, "n2", "l2", lane="L:1|N:2"),
            _row(6, "l3", "l1", lane="L:1", source="update", step=1), _row(7, "n3", "l3", lane="L:1|N:3")]
    main, inner = thread_branches(rows)
    assert main.seqs == (0, 1, 2, 3, 6, 7) and not main.lane            # the lane's newest leaf
    assert inner.lane == "L:1" and inner.head_id == "l2" and inner.seqs == (0, 1, 2, 3, 4, 5)
    assert (inner.fork_id, inner.fork_seq, inner.source) == ("l1", 3, "earlier run")
    assert inner.label.startswith("earlier run in L at #3")
    assert divergences(rows) == {3: [4, 6]} and choices([main, inner], [4, 6], 0) == [1, 0]
    assert leaf_count(rows) == 2


def test_more_leaves_than_offered_are_counted() -> None:
    rows = [_row(0, "a", None, source="input")] + [_row(i, f"u{i}", "a", source="update")
                                                    for i in range(1, MAX_BRANCHES + 40)]
    branches = thread_branches(rows)
    assert len(branches) == MAX_BRANCHES and leaf_count(rows) == MAX_BRANCHES + 39
    assert branches[0].head_id == f"u{MAX_BRANCHES + 39}" and branches[-1].head_id == "u40"   # the newest

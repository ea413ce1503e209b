"""thread_branches on hand-built trees: lanes follow the step that ran them, damage stays bounded."""

from __future__ import annotations

from inspector.store.branches import TopologyRow, choices, divergences, follow, thread_branches


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

"""A thread's branches: the chain from its root to each leaf, as LangGraph's ``parent_config`` links them.

A LangGraph thread is a tree of checkpoints: ``update_state``, a fork or a replay from an
older checkpoint adds a child to a checkpoint that already had one. Every leaf of the main
graph (the root namespace) ends one branch: its ancestry, followed through ``parent_id``.
Subgraph lanes belong to the branch of the main-graph checkpoint whose task ran them. The
*main* branch ends at the thread's head (the newest main-graph checkpoint, what
``get_state()`` shows). Pure functions over ``TopologyRow`` tuples: no SQL, no Qt.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

MAX_BRANCHES = 500   # leaves beyond this (newest kept) are not offered as branches


class TopologyRow(NamedTuple):
    """One checkpoint's place in its thread: seq, id, parent (a lane's first row: the enclosing
    checkpoint that ran it), lane (namespace, '' = main graph), source and step."""

    seq: int
    id: str
    parent_id: str | None
    lane: str
    source: str
    step: int | None


@dataclass(frozen=True)
class Branch:
    """One branch of a thread: the seqs it shows (main-graph ancestry of ``head_id`` and the
    subgraph lanes run from it), where it leaves the main branch and how it started there."""

    head_id: str
    head_seq: int
    head_step: int | None
    seqs: tuple[int, ...]
    main: bool = False
    fork_id: str | None = None       # the main-branch checkpoint it leaves from (None: main)
    fork_seq: int | None = None
    fork_step: int | None = None
    source: str = ""                 # how it left: "update", "fork" or "replay"

    @property
    def label(self) -> str:
        """A short name: fork point, source, head step and size."""
        size = f"{len(self.seqs)} checkpoint{'s' if len(self.seqs) != 1 else ''}"
        head = f"step {self.head_step}" if self.head_step is not None else f"#{self.head_seq}"
        if self.main:
            return f"Head branch \u2192 {head} \u00b7 {size}"
        at = "a separate root" if self.fork_seq is None else \
            f"#{self.fork_seq}" + (f" (step {self.fork_step})" if self.fork_step is not None else "")
        return f"{self.source} at {at} \u2192 {head} \u00b7 {size}"

    def contains(self, seq: int) -> bool:
        """Whether checkpoint ``seq`` is on this branch."""
        return seq in self._members

    @functools.cached_property
    def _members(self) -> frozenset[int]:
        return frozenset(self.seqs)


def _how(source: str) -> str:
    return source if source in ("update", "fork") else "replay"


def _ancestry(leaf: str, parent: dict[str, str | None]) -> list[str]:
    chain, seen = [], set()
    node: str | None = leaf
    while node is not None and node in parent and node not in seen:   # a cycle (damage) stops
        seen.add(node)
        chain.append(node)
        node = parent[node]
    return chain


def _lane_attach(rows: Sequence[TopologyRow]) -> dict[str, str | None]:
    """Each subgraph lane's enclosing checkpoint: the parent of its first row outside the lane."""
    own = {(r.lane, r.id) for r in rows}
    attach: dict[str, str | None] = {}
    for r in rows:
        if r.lane and r.lane not in attach and (r.parent_id is None or (r.lane, r.parent_id) not in own):
            attach[r.lane] = r.parent_id
    return attach


def thread_branches(rows: Iterable[TopologyRow]) -> list[Branch]:
    """The thread's branches, the main branch first, then by newest head (one branch when linear)."""
    ordered = sorted(rows, key=lambda r: r.seq)
    root = [r for r in ordered if not r.lane]
    if not root:
        return []
    by_id = {r.id: r for r in root}
    parent = {r.id: (r.parent_id if r.parent_id in by_id else None) for r in root}
    has_child = {p for p in parent.values() if p is not None}
    leaves = [r for r in root if r.id not in has_child]
    head = root[-1] if root[-1].id not in has_child else leaves[-1]
    others = [leaf for leaf in reversed(leaves) if leaf.id != head.id][:MAX_BRANCHES - 1]
    lanes = [r for r in ordered if r.lane]
    attach = _lane_attach(lanes)
    lane_rows: dict[str, tuple[list[int], set[str]]] = {}
    for r in lanes:
        seqs, ids = lane_rows.setdefault(r.lane, ([], set()))
        seqs.append(r.seq)
        ids.add(r.id)
    main_chain = _ancestry(head.id, parent)
    main_set = set(main_chain)
    branches = [_branch(head, main_chain, lane_rows, attach, by_id, None)]
    for leaf in others:
        chain = _ancestry(leaf.id, parent)
        fork = next((i for i, cid in enumerate(chain) if cid in main_set), len(chain))
        branches.append(_branch(leaf, chain, lane_rows, attach, by_id,
                                (chain[fork] if fork < len(chain) else None, chain[fork - 1])))
    return branches


def _branch(leaf: TopologyRow, chain: list[str], lane_rows: dict[str, tuple[list[int], set[str]]],
            attach: dict[str, str | None],
            by_id: dict[str, TopologyRow], fork: tuple[str | None, str] | None) -> Branch:
    """One branch; ``fork`` is (the main-branch checkpoint it leaves, its first own checkpoint),
    None for the main branch (a separate root — damage — has no fork point)."""
    included = set(chain)
    seqs = [by_id[cid].seq for cid in chain]
    lanes_in: set[str] = set()
    for lane in sorted(attach, key=lambda name: name.count("|")):   # outer lanes first
        if attach[lane] in included:
            lanes_in.add(lane)
            included |= lane_rows[lane][1]
    seqs += [s for lane in lanes_in for s in lane_rows[lane][0]]
    if fork is None:
        return Branch(leaf.id, leaf.seq, leaf.step, tuple(sorted(seqs)), main=True)
    point, first = (by_id[fork[0]] if fork[0] is not None else None), by_id[fork[1]]
    return Branch(leaf.id, leaf.seq, leaf.step, tuple(sorted(seqs)),
                  fork_id=point.id if point else None, fork_seq=point.seq if point else None,
                  fork_step=point.step if point else None, source=_how(first.source))


def branches_through(branches: Sequence[Branch], seq: int) -> list[int]:
    """Indexes of the branches that show checkpoint ``seq``."""
    return [i for i, b in enumerate(branches) if b.contains(seq)]


def divergences(rows: Iterable[TopologyRow]) -> dict[int, list[int]]:
    """Main-graph checkpoints with several children: seq → the children's seqs."""
    ordered = sorted(rows, key=lambda r: r.seq)
    seq_of = {r.id: r.seq for r in ordered if not r.lane}
    children: dict[int, list[int]] = {}
    for r in ordered:
        if not r.lane and r.parent_id in seq_of:
            children.setdefault(seq_of[r.parent_id], []).append(r.seq)
    return {s: kids for s, kids in children.items() if len(kids) > 1}


def choices(branches: Sequence[Branch], children: Sequence[int], shown: int) -> list[int]:
    """One branch per child of a divergence point: the shown branch where it goes through that
    child, else the first through it (the main branch, then the newest heads)."""
    picked = []
    for child in children:
        through = branches_through(branches, child)
        if through:
            picked.append(shown if shown in through else through[0])
    return picked


def follow(branches: Sequence[Branch], shown: Branch | None) -> int:
    """The index of the branch that continues ``shown`` after a refresh (the one whose ancestry
    still holds its old head, the main branch first); 0 when nothing matches."""
    if shown is None:
        return 0
    for i, branch in enumerate(branches):
        if branch.head_id == shown.head_id:
            return i
    for i, branch in enumerate(branches):
        if branch.contains(shown.head_seq):
            return i
    return 0

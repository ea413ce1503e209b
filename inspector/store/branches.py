"""A thread's branches: the chain from its root to each leaf, as LangGraph's ``parent_config`` links them.

A LangGraph thread is a tree of checkpoints: ``update_state``, a fork or a replay from an
older checkpoint adds a child to a checkpoint that already had one. Every leaf of the main
graph (the root namespace) ends one branch: its ancestry, followed through ``parent_id``.
Subgraph lanes belong to the branch of the main-graph checkpoint whose task ran them. The
*main* branch ends at the thread's head (the newest main-graph checkpoint, what
``get_state()`` shows). A fork made inside a subgraph (``update_state`` on an older checkpoint
of a namespace) makes that lane a tree too: a branch shows the lane's newest leaf and its
ancestry (what ``get_state(subgraphs=True)`` shows), and every other leaf of the lane is one
more branch — the same main-graph rows with that leaf's ancestry in the lane (``Branch.lane``).
At most ``MAX_BRANCHES`` are offered, the newest; ``leaf_count`` says how many there are.
Pure functions over ``TopologyRow`` tuples: no SQL, no Qt.
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
    source: str = ""                 # how it left: "update", "fork" (a replay or __copy__) or "earlier run"
    lane: str = ""                   # a branch inside this subgraph namespace ('' = of the main graph)

    @property
    def label(self) -> str:
        """A short name: fork point, source, head step and size."""
        size = f"{len(self.seqs)} checkpoint{'s' if len(self.seqs) != 1 else ''}"
        head = f"step {self.head_step}" if self.head_step is not None else f"#{self.head_seq}"
        if self.main:
            return f"Head branch \u2192 {head} \u00b7 {size}"
        at = "a separate root" if self.fork_seq is None else f"#{self.fork_seq}" + (
            f" (step {self.fork_step})" if self.fork_step is not None and not self.lane else "")
        if self.lane:       # a lane's steps are its own: where it forked says enough
            return f"{self.source} in {lane_name(self.lane)} at {at} \u00b7 {size}"
        return f"{self.source} at {at} \u2192 {head} \u00b7 {size}"

    def contains(self, seq: int) -> bool:
        """Whether checkpoint ``seq`` is on this branch."""
        return seq in self._members

    @functools.cached_property
    def _members(self) -> frozenset[int]:
        return frozenset(self.seqs)


def lane_name(lane: str) -> str:
    """A namespace by its nodes: ``review:TASK|inner:TASK`` → ``review › inner``."""
    return " \u203a ".join(part.split(":", 1)[0] for part in lane.split("|"))


def _how(source: str) -> str:
    # a replay starts with a "fork" checkpoint; a "loop" child is the line that ran there before
    # the branch the head is on was made (an update_state or a replay from that checkpoint)
    return source if source in ("update", "fork") else "earlier run"


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


class _Lane(NamedTuple):
    """One subgraph lane's rows: the default (newest leaf's) chain and the other leaves' chains."""

    seqs: list[int]
    ids: set[str]
    others: list[tuple[TopologyRow, list[str]]]     # (leaf, its ancestry in the lane), newest first


def _lanes(lanes: Sequence[TopologyRow]) -> dict[str, _Lane]:
    by_lane: dict[str, list[TopologyRow]] = {}
    for r in lanes:
        by_lane.setdefault(r.lane, []).append(r)
    out: dict[str, _Lane] = {}
    for lane, rows in by_lane.items():
        ids = {r.id for r in rows}
        parent = {r.id: (r.parent_id if r.parent_id in ids else None) for r in rows}
        has_child = {p for p in parent.values() if p is not None}
        leaves = [r for r in rows if r.id not in has_child]
        if len(leaves) <= 1:        # one chain: the whole lane
            out[lane] = _Lane([r.seq for r in rows], ids, [])
            continue
        chain = _ancestry(leaves[-1].id, parent)
        seq_of = {r.id: r.seq for r in rows}
        out[lane] = _Lane(sorted(seq_of[c] for c in chain), set(chain),
                          [(leaf, _ancestry(leaf.id, parent)) for leaf in reversed(leaves[:-1])])
    return out


def leaf_count(rows: Iterable[TopologyRow]) -> int:
    """How many branches the thread has (main-graph leaves plus the extra leaves of forked lanes);
    ``thread_branches`` offers the newest ``MAX_BRANCHES`` of them."""
    ordered = list(rows)
    root = [r for r in ordered if not r.lane]
    root_ids = {r.id for r in root}
    parents = {r.parent_id for r in root if r.parent_id in root_ids}
    extra = sum(len(lane.others) for lane in _lanes([r for r in ordered if r.lane]).values())
    return len([r for r in root if r.id not in parents]) + extra if root else 0


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
    lane_rows = _lanes(lanes)
    main_chain = _ancestry(head.id, parent)
    main_set = set(main_chain)
    branches = [_branch(head, main_chain, lane_rows, attach, by_id, None)]
    for leaf in others:
        chain = _ancestry(leaf.id, parent)
        fork = next((i for i, cid in enumerate(chain) if cid in main_set), len(chain))
        branches.append(_branch(leaf, chain, lane_rows, attach, by_id,
                                (chain[fork] if fork < len(chain) else None, chain[fork - 1])))
    lane_branches = [b for lane in sorted(lane_rows) for b in _lane_branches(lane, lane_rows, branches, ordered)]
    lane_branches.sort(key=lambda b: b.head_seq, reverse=True)
    return branches + lane_branches[:max(0, MAX_BRANCHES - len(branches))]


def _lane_branches(lane: str, lane_rows: dict[str, _Lane], branches: Sequence[Branch],
                   ordered: Sequence[TopologyRow]) -> list[Branch]:
    """One branch per extra leaf of a forked lane: the first branch showing the lane, with the
    leaf's ancestry (and the lanes run from it) in place of the lane's default chain."""
    entry = lane_rows[lane]
    base = next((b for b in branches if entry.seqs and b.contains(entry.seqs[0])), None)
    if base is None or not entry.others:
        return []
    row_of = {(r.lane, r.id): r for r in ordered}
    nested = {name for name in lane_rows if name.startswith(lane + "|")}
    dropped = set(entry.seqs) | {s for name in nested for s in lane_rows[name].seqs}
    out = []
    for leaf, chain in entry.others:
        own = set(chain)
        point_id = next((c for c in chain if c in entry.ids), None)
        first = row_of[(lane, chain[chain.index(point_id) - 1] if point_id else chain[-1])]
        seqs = {s for s in base.seqs if s not in dropped} | {row_of[(lane, c)].seq for c in chain}
        for name in sorted(nested, key=lambda n: n.count("|")):     # lanes run from the leaf's rows
            start = next((r for r in ordered if r.lane == name), None)
            if start is not None and start.parent_id in own:
                own |= lane_rows[name].ids
                seqs |= set(lane_rows[name].seqs)
        point = row_of.get((lane, point_id)) if point_id else None
        out.append(Branch(leaf.id, leaf.seq, leaf.step, tuple(sorted(seqs)), fork_id=point_id,
                          fork_seq=point.seq if point else None, fork_step=point.step if point else None,
                          source=_how(first.source), lane=lane))
    return out


def _branch(leaf: TopologyRow, chain: list[str], lane_rows: dict[str, _Lane],
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
            included |= lane_rows[lane].ids
    seqs += [s for lane in lanes_in for s in lane_rows[lane].seqs]
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
    """Checkpoints with several children in their own namespace (the main graph's or a lane's):
    seq → the children's seqs."""
    ordered = sorted(rows, key=lambda r: r.seq)
    seq_of = {(r.lane, r.id): r.seq for r in ordered}
    children: dict[int, list[int]] = {}
    for r in ordered:
        parent = seq_of.get((r.lane, r.parent_id)) if r.parent_id is not None else None
        if parent is not None:
            children.setdefault(parent, []).append(r.seq)
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

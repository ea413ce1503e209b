"""Expanding stored pieces into a state, within the read budgets (``inspector.limits``).

Pieces form a DAG: equal subtrees are one piece referenced many times. Forty levels of
``[Ref(next), Ref(next)]`` are 2 KB of valid pieces that expand to 2^40 leaves, so a state is
*measured* before it is built: every piece's expanded size (values, bytes, depth) is computed
once, bottom-up, from its children's, and the root's is checked against the budgets. Only
then is the value built, bottom-up again, each piece once (a piece referenced twice is the
same object twice). Nothing here recurses, so no file can drive it past the interpreter's
recursion limit.
"""

from typing import Any, NamedTuple
from collections.abc import Callable, Collection

from inspector import limits
from inspector.codec.markers import ChunkedList, ChunkedMap, ChunkedText, Ref
from inspector.errors import CorruptDataError

_CONTAINERS = (dict, list, Ref, ChunkedList, ChunkedMap)
_CONTAINER_TYPES = frozenset(_CONTAINERS)


def _plain(values: Any) -> bool:
    """True when no item of ``values`` is a container or marker (exact types, at C speed;
    a subclass of dict or list never comes out of the decoder)."""
    return _CONTAINER_TYPES.isdisjoint(map(type, values))


def _leaf_total(values: Any) -> int:
    """The summed ``_leaf_size`` of scalars (a whole list of ints or of strs at C speed)."""
    kinds = set(map(type, values))
    if kinds <= _FIXED:
        return 8 * len(values)
    if kinds <= _SIZED:
        return sum(map(len, values))
    return sum(map(_leaf_size, values))


class Cost(NamedTuple):
    """What a piece expands to: values, logical bytes, nesting depth (0 for a scalar)."""

    nodes: int
    size: int
    depth: int


def _children(value: Any) -> list[bytes]:
    """The digests a decoded piece refers to directly (iterative scan)."""
    found: list[bytes] = []
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is Ref:
            found.append(item.digest)
        elif kind is ChunkedList or kind is ChunkedMap or kind is ChunkedText:
            found.extend(c.digest for c in item.chunks)
        elif kind is dict:
            if not _plain(item.values()):
                stack.extend(v for v in item.values() if isinstance(v, _CONTAINERS))
        elif kind is list and not _plain(item):
            stack.extend(v for v in item if isinstance(v, _CONTAINERS))
    return found


children = _children   # the store's level-by-level fetch uses the same scan


def _leaf_size(item: Any) -> int:
    return len(item) if isinstance(item, (str, bytes)) else 8


_FIXED = frozenset((int, float, bool, type(None)))
_SIZED = frozenset((str, bytes))


def _measure(value: Any, costs: dict[bytes, Cost]) -> Cost:
    """The expanded cost of one decoded piece whose children's costs are known."""
    nodes = size = deepest = 0
    stack = [(value, 0)]
    while stack:
        item, level = stack.pop()
        kind = type(item)
        if kind is Ref:
            child = costs[item.digest]
            nodes, size = nodes + child.nodes, size + child.size
            deepest = max(deepest, level + child.depth)
        elif kind is ChunkedList or kind is ChunkedMap:
            nodes += 1
            for chunk in item.chunks:
                child = costs[chunk.digest]      # a chunk (or sub-table) piece is one list or map
                nodes, size = nodes + child.nodes - 1, size + child.size
                deepest = max(deepest, level + child.depth)
            deepest = max(deepest, level + 1)
        elif kind is ChunkedText:       # a whole text piece: one string, its segments' bytes
            nodes += 1
            size += sum(costs[chunk.digest].size for chunk in item.chunks)
        elif kind is dict:
            nodes += 1
            deepest = max(deepest, level + 1)
            if _plain(item.values()):
                nodes += len(item)
                size += _leaf_total(item.keys()) + _leaf_total(item.values())
                continue
            for key, child in item.items():
                size += _leaf_size(key)
                if isinstance(child, _CONTAINERS):
                    stack.append((child, level + 1))
                else:
                    nodes, size = nodes + 1, size + _leaf_size(child)
        elif kind is list:
            nodes += 1
            deepest = max(deepest, level + 1)
            if _plain(item):
                nodes, size = nodes + len(item), size + _leaf_total(item)
                continue
            for child in item:
                if isinstance(child, _CONTAINERS):
                    stack.append((child, level + 1))
                else:
                    nodes, size = nodes + 1, size + _leaf_size(child)
        else:
            nodes, size = nodes + 1, size + _leaf_size(item)
    return Cost(nodes, size, deepest)


def _postorder(roots: Collection[bytes], table: dict[bytes, Any]) -> list[bytes]:
    """Every digest reachable from ``roots``, children before parents; CorruptDataError on a
    cycle (impossible with correct digests, but the walk must end on any input)."""
    order: list[bytes] = []
    done: set[bytes] = set()
    for root in roots:
        if root in done:
            continue
        stack: list[tuple[bytes, list[bytes] | None]] = [(root, None)]
        path: set[bytes] = set()
        while stack:
            digest, kids = stack[-1]
            if kids is None:
                if digest in done:
                    stack.pop()
                    continue
                if digest in path:
                    raise CorruptDataError("A stored state refers to itself (the store is damaged).")
                path.add(digest)
                kids = [k for k in dict.fromkeys(_children(table[digest])) if k not in done]
                stack[-1] = (digest, kids)
            if kids:
                nxt = kids.pop()
                if nxt in path:
                    raise CorruptDataError("A stored state refers to itself (the store is damaged).")
                if nxt not in done:
                    stack.append((nxt, None))
                continue
            stack.pop()
            path.discard(digest)
            if digest not in done:
                done.add(digest)
                order.append(digest)
    return order


def check(roots: Collection[bytes], table: dict[bytes, Any], what: str) -> list[bytes]:
    """Measure the values at ``roots`` (pieces all in ``table``) against the budgets;
    BudgetExceeded naming ``what`` when one is over. Returns the digests in build order."""
    order = _postorder(roots, table)
    costs: dict[bytes, Cost] = {}
    for digest in order:
        costs[digest] = _measure(table[digest], costs)
    budget = limits.current()
    for root in roots:
        _enforce(costs[root], budget, what, "s")
    return order


def _enforce(cost: Cost, budget: limits.Limits, what: str, verb_s: str) -> None:
    """BudgetExceeded naming ``what`` when ``cost`` is over ``budget`` (``verb_s``: "s" for one
    value, "" for several)."""
    if cost.depth > budget.depth:
        raise limits.BudgetExceeded("depth", f"{what} nest{verb_s} {cost.depth:,} levels deep")
    if cost.nodes > budget.nodes:
        raise limits.BudgetExceeded("nodes", f"{what} expand{verb_s} to {cost.nodes:,} values")
    if cost.size > budget.state_bytes:
        raise limits.BudgetExceeded("state", f"{what} expand{verb_s} to {cost.size:,} bytes")


def check_values(values: list[Any], table: dict[bytes, Any], what: str) -> None:
    """Measure decoded forms (which may hold markers; their pieces all in ``table``) together
    against the budgets: BudgetExceeded naming ``what`` when they are over."""
    total = Cost(0, 0, 0)
    costs: dict[bytes, Cost] = {}
    roots = [d for value in values for d in _children(value)]
    for digest in _postorder(list(dict.fromkeys(roots)), table):
        costs[digest] = _measure(table[digest], costs)
    budget = limits.current()
    for value in values:
        cost = _measure(value, costs)
        total = Cost(total.nodes + cost.nodes, total.size + cost.size, max(total.depth, cost.depth))
        _enforce(total, budget, what, "")


def _build_piece(value: Any, built: dict[bytes, Any]) -> Any:
    """A copy of one piece's value with its markers replaced by the built children (the
    containers that hold no marker are kept as they are)."""
    holder = [None]
    stack: list[tuple[Any, Any, Any]] = [(holder, 0, value)]
    while stack:
        parent, slot, item = stack.pop()
        kind = type(item)
        if kind is Ref:
            out: Any = built[item.digest]
        elif kind is ChunkedList or kind is ChunkedMap:
            plain = list if kind is ChunkedList else dict
            out = plain()
            add = out.extend if kind is ChunkedList else out.update
            for chunk in item.chunks:
                part = built[chunk.digest]      # a chunk, or a sub-table built into its items
                if type(part) is not plain or len(part) != chunk.count:
                    raise CorruptDataError("A stored chunk does not match its table.")
                add(part)
            if kind is ChunkedMap and len(out) != item.length:
                raise CorruptDataError("A stored map repeats a key across its chunks.")
        elif kind is ChunkedText:
            out = join_text(item, [built[chunk.digest] for chunk in item.chunks])
        elif kind is dict:
            marked = [] if _plain(item.values()) else [k for k, v in item.items() if isinstance(v, _CONTAINERS)]
            out = dict(item) if marked else item
            stack.extend((out, k, item[k]) for k in marked)
        elif kind is list:
            marked = [] if _plain(item) else [i for i, v in enumerate(item) if isinstance(v, _CONTAINERS)]
            out = list(item) if marked else item
            stack.extend((out, i, item[i]) for i in marked)
        else:
            out = item
        parent[slot] = out
    return holder[0]


def join_text(text: ChunkedText, parts: list) -> str:
    """The string a text piece stands for, from its chunks' built items (lists of segments);
    CorruptDataError when a part is not the list of strings its table says."""
    segments: list = []
    for chunk, part in zip(text.chunks, parts, strict=True):
        if type(part) is not list or len(part) != chunk.count:
            raise CorruptDataError("A stored text does not match its table.")
        segments += part
    if set(map(type, segments)) - {str}:
        raise CorruptDataError("A stored text holds a segment that is not text.")
    return "".join(segments)


def build(order: list[bytes], table: dict[bytes, Any]) -> dict[bytes, Any]:
    """The value of every digest in ``order`` (children first), each built once."""
    built: dict[bytes, Any] = {}
    for digest in order:
        built[digest] = _build_piece(table[digest], built)
    return built


def resolve_all(roots: Collection[bytes], table: dict[bytes, Any], what: str = "A stored state") -> dict[bytes, Any]:
    """The values at ``roots``, checked against the budgets first (see ``check``)."""
    built = build(check(roots, table, what), table)
    return {root: built[root] for root in roots}


def fetch_all(value: Any, fetch: Callable[[bytes], Any]) -> dict[bytes, Any]:
    """Every piece ``value`` reaches, fetched one by one with ``fetch``."""
    table: dict[bytes, Any] = {}
    frontier = _children(value)
    while frontier:
        digest = frontier.pop()
        if digest not in table:
            table[digest] = fetch(digest)
            frontier.extend(_children(table[digest]))
    return table


ROOT = b"\x00" * 15 + b"\x01"   # a digest no piece has (xxh3-128 of anything is not this)


def resolve_value(value: Any, fetch: Callable[[bytes], Any], what: str = "A stored state") -> Any:
    """``value`` (a decoded piece) with every marker replaced, within the budgets."""
    table = fetch_all(value, fetch)
    table[ROOT] = value
    return resolve_all([ROOT], table, what)[ROOT]

"""List alignment: trim the equal ends, then match the middle by item fingerprints.

Appending to a list of 500 costs 500 C-level comparisons and reports only the new items;
an insertion in the middle is one insertion, not a cascade of changed indices. An item
removed at one place and added, equal, at another is reported as moved.

An item that carries an id (``identity``: a record's ``id``, a LangChain message's) is
matched by it: two items with different ids are two items (one removed, one added), never
one edited; an item whose id is at another place moved, and is compared in depth there.
A reordered list reads as the fewest moves that explain it (``settle``): the items left in
place are the longest run kept in order, and an item whose index did not change never moves.

Ops are NamedTuples, one class per kind: ``Pair(i, j, old, new)`` (an edited item: compare
a[i] with b[j] in depth), ``Replace(i, j, old, new)`` (a different item in the same place),
``Removed(i, old)``, ``Added(j, new)`` and ``Moved(i, j, old, new)`` (compared in depth
too when it was edited on the way); indices are absolute.
"""

from _thread import _local
from bisect import bisect_left
from itertools import compress
from math import copysign

import msgpack
from operator import eq, ne
from typing import Any, NamedTuple, TypeAlias, cast
from collections.abc import Callable, Sequence

from inspector.codec import Ref
from inspector.diff.matching import matcher

EXACT_LIMIT = 2000        # middle sizes above this let difflib skip popular items as junk
EXACT_PREFIX_MAX = 256    # a list that grew: its kept items are checked for type-only changes up to this many
SHIFT_PROBES = 64         # equal-length middles: how many differing positions to test for a shift
_SCALARS = (str, int, float, bool, bytes, type(None))
_SCALAR_TYPES = frozenset(_SCALARS)
_DICT, _LIST, _TUPLE, _REF, _OTHER = "dict", "list", "tuple", "ref", "other"   # container tags


class Pair(NamedTuple):
    """An item edited in place: compare ``old`` (a[i]) with ``new`` (b[j]) in depth."""

    i: int
    j: int
    old: Any
    new: Any


class Replace(NamedTuple):
    """A different item in the same place: ``old`` (a[i]) replaced by ``new`` (b[j])."""

    i: int
    j: int
    old: Any
    new: Any


class Removed(NamedTuple):
    """a[i] is gone."""

    i: int
    old: Any


class Added(NamedTuple):
    """b[j] is new."""

    j: int
    new: Any


class Moved(NamedTuple):
    """a[i] (``old``) is b[j] (``new``), at another place: equal, or the same id."""

    i: int
    j: int
    old: Any
    new: Any


Op: TypeAlias = Pair | Replace | Removed | Added | Moved
_new = tuple.__new__    # builds an op without a trip through its Python-level __new__ (the hot paths)


def same(x: Any, y: Any) -> bool:
    """C-level equality that never raises RecursionError (deep values count as unequal): an
    item's identity, which moves are found by (``1`` and ``1.0`` are one item)."""
    if x is y:
        return True
    try:
        return bool(x == y)
    except RecursionError:
        return False


def same_exactly(x: Any, y: Any) -> bool:
    """``same``, and telling what ``==`` does not: ``1``, ``True`` and ``1.0`` apart, ``0.0``
    from ``-0.0``, at any depth of plain values (``equal_exactly``) — whether there is a change."""
    if x is y:
        return True
    try:
        return bool(x == y) and equal_exactly(x, y)
    except RecursionError:
        return False


def equal_exactly(x: Any, y: Any) -> bool:
    """For ``x == y``: whether no value changed its type — ``1``, ``True`` and ``1.0``, a float
    of one sign — at any depth (a dict's key order is no change). Containers are compared by
    their strict encodings first (one C call each; a container holding a marker, which has
    none, is taken as ``==`` says), and only when those differ, value by value."""
    t = type(x)
    if t is not type(y):
        return False
    if t is float:
        return copysign(1.0, x) == copysign(1.0, y)
    if t is dict or t is list or t is tuple:
        fx = _strict(x)
        if fx is None or fx == _strict(y):
            return True
        return _typed(x) == _typed(y)       # keys in another order, or a value of another type
    return True


def _strict(value: Any) -> bytes | None:
    """``value``'s strict msgpack encoding — only the exact plain types have one (a subclass,
    a tuple, a marker … none; ``True`` is not ``1``, nor ``1.0``, nor ``-0.0`` ``0.0``) — or
    None. A small container by msgpack, which the codec loads anyway; a big one by the codec's
    fingerprint (ormsgpack: twice as fast, but loading dataclasses and inspect, which a diff of
    small states starts without: tests/commands/test_lean_startup.py)."""
    try:
        if len(value) > _SMALL:
            from inspector.codec.encoded import fingerprint     # (ormsgpack: loaded when first needed)
            return fingerprint(value)
        packer = _packer()
        try:
            return packer.pack(value)
        except (TypeError, ValueError, OverflowError):
            packer.reset()
            raise
    except (TypeError, ValueError, OverflowError):
        return None


_SMALL = 64


def _refuse(obj: Any) -> Any:
    raise TypeError(type(obj).__name__)


_PACKERS = _local()      # one per thread (a diff may run in a worker beside another; threading is not loaded)


def _packer() -> msgpack.Packer:
    found = getattr(_PACKERS, "packer", None)
    if found is None:
        found = _PACKERS.packer = msgpack.Packer(default=_refuse, use_bin_type=True, strict_types=True)
    return found


def _typed(x: Any) -> Any:
    """A stand-in for ``x`` equal for values equal with the same types at every depth, dict
    key order aside (``1``, ``True``, ``1.0`` and ``-0.0`` all differ)."""
    t = type(x)
    if t is dict:
        return frozenset(((type(k), k), _typed(v)) for k, v in x.items())
    if t is list or t is tuple:
        return t, tuple(_typed(v) for v in x)
    if t is float:
        return t, x, copysign(1.0, x)
    try:
        hash(x)
        return t, x
    except TypeError:
        return t, id(x)


def fingerprint(x: Any) -> Any:
    """A hashable stand-in for an item, canonical under ``==``: equal items give equal
    fingerprints whatever their dicts' key order, and ``1`` and ``1.0`` (equal, with equal
    hashes) stay equal inside lists and dicts too. The converse holds almost always;
    callers confirm with ``same``. A value nested too deep for Python gets a unique
    fingerprint (never matched)."""
    t = type(x)
    if t in _SCALAR_TYPES:
        return x
    if t is Ref:
        return x.digest
    try:
        return _canonical(x)
    except RecursionError:
        return object()


def _canonical(x: Any) -> Any:
    t = type(x)
    if t is dict:
        try:    # every value hashable (a flat record): one C-level pass, key order irrelevant
            return _DICT, frozenset(x.items())
        except TypeError:
            return _DICT, frozenset([(k, _canonical(v)) for k, v in x.items()])
    if t is list or t is tuple:
        items = tuple(x)
        try:
            hash(items)     # all hashable (scalars): kept as they are
        except TypeError:
            items = tuple([_canonical(v) for v in x])
        return (_LIST if t is list else _TUPLE), items
    if t in _SCALAR_TYPES:
        return x
    if t is Ref:
        return _REF, x.digest
    if isinstance(x, dict):
        return _canonical(dict(x))
    if isinstance(x, (list, tuple)):
        return _canonical(list(x) if isinstance(x, list) else tuple(x))
    try:
        hash(x)
        return x
    except TypeError:
        return _OTHER, repr(x)


_ID = object()      # tags an identity key (``item_key``): no fingerprint holds it


def identity(x: Any) -> str | int | None:
    """The id an item carries, or None: a dict's ``id`` when it is a string or an integer (a
    record, a plain-dict message, a LangChain message as our stores decode it), or the
    ``kwargs`` id of LangChain's serialized form (``{"lc": 1, "id": [class path], "kwargs":
    {"id": …}}``). Two items with different ids are different items, whatever they hold."""
    if not isinstance(x, dict):
        return None
    found = x.get("id")
    kind = type(found)
    if kind is str or kind is int:
        return found
    if kind is list and "lc" in x:
        kwargs = x.get("kwargs")
        if isinstance(kwargs, dict):
            found = kwargs.get("id")
            if type(found) is str or type(found) is int:
                return found
    return None


def item_key(x: Any) -> Any:
    """What items are matched by: the id of an item that carries one (``identity``), else
    its ``fingerprint``."""
    found = identity(x)
    return fingerprint(x) if found is None else (_ID, found)


def _other_ids(x: Any, y: Any) -> bool:
    """Whether two items carry ids and the ids differ (then they are two items)."""
    found = identity(x)
    if found is None:
        return False
    other = identity(y)
    return other is not None and (type(other) is not type(found) or other != found)


def trim(a: Sequence, b: Sequence) -> tuple[int, int]:
    """Lengths of the equal common prefix and (non-overlapping) suffix of two lists."""
    la, lb = len(a), len(b)
    n = min(la, lb)
    prefix = 0
    if la != lb and isinstance(a, list) and isinstance(b, list):
        # one C-level slice comparison finds a pure append or truncation without a loop
        try:
            prefix = n if a[:n] == b[:n] and (n > EXACT_PREFIX_MAX or equal_exactly(a[:n], b[:n])) else 0
        except RecursionError:
            prefix = 0
    while prefix < n and same_exactly(a[prefix], b[prefix]):
        prefix += 1
    suffix = 0
    limit = n - prefix
    while suffix < limit and same_exactly(a[la - 1 - suffix], b[lb - 1 - suffix]):
        suffix += 1
    return prefix, suffix


def align(a: Sequence, b: Sequence, a_off: int = 0, b_off: int = 0) -> list[Op]:
    """Ops turning list ``a`` into ``b`` (see module docstring), moves found and settled."""
    prefix, suffix = trim(a, b)
    mid_a = a[prefix:len(a) - suffix]
    mid_b = b[prefix:len(b) - suffix]
    a_off, b_off = a_off + prefix, b_off + prefix
    return settle(detect_moves(_align_middle(mid_a, mid_b, a_off, b_off)), mid_a, mid_b, a_off, b_off)


def align_encoded(a: list[bytes], b: list[bytes], a_off: int, b_off: int,
                  decode: Callable[[bytes], Any]) -> list[Op]:
    """``align`` for items still in their encoding (``decode`` turns one into its value):
    equal encodings are equal items, so only the items that differ are decoded, and those
    of their neighbours that could equal them (to see shifts).

    When the middles differ in length, or a differing item reappears elsewhere (a move),
    every middle item is decoded and aligned as usual.
    """
    if len(a) != len(b):
        prefix, suffix = trim(a, b)
        return align([decode(x) for x in a[prefix:len(a) - suffix]],
                     [decode(y) for y in b[prefix:len(b) - suffix]], a_off + prefix, b_off + prefix)
    # bytes compare exactly, so one C-level pass finds every differing index (and the trim)
    changed = list(compress(range(len(a)), map(ne, a, b)))
    if not changed:
        return []
    first, last = changed[0], changed[-1]
    mid_a, mid_b = a[first:last + 1], b[first:last + 1]
    a_off, b_off = a_off + first, b_off + first
    differing = [k - first for k in changed]
    da, db = list(mid_a), list(mid_b)
    for k in differing:
        da[k], db[k] = decode(da[k]), decode(db[k])
    decoded = set(differing)
    # an item found elsewhere in the other list means items moved: align them all below
    # (by fingerprint: a moved item may be encoded with its keys in another order)
    if len(differing) < 2 or not ({fingerprint(da[k]) for k in differing}
                                  & {fingerprint(db[k]) for k in differing}):

        def shifted(k: int) -> bool:
            """Whether new item ``k`` equals an old neighbour. A neighbour still encoded (the
            same on both sides) is decoded only when it could: an item equal to the new one
            holds the text of the new one's first string, so its encoding holds its bytes."""
            new, text = db[k], _first_text(db[k])
            for j in (k - 1, k + 1):
                if j < 0 or j == len(da):
                    continue
                if j not in decoded:
                    if text is not None and text not in da[j]:
                        continue
                    da[j] = db[j] = decode(da[j])
                    decoded.add(j)
                if same(new, da[j]):
                    return True
            return False
        # equal encodings stay equal: only the indices that differed encoded can differ now
        ops = _positional(da, db, a_off, b_off, moves=False, maybe=differing, shifted=shifted)
        if ops is not None:
            return ops
    return align([x if k in decoded else decode(x) for k, x in enumerate(da)],
                 [y if k in decoded else decode(y) for k, y in enumerate(db)], a_off, b_off)


def _first_text(value: Any) -> bytes | None:
    """The UTF-8 bytes of the first string in a decoded item (the item itself or a value of
    the dict), or None: any value equal to the item holds that string, so its msgpack
    encoding holds these bytes."""
    if type(value) is str:
        return value.encode()
    if type(value) is dict:
        for v in value.values():
            if type(v) is str:
                return v.encode()
    return None


def _align_middle(a: Sequence, b: Sequence, a_off: int, b_off: int) -> list[Op]:
    if not a:
        return [Added(b_off + j, y) for j, y in enumerate(b)]
    if not b:
        return [Removed(a_off + i, x) for i, x in enumerate(a)]
    if len(a) == len(b):
        positional = _positional(a, b, a_off, b_off)
        if positional is not None:
            return positional
    keys_a = [item_key(x) for x in a]
    keys_b = [item_key(y) for y in b]
    junk = len(a) + len(b) > EXACT_LIMIT
    opcodes = matcher(keys_a, keys_b, junk).get_opcodes()
    # items that may have moved: an item of a replaced block that reappears elsewhere is not
    # paired with its neighbour, so detect_moves can report it as moved
    loose_a = {keys_a[i] for tag, i1, i2, _, _ in opcodes if tag != "equal" for i in range(i1, i2)}
    loose_b = {keys_b[j] for tag, _, _, j1, j2 in opcodes if tag != "equal" for j in range(j1, j2)}
    ops: list[Op] = []
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            ops.extend(_new(Pair, (a_off + i, b_off + j, a[i], b[j]))
                       for i, j in zip(range(i1, i2), range(j1, j2), strict=True) if not same_exactly(a[i], b[j]))
            continue
        paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        unpaired_a, unpaired_b = list(range(i1 + paired, i2)), list(range(j1 + paired, j2))
        for k in range(paired):
            x, y = a[i1 + k], b[j1 + k]
            if keys_a[i1 + k] not in loose_b and keys_b[j1 + k] not in loose_a and similar(x, y) \
                    and not _other_ids(x, y):
                ops.append(Pair(a_off + i1 + k, b_off + j1 + k, x, y))
            else:
                unpaired_a.append(i1 + k)
                unpaired_b.append(j1 + k)
        ops.extend(Removed(a_off + i, a[i]) for i in sorted(unpaired_a))
        ops.extend(Added(b_off + j, b[j]) for j in sorted(unpaired_b))
    return ops


def similar(x: Any, y: Any) -> bool:
    """Whether two unequal items look like one item edited (worth a nested diff) rather than
    one item replaced by another: dicts must share at least one equal value and half their
    keys; other values of one kind always qualify."""
    if type(x) is dict and type(y) is dict and x and len(x) == len(y) and tuple(x) == tuple(y):
        try:        # the common case: the same keys in the same order, values compared pairwise in C
            return any(map(eq, x.values(), y.values()))
        except RecursionError:
            pass
    if isinstance(x, dict) and isinstance(y, dict):
        if len(x) == len(y) and x.keys() == y.keys():     # no key set to build
            shared: Any = x
        else:
            shared = x.keys() & y.keys()
            if len(shared) * 2 < max(len(x), len(y)):
                return False
        if not shared:
            return True
        try:
            return any(x[k] is y[k] or x[k] == y[k] for k in shared)
        except RecursionError:
            return any(same(x[k], y[k]) for k in shared)
    if isinstance(x, bool) or isinstance(y, bool):
        return type(x) is type(y)
    if isinstance(x, (int, float)) and isinstance(y, (int, float)):
        return True
    return type(x) is type(y)


def _positional(a: Sequence, b: Sequence, a_off: int, b_off: int, moves: bool = True,
                maybe: list[int] | None = None, shifted: Callable[[int], bool] | None = None
                ) -> list[Op] | None:
    """Pair items index by index when the lists look edited in place (no shift); ``moves``
    False when the caller knows no differing item reappears at another differing place;
    ``maybe``, when given, the only indices (ascending) where the items can differ;
    ``shifted(k)``, when given, tells whether ``b[k]`` equals ``a[k - 1]`` or ``a[k + 1]``
    (the neighbours in ``a`` may then be left encoded)."""
    indices = range(len(a)) if maybe is None else maybe
    try:
        differing = [k for k in indices if not (a[k] is b[k] or (a[k] == b[k] and equal_exactly(a[k], b[k])))]
    except RecursionError:
        differing = [k for k in indices if not same_exactly(a[k], b[k])]
    last = len(a) - 1
    if shifted is None:
        def shifted(k: int) -> bool:
            return (k > 0 and same(b[k], a[k - 1])) or (k < last and same(b[k], a[k + 1]))
    for k in differing[:SHIFT_PROBES]:
        if shifted(k):
            return None
    if moves and len(differing) > 1:
        olds: dict[Any, list[int]] = {}
        for k in differing:
            olds.setdefault(fingerprint(a[k]), []).append(k)
        if any(fingerprint(b[k]) in olds for k in differing):
            # items changed places: a pure reshuffle is a set of moves, anything else is aligned
            return _permutation(a, b, differing, olds, a_off, b_off)
    for k in differing:
        if _other_ids(a[k], b[k]):
            return _in_place(a, b, differing, a_off, b_off)
    return [_new(Pair, (a_off + k, b_off + k, a[k], b[k])) if similar(a[k], b[k])
            else _new(Replace, (a_off + k, b_off + k, a[k], b[k])) for k in differing]


def _in_place(a: Sequence, b: Sequence, differing: list[int], a_off: int, b_off: int) -> list[Op] | None:
    """``_positional``'s ops when some places hold an item with another id: each is one item
    removed and one added (a run of such places: its items removed, then its items added,
    as an alignment by id says it), the others edits in place. None when an id of one side
    is found among the other side's differing items (a move, or a shift: aligned by id)."""
    ids_a = {identity(a[k]) for k in differing}
    ids_b = {identity(b[k]) for k in differing}
    ops: list[Op] = []
    gone: list[Op] = []
    came: list[Op] = []
    last = -2
    for k in differing:
        x, y = a[k], b[k]
        if _other_ids(x, y):
            if identity(x) in ids_b or identity(y) in ids_a:
                return None
            if gone and last != k - 1:
                ops += gone + came
                gone, came = [], []
            gone.append(Removed(a_off + k, x))
            came.append(Added(b_off + k, y))
            last = k
            continue
        if gone:
            ops += gone + came
            gone, came = [], []
        ops.append(Pair(a_off + k, b_off + k, x, y) if similar(x, y) else Replace(a_off + k, b_off + k, x, y))
    return ops + gone + came


def _permutation(a: Sequence, b: Sequence, differing: list[int], olds: dict[Any, list[int]],
                 a_off: int, b_off: int) -> list[Op] | None:
    """Moves when the differing positions hold the same items in another order, else None."""
    ops: list[Op] = []
    for k in differing:
        candidates = olds.get(fingerprint(b[k]), [])
        source = next((i for i in candidates if same(a[i], b[k])), None)
        if source is None:
            return None
        candidates.remove(source)
        ops.append(Moved(a_off + source, b_off + k, a[source], b[k]))
    return ops


def detect_moves(ops: list[Op]) -> list[Op]:
    """Replace a removed item and an added one, equal or with the same id, by one ``Moved``
    op (an item with an id moved and edited: compared in depth where it is now)."""
    removed = [(pos, op) for pos, op in enumerate(ops) if type(op) is Removed]
    if not removed or not any(type(op) is Added for op in ops):
        return ops
    by_key: dict[Any, list[int]] = {}
    for pos, op in enumerate(ops):
        if type(op) is Added:
            by_key.setdefault(item_key(op.new), []).append(pos)
    out: list[Op | None] = list(ops)
    for pos, (i, x) in removed:
        found = item_key(x)
        candidates = by_key.get(found)
        if not candidates:
            continue
        by_id = type(found) is tuple and len(found) == 2 and found[0] is _ID
        for n, target in enumerate(candidates):
            j, y = ops[target][:2]
            if by_id or same(x, y):
                out[target] = Moved(i, j, x, y)
                out[pos] = None
                del candidates[n]
                break
    return [op for op in out if op is not None]


def settle(ops: list[Op], a: Sequence, b: Sequence, a_off: int, b_off: int) -> list[Op]:
    """The ops of the middles ``a`` and ``b`` (at ``a_off``/``b_off``) with the fewest moves.

    Every old item still in the new list is kept in place or moved; the kept ones must keep
    their order. Of all the ways to choose them, this keeps the most (a sorted list of 30
    reads as the moves outside its longest run already in order, not as every item that
    the alignment happened to leave out), with two rules first: an item at the same index
    in both lists is never a move, and an item replaced in place stays in place. Ties keep
    the alignment's choice. A move that ends kept is an edit in place, or nothing.
    """
    moves = [op for op in ops if type(op) is Moved]
    if not moves:
        return ops
    gone = {op[0] for op in ops if type(op) is Removed or type(op) is Moved}
    placed = {op.j for op in ops if type(op) is Added or type(op) is Moved}
    kept_a = [i for i in range(a_off, a_off + len(a)) if i not in gone]
    kept_b = [j for j in range(b_off, b_off + len(b)) if j not in placed]
    if len(kept_a) != len(kept_b):
        return ops      # (ops that do not describe these lists: left as they are)
    low_i, low_j = min(m.i for m in moves), min(m.j for m in moves)
    high_i, high_j = max(m.i for m in moves), max(m.j for m in moves)
    # a kept item before every move on both sides (or after) is in order with every choice
    kept = [(i, j) for i, j in zip(kept_a, kept_b, strict=True)
            if not (i < low_i and j < low_j) and not (i > high_i and j > high_j)]
    replaced = {op.i for op in ops if type(op) is Replace}
    n = len(kept) + len(moves) + 1
    candidates = sorted([(i, j, (n ** 3 if i in replaced else n * n if i == j else n + 1), True) for i, j in kept]
                        + [(m.i, m.j, (n * n if m.i == m.j else n), False) for m in moves])
    chosen = _heaviest_increasing(candidates)
    if all(chosen[k] == candidates[k][3] for k in range(len(candidates))):
        return ops      # the alignment's choice is already the best
    settling = {c[0] for c, kept_now in zip(candidates, chosen, strict=True) if kept_now and not c[3]}
    leaving = {c[0]: c[1] for c, kept_now in zip(candidates, chosen, strict=True) if c[3] and not kept_now}
    out: list[Op] = []
    for op in ops:
        if type(op) is Moved:
            if op.i in settling:        # in place after all: an edit, or nothing
                if not same_exactly(op.old, op.new):
                    out.append(Pair(op.i, op.j, op.old, op.new))
                continue
        elif type(op) is Pair and op.i in leaving:
            op = Moved(op.i, op.j, op.old, op.new)
            del leaving[op.i]
        out.append(op)
    if leaving:     # unchanged items that now move: placed among the ops by their new index
        moving = sorted((j, i) for i, j in leaving.items())
        merged: list[Op] = []
        k = 0
        for op in out:
            if type(op) is not Removed:
                while k < len(moving) and moving[k][0] < cast(Added, op).j:
                    j, i = moving[k]
                    merged.append(Moved(i, j, a[i - a_off], b[j - b_off]))
                    k += 1
            merged.append(op)
        merged.extend(Moved(i, j, a[i - a_off], b[j - b_off]) for j, i in moving[k:])
        out = merged
    return out


def unmove(ops: list[Op]) -> list[Op]:
    """``ops`` (of whole lists, with absolute indices) without the moves that are none: an
    item whose rank among the kept items is the same on both sides stays where it is (an
    edit in place, or nothing). Moves matched across the regions of a chunked list, which
    ``settle`` did not see together, may be such; no item is read for this."""
    moves = [op for op in ops if type(op) is Moved]
    if not moves:
        return ops
    gone = sorted(op[0] for op in ops if type(op) is Removed or type(op) is Moved)
    placed = sorted(op.j for op in ops if type(op) is Added or type(op) is Moved)
    settled: set[int] = set()
    for move in moves:
        at_a, at_b = bisect_left(gone, move.i), bisect_left(placed, move.j)
        if move.i - at_a == move.j - at_b:      # as many kept items before it on each side
            del gone[at_a], placed[at_b]
            settled.add(move.i)
    if not settled:
        return ops
    out: list[Op] = []
    for op in ops:
        if type(op) is Moved and op.i in settled:
            if not same_exactly(op.old, op.new):
                out.append(Pair(op.i, op.j, op.old, op.new))
            continue
        out.append(op)
    return out


def _heaviest_increasing(candidates: list[tuple[int, int, int, bool]]) -> list[bool]:
    """Which of ``candidates`` ``(i, j, weight, _)``, sorted by ``i`` (each ``i`` and each
    ``j`` once), form the heaviest chain increasing in ``j`` too: a longest increasing
    subsequence with weights, in O(n log n) (a Fenwick tree of the best chain ending below
    each ``j``)."""
    ranks = {j: r + 1 for r, j in enumerate(sorted(c[1] for c in candidates))}
    size = len(ranks)
    tree_best = [0] * (size + 1)
    tree_at = [-1] * (size + 1)
    before = [-1] * len(candidates)
    for k, (_, j, weight, _) in enumerate(candidates):
        r = ranks[j] - 1        # the best chain ending at a rank below this one
        best, at = 0, -1
        while r > 0:
            if tree_best[r] > best:
                best, at = tree_best[r], tree_at[r]
            r -= r & -r
        before[k] = at
        total = best + weight
        r = ranks[j]
        while r <= size:
            if total > tree_best[r]:
                tree_best[r], tree_at[r] = total, k
            r += r & -r
    best, at = 0, -1
    r = size
    while r > 0:
        if tree_best[r] > best:
            best, at = tree_best[r], tree_at[r]
        r -= r & -r
    chosen = [False] * len(candidates)
    while at >= 0:
        chosen[at] = True
        at = before[at]
    return chosen

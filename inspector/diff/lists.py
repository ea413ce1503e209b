"""List alignment: trim the equal ends, then match the middle by item fingerprints.

Appending to a list of 500 costs 500 C-level comparisons and reports only the new items;
an insertion in the middle is one insertion, not a cascade of changed indices. An item
removed at one place and added, equal, at another is reported as moved.

Ops are NamedTuples, one class per kind: ``Pair(i, j, old, new)`` (an edited item: compare
a[i] with b[j] in depth), ``Replace(i, j, old, new)`` (a different item in the same place),
``Removed(i, old)``, ``Added(j, new)`` and ``Moved(i, j, item)``; indices are absolute.
"""

from _thread import _local
from itertools import compress
from math import copysign

import msgpack
from operator import eq, ne
from typing import Any, NamedTuple, TypeAlias
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
    """a[i] is b[j], at another place."""

    i: int
    j: int
    item: Any


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
    """Ops turning list ``a`` into ``b`` (see module docstring), before move detection."""
    prefix, suffix = trim(a, b)
    mid_a = a[prefix:len(a) - suffix]
    mid_b = b[prefix:len(b) - suffix]
    return _align_middle(mid_a, mid_b, a_off + prefix, b_off + prefix)


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
    keys_a = [fingerprint(x) for x in a]
    keys_b = [fingerprint(y) for y in b]
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
            if keys_a[i1 + k] not in loose_b and keys_b[j1 + k] not in loose_a and similar(x, y):
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
    return [_new(Pair, (a_off + k, b_off + k, a[k], b[k])) if similar(a[k], b[k])
            else _new(Replace, (a_off + k, b_off + k, a[k], b[k])) for k in differing]


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
        ops.append(Moved(a_off + source, b_off + k, b[k]))
    return ops


def detect_moves(ops: list[Op]) -> list[Op]:
    """Replace a removed item and an equal added item by one ``Moved`` op."""
    removed = [(pos, op) for pos, op in enumerate(ops) if type(op) is Removed]
    if not removed or not any(type(op) is Added for op in ops):
        return ops
    by_key: dict[Any, list[int]] = {}
    for pos, op in enumerate(ops):
        if type(op) is Added:
            by_key.setdefault(fingerprint(op.new), []).append(pos)
    out: list[Op | None] = list(ops)
    for pos, (i, x) in removed:
        candidates = by_key.get(fingerprint(x))
        if not candidates:
            continue
        for n, target in enumerate(candidates):
            j, y = ops[target][:2]
            if same(x, y):
                out[target] = Moved(i, j, y)
                out[pos] = None
                del candidates[n]
                break
    return [op for op in out if op is not None]

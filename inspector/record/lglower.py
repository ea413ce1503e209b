"""Channel values of one InspectorSaver lane → the structural form stored as pieces, and back.

Every put lowers every item of every channel again, so a value changed *in place* anywhere
in the state is always stored as it now is. An object with a ``__dict__`` (LangChain
messages, pydantic models, dataclasses) becomes a typed leaf holding ``serde.dumps_typed``
bytes, serialized again only when the object is new or its state changed.

How a change is seen, exactly and without serializing: an object's state (its ``__dict__``
and pydantic's extra fields) is fingerprinted by a *strict* msgpack encoding (ormsgpack with
every pass-through option: only exact dicts with str keys, lists, str, int up to 64 bits,
float, bool, None and bytes are encoded; any subclass, tuple, enum, date, model or other
object makes it refuse). Equal fingerprints are then equal states exactly: types (``1``,
``True``, ``1.0``), float signs and key order included, which ``==`` ignores; bytes and a
bytearray of the same content fingerprint alike, and LangGraph's serializer writes them
alike too. A message history is checked in groups of 64 messages: a group holding the
very objects it held at the last put (or the copies ``revive`` made of them) is encoded in
one C call and compared, byte for byte, with the group's fingerprint. A state the strict encoding refuses
is compared by its pickle instead (pickled in this process from the caller's own object;
nothing read from a store is ever unpickled).

``revive`` hands ``get_tuple`` fresh deep copies of the head's objects without
deserializing them: their states are decoded from the fingerprints (once per group, into a
private snapshot) and each copy's ``__dict__`` is a copy of its snapshot's with new
containers (immutable values are shared), into new objects which the next put recognizes. What is known is kept
for two generations (the put before and this one): memory follows the live state.
"""

from __future__ import annotations

import functools
import gc
import operator
import pickle
import sys
import weakref
from itertools import accumulate, chain, compress, repeat
from operator import is_
from collections.abc import Iterator
from typing import Any, NamedTuple

import msgpack
import ormsgpack
import pydantic
from langgraph.checkpoint.serde.base import SerializerProtocol

from inspector.codec.encoded import heavy_print
from inspector.codec.gcpause import gc_paused

__all__ = ["LEAF", "FrozenMatches", "Lowering", "raise_value"]

LEAF = "__lg__"             # a typed leaf: {"__lg__": serde type tag, "b": serde bytes}
_INT_MIN, _INT_MAX = -(2 ** 63), 2 ** 64 - 1
_PLAIN_LEAVES = (str, bool, float, type(None), bytes)
_BULK_MIN = 16              # lists this long of pydantic models are checked and copied in bulk
_GROUP = 64                 # models encoded or decoded by one call (buffers small enough to be reused)
_NEW_MAX = 4                # unknown items of a group looked for in the other groups beyond this many


class _Known(NamedTuple):
    """What is known of one object: its leaf, and the fingerprints of its state when it was serialized."""

    obj: Any                  # the object itself (so its id stays its own while known)
    cls: type
    leaf: dict                # its typed leaf
    fset: frozenset | None    # pydantic's fields set (None: not a pydantic model)
    fp: bytes                 # strict msgpack of its __dict__ (plain) or pickle of its state
    xfp: bytes                # strict msgpack of its __pydantic_extra__ (plain pydantic models)
    plain: bool               # fingerprinted by strict msgpack (else by pickle)


class _Group(NamedTuple):
    """What is known of a run of up to ``_GROUP`` consecutive models of a long list (a slice of
    a message history): checked, copied and carried to the next put as one."""

    objs: tuple               # the objects themselves, in order
    types: tuple              # their classes
    fsets: tuple              # their pydantic fields sets (frozensets)
    fp: bytes                 # strict msgpack of [their __dict__s, their __pydantic_extra__s]
    leaves: list              # their typed leaves
    snap: tuple | None = None  # their states decoded from ``fp`` (private: copies are made from it)
    keys: tuple = ()          # per object, the keys of its state holding a container
    mutable: tuple = ()       # strict msgpacks of [per object, those containers; their extras], one
                              # per run of objects as the group grew (earlier runs are not encoded again)
    at: tuple = ()            # for each of those containers, its object's place in the group ...
    at_keys: tuple = ()       # ... and its key
    reusable: bool = False    # no container holds an item, and no value is bytes (or a bytearray)
    flat: Any = None          # takes those containers, in ``at`` order, from all the states' values in order
    places: tuple = ()        # ... at these places among those values
    values: int = 0           # how many values the states hold in all
    refs: list | None = None  # what ``gc.get_referents`` of the objects gives while they are as known (``_layout``)
    hp: tuple | None = None   # the ``heavy_print`` of [states, extras] when ``fp`` is big (``_print_of``)


_NOTHING = object()
_UNKNOWN = _Known(_NOTHING, type(None), {}, None, b"", b"", False)
_KINDS: dict[type, bool | None] = {}
_STRICT = functools.reduce(operator.or_, (getattr(ormsgpack, name) for name in dir(ormsgpack)
                                          if name.startswith("OPT_PASSTHROUGH_")))
_strict = functools.partial(ormsgpack.packb, option=_STRICT)
_array_header = msgpack.Packer().pack_array_header
_ATTR_DICT = operator.attrgetter("__dict__")
_ATTR_EXTRA = operator.attrgetter("__pydantic_extra__")
_ATTR_PRIVATE = operator.attrgetter("__pydantic_private__")
_ATTR_FSET = operator.attrgetter("__pydantic_fields_set__")
_K_OBJ, _K_CLS, _K_LEAF, _K_FSET, _K_FP, _K_XFP, _K_PLAIN = (operator.itemgetter(i) for i in range(7))
_NEW_KNOWN = functools.partial(tuple.__new__, _Known)
_PAIR = b"\x92"             # msgpack's header of a two-item array


class Lowering:
    """Channel values of one lane → the structural form stored as pieces (and back)."""

    def __init__(self) -> None:
        self.forget()

    def forget(self) -> None:
        """Drop everything known (after a failed transaction or a deletion)."""
        self._known: dict[int, _Known] = {}        # this generation: id(object) → what is known
        self._old_known: dict[int, _Known] = {}    # the generation before
        self._put_leaves: dict[int, _Known] = {}   # id(leaf) → known, for the leaves lowered since the last put
        self._leaf_data: dict[int, _Known] = {}    # the same for the state of the last put (``revive``)
        self._groups: dict[int, _Group] = {}       # this generation: id(first object) → its group
        self._old_groups: dict[int, _Group] = {}   # the generation before
        self._put_lists: dict[int, tuple[list, list[_Group]]] = {}   # id(leaves) → (leaves, groups) since the last put
        self._list_data: dict[int, tuple[list, list[_Group]]] = {}   # the same for the state of the last put
        self._index: dict[int, _Group] | None = None   # id(object) → its group (built when needed)
        self._exploded: dict[int, tuple[_Group, dict[int, _Known]]] = {}   # id(group) → what it knows per object

    # -- lowering ----------------------------------------------------------------------
    def lower(self, value: Any, serde: SerializerProtocol) -> Any:
        """``value`` in the structural form: plain containers and scalars stay, every other
        value is a typed leaf."""
        kind = type(value)
        if kind in _PLAIN_LEAVES:
            return value
        if kind is int:
            return value if _INT_MIN <= value <= _INT_MAX else self.leaf(value, serde)
        if kind is list:
            if len(value) >= _BULK_MIN:
                bulk = self._models(value, serde)
                if bulk is not None:
                    return bulk
            return [self.lower(v, serde) for v in value]
        if kind is dict and LEAF not in value and all(type(k) is str for k in value):
            return {k: self.lower(v, serde) for k, v in value.items()}
        if kind is bytearray:     # LangGraph's savers write a checkpoint's values in one encoding: bytes
            return bytes(value)
        return self.leaf(value, serde)

    def leaf(self, value: Any, serde: SerializerProtocol) -> dict:
        """The typed leaf of ``value`` (its ``dumps_typed`` bytes), serialized again only if
        its state changed since it was last seen."""
        fields = _fast_kind(type(value))
        if fields is None or (fields and value.__pydantic_private__ is not None):
            return _dump(value, serde)
        key = id(value)
        known = self._known.get(key) or self._old_known.get(key, _UNKNOWN)
        if not _same(value, known, fields):
            made = _record(value, fields, serde)
            if made is None:
                return _dump(value, serde)
            known = made
        self._known[key] = known
        self._put_leaves[id(known.leaf)] = known
        return known.leaf

    def keep(self, form: Any) -> Any:
        """``form``, the lowered value of a channel at the last put, stored again as it is (a
        channel LangGraph did not change, see ``InspectorSaver.put``): what is known of it is
        carried into this put's generation, so ``revive`` still copies it from fingerprints."""
        kind = type(form)
        if kind is list:
            grouped = self._list_data.get(id(form))
            if grouped is not None and grouped[0] is form:
                self._put_lists[id(form)] = grouped
            else:
                for item in form:
                    self.keep(item)
        elif kind is dict:
            if LEAF in form:
                known = self._leaf_data.get(id(form))
                if known is not None and known.leaf is form:
                    self._put_leaves[id(form)] = known
            else:
                for item in form.values():
                    self.keep(item)
        return form

    def _models(self, value: list, serde: SerializerProtocol) -> list | None:
        """``lower`` of a long list of pydantic models (a message history), ``_GROUP`` items at
        a time: a group holding the very objects it held at the last put (or the copies
        ``revive`` made of them) is checked by one strict encoding compared with its
        fingerprint; new, changed or pickle-compared items take a Python step. None when the
        list holds anything else."""
        if not all(_fast_kind(t) is True for t in set(map(type, value))):
            return None
        leaves: list = []
        groups: list[_Group] = []
        find, find_old = self._groups.get, self._old_groups.get
        for lo in range(0, len(value), _GROUP):
            chunk = value[lo:lo + _GROUP]
            first = chunk[0]
            group = find(id(first)) or find_old(id(first))
            if group is not None and group.objs and group.objs[0] is first:
                size = len(group.objs)
                if size == len(chunk) and _group_same(chunk, group):
                    made: _Group | None = group
                elif size < len(chunk) and _group_same(chunk[:size], group):
                    # the items the group held are unchanged (appends to the history's tail)
                    made = self._grown(chunk, group, serde) or self._items(chunk, list(_explode(group)), serde)
                else:
                    made = self._items(chunk, _explode_known(group), serde)
            else:
                made = self._items(chunk, None, serde)
            if made is None:
                return None
            self._groups[id(first)] = made
            groups.append(made)
            leaves.extend(made.leaves)
        self._put_lists[id(leaves)] = (leaves, groups)
        return leaves

    def _grown(self, value: list, group: _Group, serde: SerializerProtocol) -> _Group | None:
        """The group of ``value``, whose first items are ``group``'s objects just found
        unchanged (``_group_same``) and the rest appended: only the appended items are looked
        at (known ones compared with their fingerprints, the others serialized), and the
        group's fingerprint is the old one with theirs joined in (a msgpack array is its items
        back to back), so the old states are not encoded again. None where an appended item
        has a private attribute or is compared by its pickle: ``_items`` does the general work."""
        size, n = len(group.objs), len(value)
        added = value[size:]
        if list(map(_ATTR_PRIVATE, added)).count(None) != len(added):
            return None
        made: list[_Known] = []
        for item in added:
            known = self._known.get(id(item)) or self._old_known.get(id(item), _UNKNOWN)
            if not _same(item, known, True):
                found = _record(item, True, serde)
                if found is None:
                    return None
                known = found
            if not known.plain:
                return None
            made.append(known)
        self._known.update(zip(map(id, added), made))
        # ``group.fp`` is [the old states, their extras] as they are now (just compared): the
        # extras' encoding is its tail, the states' what lies between the two array heads
        head = len(_array_header(size))
        extras = _strict(list(map(_ATTR_EXTRA, value[:size])))
        states = group.fp[1 + head:len(group.fp) - len(extras)]
        fp = b"".join((_PAIR, _array_header(n), states, *map(_K_FP, made),
                       _array_header(n), extras[head:], *map(_K_XFP, made)))
        objs, types, fsets = tuple(added), tuple(map(type, added)), tuple(map(_K_FSET, made))
        refs = None
        if group.refs is not None:
            tail = _layout(objs, types, fsets, list(map(_ATTR_DICT, added)), list(map(_ATTR_EXTRA, added)))
            refs = None if tail is None else group.refs + tail
        grown = _Group(group.objs + objs, group.types + types, group.fsets + fsets, fp,
                       group.leaves + list(map(_K_LEAF, made)), refs=refs,
                       hp=_print_of(fp, list(map(_ATTR_DICT, value)), list(map(_ATTR_EXTRA, value))))
        if group.snap is None:
            return grown
        # the old objects' snapshot stays; the appended ones' states are decoded from their
        # fingerprints (their own, private) and joined to it
        return _with_snapshot(grown, [ormsgpack.unpackb(k.fp) for k in made],
                              [ormsgpack.unpackb(k.xfp) for k in made], group)

    def _items(self, value: list, hints: list[_Known] | None, serde: SerializerProtocol) -> _Group | None:
        """The group of ``value`` from its items one by one: known ones (``hints``, then this
        lane's objects) compared with their fingerprints, the others serialized and
        fingerprinted. ``hints`` may be shorter than ``value``; an item it knows counts as
        seen unchanged only once compared."""
        if not all(map(is_, map(_ATTR_PRIVATE, value), repeat(None))):
            return None
        ids = list(map(id, value))
        known = list(map(self._known.get, ids, map(self._old_known.get, ids, repeat(_UNKNOWN))))
        if hints:
            for i, hint in enumerate(hints):
                if hint.obj is value[i]:
                    known[i] = hint
        missing = [i for i, hit in enumerate(map(is_, map(_K_OBJ, known), value)) if not hit]
        if len(missing) > _NEW_MAX and (self._groups or self._old_groups):
            # more than a few appended items: objects of other groups (the list was cut or
            # shifted), found through what those groups know
            for i in missing:
                known[i] = self._in_groups(value[i])
        seen = list(map(operator.and_, map(is_, map(_K_OBJ, known), value), map(_K_PLAIN, known)))
        if not (all(seen) and _all_same(value, known)):
            if any(seen):
                chosen = list(compress(range(len(value)), seen))
                if not _all_same([value[i] for i in chosen], [known[i] for i in chosen]):
                    for i in chosen:       # something changed in place: find it
                        seen[i] = _same(value[i], known[i], True)
            for i in [i for i, hit in enumerate(seen) if not hit]:
                item = value[i]
                if not _same(item, known[i], True):
                    made = _record(item, True, serde)
                    if made is None:
                        return None
                    known[i] = made
        if not all(map(_K_PLAIN, known)):
            # an item compared by its pickle: its group is checked item by item at every put
            self._known.update(zip(ids, known))
            leaves = list(map(_K_LEAF, known))
            self._put_leaves.update(zip(map(id, leaves), known))
            return _Group((), (), (), b"", leaves)
        self._known.update(zip(ids, known))
        dicts, extras = list(map(_ATTR_DICT, value)), list(map(_ATTR_EXTRA, value))
        try:
            fp = _strict([dicts, extras])
        except TypeError:       # changed since it was compared (another thread): not grouped
            return None
        objs, types, fsets = tuple(value), tuple(map(type, value)), tuple(map(_K_FSET, known))
        return _Group(objs, types, fsets, fp, list(map(_K_LEAF, known)),
                      refs=_layout(objs, types, fsets, dicts, extras), hp=_print_of(fp, dicts, extras))

    def _in_groups(self, obj: Any) -> _Known:
        """What a group of this or the last generation knows of ``obj`` (``_UNKNOWN`` if none)."""
        if self._index is None:
            self._index = {}
            for groups in (self._old_groups, self._groups):
                for each in groups.values():
                    self._index.update(zip(map(id, each.objs), repeat(each)))
        group = self._index.get(id(obj))
        if group is None:
            return _UNKNOWN
        key = id(group)
        if key not in self._exploded:
            self._exploded[key] = (group, {id(k.obj): k for k in _explode(group)})
        return self._exploded[key][1].get(id(obj), _UNKNOWN)

    def rotate(self) -> None:
        """After a put: what it lowered is the generation before; older objects are dropped."""
        self._leaf_data, self._put_leaves = self._put_leaves, {}
        self._old_known, self._known = self._known, {}
        self._list_data, self._put_lists = self._put_lists, {}
        self._old_groups, self._groups = self._groups, {}
        self._index, self._exploded = None, {}

    # -- fresh copies ------------------------------------------------------------------
    def revive(self, form: Any, serde: SerializerProtocol) -> Any:
        """``raise_value`` for the state this lane last put: a typed leaf made from an object
        comes back as a fresh deep copy of that object as it was stored (decoded from its
        fingerprint, never from the store), which the next put recognizes without
        serializing it again."""
        # the copies take the place of the objects last put: those are let go (should a caller
        # put one of them again, it is fingerprinted again), so the objects of one state at
        # most are kept alive for the next put besides the copies (memory and collector work)
        self._old_known, self._known = self._known, {}
        self._old_groups, self._groups = self._groups, {}
        self._index, self._exploded = None, {}
        with gc_paused():   # thousands of new containers, no cycles: no collector passes over the heap
            return self._revive(form, serde)

    def _revive(self, form: Any, serde: SerializerProtocol) -> Any:
        kind = type(form)
        if kind is dict:
            if LEAF in form:
                return self._copies([form], serde)[0]
            return {k: self._revive(v, serde) for k, v in form.items()}
        if kind is list:
            grouped = self._list_data.get(id(form))
            if grouped is not None and grouped[0] is form:
                return self._group_copies(grouped[1], serde)
            if len(form) >= _BULK_MIN and all(type(f) is dict and LEAF in f for f in form):
                return self._copies(form, serde)
            return [self._revive(v, serde) for v in form]
        return form

    def _group_copies(self, groups: list[_Group], serde: SerializerProtocol) -> list:
        """Fresh objects for a list lowered by groups, which become those groups' objects.

        A group's states are decoded from its fingerprint once, into a private snapshot; each
        copy is then a new object whose ``__dict__`` is a copy of its snapshot's, sharing
        its immutable values (str, numbers, bytes, None) and holding new containers decoded
        for it (one C call a group)."""
        out: list = []
        setattr_ = object.__setattr__
        for group in groups:
            if not group.objs:      # a group of pickle-compared items: copied one by one
                out.extend(self._copies(group.leaves, serde))
                continue
            if group.snap is None:
                group = _snapshot(group)
            assert group.snap is not None
            if _may_hand_out(group):
                # nothing but this group can reach these objects, and they are as stored: a
                # fresh copy could not be told from them, so they are handed out themselves
                self._groups[id(group.objs[0])] = group
                out.extend(group.objs)
                continue
            states = list(map(dict.copy, group.snap))
            inner, extras = _mutable_parts(group.mutable)
            list(map(dict.update, states, map(zip, group.keys, inner)))
            objs = list(map(object.__new__, group.types))
            list(map(setattr_, objs, repeat("__dict__"), states))
            list(map(setattr_, objs, repeat("__pydantic_extra__"), extras))
            list(map(setattr_, objs, repeat("__pydantic_fields_set__"), map(set, group.fsets)))
            list(map(setattr_, objs, repeat("__pydantic_private__"), repeat(None)))
            made = tuple(objs)
            self._groups[id(objs[0])] = group._replace(
                objs=made, refs=_layout(made, group.types, group.fsets, states, extras))
            out.extend(objs)
        return out

    def _copies(self, leaves: list, serde: SerializerProtocol) -> list:
        """Fresh objects for typed leaves: those made from a known object are decoded from
        its fingerprint, one class at a time; the others are deserialized."""
        known = list(map(self._leaf_data.get, map(id, leaves), repeat(_UNKNOWN)))
        if all(map(is_, map(_K_LEAF, known), leaves)) and all(map(_K_PLAIN, known)):
            classes = set(map(_K_CLS, known))
            if len(classes) == 1:
                return self._decoded(known)
        out: list = [None] * len(leaves)
        groups: dict[type, list[int]] = {}
        for i, (k, leaf) in enumerate(zip(known, leaves)):
            if k.leaf is not leaf:
                out[i] = _load(leaf, serde)
            elif not k.plain:
                out[i] = self._loaded(k, serde)
            else:
                groups.setdefault(k.cls, []).append(i)
        for members in groups.values():
            for i, obj in zip(members, self._decoded([known[i] for i in members])):
                out[i] = obj
        return out

    def _decoded(self, known: list[_Known]) -> list:
        """New objects of one class from their fingerprints, in C calls for them all."""
        n = len(known)
        cls = known[0].cls
        fps = list(map(_K_FP, known))
        states: list = []
        for lo in range(0, n, _GROUP):
            states.extend(ormsgpack.unpackb(_joined(known[lo:lo + _GROUP], _K_FP)))
        objs: list = list(map(object.__new__, repeat(cls, n)))
        setattr_ = object.__setattr__
        list(map(setattr_, objs, repeat("__dict__"), states))
        fsets = list(map(_K_FSET, known))
        if fsets[0] is not None:
            list(map(setattr_, objs, repeat("__pydantic_extra__"), ormsgpack.unpackb(_joined(known, _K_XFP))))
            list(map(setattr_, objs, repeat("__pydantic_fields_set__"), map(set, fsets)))
            list(map(setattr_, objs, repeat("__pydantic_private__"), repeat(None)))
        self._known.update(zip(map(id, objs), map(_NEW_KNOWN, zip(
            objs, repeat(cls), map(_K_LEAF, known), fsets, fps, map(_K_XFP, known), repeat(True)))))
        return objs

    def _loaded(self, known: _Known, serde: SerializerProtocol) -> Any:
        """A copy of an object compared by pickle (its state is not plain data): deserialized
        from its leaf, so that it is what a read after a restart gives — the serializer's
        own round trip, in which a tuple inside comes back a list — and known again by its
        state as loaded, so that the next put does not serialize it again."""
        obj: Any = _load(known.leaf, serde)
        fields = known.fset is not None
        prints = _prints(obj, fields) if type(obj) is known.cls else None
        if prints is not None:
            fset = frozenset(obj.__pydantic_fields_set__) if fields else None
            self._known[id(obj)] = known._replace(obj=obj, fset=fset, fp=prints[0], xfp=prints[1], plain=prints[2])
        return obj


class FrozenMatches:
    """The piece encoder's ``matches`` for a lane's lowered states: a run of items found
    unchanged is unchanged again while it holds the very same objects.

    Exact because every container of a lowered state is either new at each put (``lower``
    builds plain dicts and lists afresh) or a typed leaf, which nothing changes once made;
    the rest are immutable scalars. Saves packing every unchanged chunk of a long history
    (1 KB a message) at each put. What was matched is kept until the next ``rotate``.
    """

    def __init__(self, matches: Any) -> None:
        self._matches = matches
        self._seen: dict[int, tuple[bytes, list]] = {}   # id(fp) → (fp, the items it matched)
        self._old: dict[int, tuple[bytes, list]] = {}

    def __call__(self, value: Any, fp: bytes) -> bool:
        key = id(fp)
        hit = self._seen.get(key) or self._old.get(key)
        if (hit is not None and hit[0] is fp and type(value) is list and len(hit[1]) == len(value)
                and all(map(is_, hit[1], value))):
            self._seen[key] = hit
            return True
        if not self._matches(value, fp):
            return False
        if type(value) is list:
            self._seen[key] = (fp, value)
        return True

    def rotate(self) -> None:
        """After an encode: runs not matched by it are forgotten."""
        self._old, self._seen = self._seen, {}

    def forget(self) -> None:
        """Drop everything (with the encoder's own cache)."""
        self._old, self._seen = {}, {}


# -- fingerprints ----------------------------------------------------------------------------
def _record(value: Any, fields: bool, serde: SerializerProtocol) -> _Known | None:
    """Serialize ``value`` and fingerprint its state; None when it cannot be fingerprinted."""
    prints = _prints(value, fields)
    if prints is None:      # something in it cannot be pickled: serialize it at every put
        return None
    fset = frozenset(value.__pydantic_fields_set__) if fields else None
    return _Known(value, type(value), _dump(value, serde), fset, *prints)


def _prints(value: Any, fields: bool) -> tuple[bytes, bytes, bool] | None:
    """The fingerprints of ``value``'s state (and pydantic extras), and whether they are its
    strict encodings (plain data) or its pickle; None when it cannot be pickled either."""
    try:
        return _strict(value.__dict__), (_strict(value.__pydantic_extra__) if fields else b""), True
    except TypeError:       # not plain data: compared by its pickle
        try:
            return _state_print(value, fields), b"", False
        except Exception:
            return None


def _same(value: Any, known: _Known, fields: bool) -> bool:
    """Whether ``value`` is the object ``known`` was recorded from, in the same state."""
    if known.obj is not value or type(value) is not known.cls:
        return False
    obj: Any = known.obj
    if fields and (obj.__pydantic_private__ is not None or obj.__pydantic_fields_set__ != known.fset):
        return False
    try:
        if known.plain:
            return _strict(obj.__dict__) == known.fp and (not fields or _strict(obj.__pydantic_extra__) == known.xfp)
        return _state_print(obj, fields) == known.fp
    except Exception:       # no longer fingerprints as it did: changed
        return False


def _all_same(values: list, known: list[_Known]) -> bool:
    """``_same`` for many pydantic models known as plain: their states encoded a group at a
    time (one C call per ``_GROUP`` models) and compared with their fingerprints joined."""
    if not (all(map(is_, map(type, values), map(_K_CLS, known)))
            and all(map(operator.eq, map(_ATTR_FSET, values), map(_K_FSET, known)))):
        return False
    try:
        if _strict(list(map(_ATTR_EXTRA, values))) != _joined(known, _K_XFP):
            return False
        for lo in range(0, len(values), _GROUP):
            if _strict(list(map(_ATTR_DICT, values[lo:lo + _GROUP]))) != _joined(known[lo:lo + _GROUP], _K_FP):
                return False
    except TypeError:
        return False
    return True


def _group_same(value: list, group: _Group) -> bool:
    """Whether ``value`` holds the very objects of ``group``, in the same states."""
    return (len(value) == len(group.objs) and all(map(is_, value, group.objs))
            and _states_of(value, group) is not None)


def _states_of(objs: list | tuple, group: _Group) -> tuple[list, list, list] | None:
    """The ``__dict__``s, extras and fields sets of ``objs`` (fetched once each) when their
    states are ``group``'s: classes, fields sets and no private attributes compared, and the
    states by one strict encoding; else None. (Each comparison is one C call over the group:
    classes and ``None`` compare by identity.) With the group's ``refs``, one C call fetches
    all those parts and one compares them with the layout recorded."""
    if group.refs is not None:
        try:
            found = gc.get_referents(*objs)
            # (a part replaced by another compares by value: a state then by its encoding)
            if found != group.refs:
                return None
            dicts, extras = found[_AT_DICT::_PARTS], found[_AT_EXTRA::_PARTS]
            if not _same_states(dicts, extras, group):
                return None
        except Exception:   # a replaced part that cannot be compared or encoded: changed
            return None
        return dicts, extras, found[_AT_FSET::_PARTS]
    try:
        n = len(objs)
        fsets = list(map(_ATTR_FSET, objs))
        dicts = list(map(_ATTR_DICT, objs))
        extras = list(map(_ATTR_EXTRA, objs))
        if (tuple(map(type, objs)) != group.types or list(map(_ATTR_PRIVATE, objs)).count(None) != n
                or tuple(fsets) != group.fsets or not _same_states(dicts, extras, group)):
            return None
    except (TypeError, AttributeError):
        return None
    return dicts, extras, fsets


def _same_states(dicts: list, extras: list, group: _Group) -> bool:
    """Whether the states and extras are ``group``'s exactly: by their strict encoding, or by
    their heavy print when the group has one (its messages hold megabytes of text or images:
    walked, not packed again, see ``_print_of``). Raises TypeError for a state that has no
    strict encoding."""
    if group.hp is not None:
        return heavy_print([dicts, extras], _GROUP_NODES) == group.hp
    return _strict([dicts, extras]) == group.fp


def _print_of(fp: bytes, dicts: list, extras: list) -> tuple | None:
    """The heavy print of a group's states when their encoding ``fp`` is so big that walking
    them costs less than packing them again (``_GROUP_PRINT`` bytes: a pack that big maps its
    buffer afresh, about 0.35 ns a byte, where the walk costs about 150 ns a value)."""
    if len(fp) < _GROUP_PRINT:
        return None
    return heavy_print([dicts, extras], _GROUP_NODES)


_GROUP_PRINT = 1024 * 1024     # bytes of a group's encoding from which it keeps a heavy print
_GROUP_NODES = 8192            # values of the group's states walked at most


def _may_hand_out(group: _Group) -> bool:
    """Whether ``revive`` may hand out the group's objects themselves: a fresh copy could not
    be told from them. Nothing but the group holds them (no other reference, no weak one),
    they are as stored (``_states_of``), their states held no item in a container nor bytes
    when the snapshot was made, and no other reference exists to their ``__dict__``, fields
    set or extras, or to a container of their states (which are empty, so nothing lies
    further in): no one else can ever see or change them."""
    objs = group.objs
    n = len(objs)
    if (not group.reusable or list(map(_refs, objs)) != [_HELD_ALONE] * n
            or any(map(weakref.getweakrefcount, objs))):
        return False
    parts = _states_of(objs, group)
    if parts is None:
        return False
    dicts, extras, fsets = parts
    alone = [_HELD_IN_LIST] * n
    # (the group's ``refs`` holds the states and extras too, not the fields sets: copies)
    kept = alone if group.refs is None else [_HELD_IN_LIST + 1] * n
    if list(map(_refs, dicts)) != kept or list(map(_refs, fsets)) != alone:
        return False
    if extras.count(None) != n and list(map(_refs, extras)) != kept:
        return False
    # the states are as ``group.fp``: their containers sit where the snapshot's do (``flat``,
    # their places among all the states' values in order) and are empty, and no value is
    # bytes, so none is a bytearray or a memoryview (mutable, and fingerprinted as bytes);
    # the rest is immutable
    if not group.at:
        return True
    if group.refs is not None:
        # the states' values in one C call: a dict with str keys alone gives its values (in
        # their order, or else any picked here is not one of its containers: checked); with
        # other keys it gives them too, and their number tells
        values = gc.get_referents(*dicts)
        if len(values) != group.values:
            return False
    else:
        values = list(chain.from_iterable(map(dict.values, dicts)))
    inner = group.flat(values)
    values.clear()      # ``inner`` alone holds them besides their states
    return (list(map(_refs, inner)) == [_HELD_IN_TUPLE] * len(group.at)
            and set(map(type, inner)) <= _CONTAINERS)


_CONTAINERS = {dict, list}


_refs = sys.getrefcount


def _held_counts() -> tuple[int, int, int]:
    """What ``_may_hand_out`` sees for an object only a tuple holds, for a part of an object
    only that object (and the list it builds) holds, and for a container of its state only
    the state (and the tuple it picks) holds: measured, not assumed."""
    class _Probe:
        pass
    probe = _Probe()
    probe.__dict__["x"] = []
    probe.__dict__["y"] = []
    held = (probe,)
    del probe
    dicts = [held[0].__dict__]
    values = list(chain.from_iterable(map(dict.values, dicts)))
    inner = _picker((0, 1))(values)
    values.clear()
    return next(map(_refs, held)), next(map(_refs, dicts)), next(map(_refs, inner))


def _picker(places: tuple) -> Any:
    """A C call taking the items at ``places`` of a list, always as a tuple."""
    if len(places) == 1:
        return lambda values, _at=places[0]: (values[_at],)
    return operator.itemgetter(*places)


_HELD_ALONE, _HELD_IN_LIST, _HELD_IN_TUPLE = _held_counts()


def _snapshot(group: _Group) -> _Group:
    """``group`` with the snapshot its copies are made from."""
    states, extras = ormsgpack.unpackb(group.fp)
    return _with_snapshot(group, states, extras)


def _with_snapshot(group: _Group, states: list, extras: list, base: _Group | None = None) -> _Group:
    """``group`` with the snapshot of its objects' ``states`` and ``extras`` (private, decoded
    from fingerprints); with ``base``, a group holding a snapshot of its first objects, they
    are the rest's and are joined to it."""
    prior = base.snap if base is not None else None
    offset, start = (len(prior), base.values) if base is not None and prior is not None else (0, 0)
    keys = tuple(tuple(k for k, v in state.items() if type(v) is dict or type(v) is list) for state in states)
    inner = [[state[k] for k in ks] for state, ks in zip(states, keys)]
    at = tuple(offset + i for i, ks in enumerate(keys) for _ in ks)
    at_keys = tuple(k for ks in keys for k in ks)
    reusable = (not any(chain.from_iterable(inner)) and not any(extras)
                and not any(type(v) is bytes for state in states for v in state.values()))
    starts = list(accumulate(map(len, states), initial=start))
    places = tuple(starts[i - offset] + list(states[i - offset]).index(k) for i, k in zip(at, at_keys))
    mutable = (_strict([inner, extras]),)
    if base is not None and prior is not None:
        # (the first objects' containers are not decoded and encoded again: a message's
        # content parts may hold megabytes of images)
        states, keys, mutable = [*prior, *states], base.keys + keys, base.mutable + mutable
        at, at_keys, places = base.at + at, base.at_keys + at_keys, base.places + places
        reusable = reusable and base.reusable
    return group._replace(snap=tuple(states), keys=keys, mutable=mutable, at=at,
                          at_keys=at_keys, reusable=reusable, places=places, values=starts[-1],
                          flat=_picker(places) if places else None)


def _mutable_parts(parts: tuple) -> tuple[list, list]:
    """A group's ``mutable`` decoded: per object, its containers; and the objects' extras."""
    if len(parts) == 1:
        inner, extras = ormsgpack.unpackb(parts[0])
        return inner, extras
    inner, extras = [], []
    for part in parts:
        more, more_extras = ormsgpack.unpackb(part)
        inner += more
        extras += more_extras
    return inner, extras


def _explode(group: _Group) -> Iterator[_Known]:
    """What is known of each object of ``group`` (its fingerprints from the group's)."""
    states, extras = ormsgpack.unpackb(group.fp)
    return map(_NEW_KNOWN, zip(group.objs, group.types, group.leaves, group.fsets, map(_strict, states),
                               map(_strict, extras), repeat(True)))


def _explode_known(group: _Group) -> list[_Known] | None:
    """``_explode`` of a group of plain items (None for one of pickle-compared items)."""
    return list(_explode(group)) if group.objs else None


def _joined(known: list[_Known], field: Any) -> bytes:
    """The fingerprints ``field`` of ``known`` as one msgpack array (what encoding their
    states as one list gives when they are unchanged)."""
    return b"".join(chain((_array_header(len(known)),), map(field, known)))


# ``gc.get_referents`` of a pydantic model gives its slots (sorted by name), its ``__dict__``
# and its class: checked against the attributes for every group before it is relied on
_PARTS = 5
_AT_EXTRA, _AT_FSET, _AT_PRIVATE, _AT_DICT, _AT_CLS = range(_PARTS)


def _layout(objs: tuple, types: tuple, fsets: tuple, dicts: list, extras: list) -> list | None:
    """What ``gc.get_referents(*objs)`` gives while the objects hold these classes, fields
    sets (compared by value: ``fsets`` are frozen copies), states and extras (by identity),
    and no private attributes: the group's ``refs``. None when the objects' parts do not come
    in that layout (another interpreter, a subclass with slots of its own)."""
    found = gc.get_referents(*objs)
    if (len(found) != _PARTS * len(objs) or not all(map(is_, found[_AT_DICT::_PARTS], dicts))
            or not all(map(is_, found[_AT_EXTRA::_PARTS], extras))
            or not all(map(is_, found[_AT_CLS::_PARTS], types))
            or found[_AT_PRIVATE::_PARTS].count(None) != len(objs) or found[_AT_FSET::_PARTS] != list(fsets)):
        return None
    return list(chain.from_iterable(zip(extras, fsets, repeat(None), dicts, types)))


def _state_print(value: Any, fields: bool) -> bytes:
    """The exact fingerprint of a state that is not plain data: its pickle."""
    if fields:
        return pickle.dumps((value.__dict__, value.__pydantic_extra__), 5)
    return pickle.dumps(value.__dict__, 5)


def _dump(value: Any, serde: SerializerProtocol) -> dict:
    tag, data = serde.dumps_typed(value)
    return {LEAF: tag, "b": data}


def _load(leaf: dict, serde: SerializerProtocol) -> Any:
    return serde.loads_typed((leaf[LEAF], leaf["b"]))


def _fast_kind(cls: type) -> bool | None:
    """How an object of ``cls`` is recorded and copied: True for a pydantic model with
    pydantic's own pickling, False for a plain ``__dict__`` object (default pickling, no
    slots), None for anything else (serialized at every put, deserialized at every read)."""
    if cls in _KINDS:
        return _KINDS[cls]
    kind: bool | None = None
    if issubclass(cls, pydantic.BaseModel):
        if (cls.__getstate__ is pydantic.BaseModel.__getstate__
                and cls.__setstate__ is pydantic.BaseModel.__setstate__
                and cls.__reduce_ex__ is object.__reduce_ex__ and cls.__reduce__ is object.__reduce__
                and cls.__new__ is object.__new__):
            kind = True
    elif (getattr(cls, "__getstate__", None) is object.__getstate__ and not hasattr(cls, "__setstate__")
          and cls.__reduce_ex__ is object.__reduce_ex__ and cls.__reduce__ is object.__reduce__
          and cls.__new__ is object.__new__ and not any("__slots__" in vars(c) for c in cls.__mro__[:-1])
          and "__dict__" in dir(cls)):
        kind = False
    if len(_KINDS) < 10_000:
        _KINDS[cls] = kind
    return kind


def raise_value(form: Any, serde: SerializerProtocol) -> Any:
    """The stored structural form back as LangGraph's values (always fresh containers)."""
    kind = type(form)
    if kind is dict:
        if LEAF in form:
            return serde.loads_typed((form[LEAF], form["b"]))
        return {k: raise_value(v, serde) for k, v in form.items()}
    if kind is list:
        return [raise_value(v, serde) for v in form]
    return form

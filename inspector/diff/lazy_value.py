"""Big stored values read on demand, for the State tab's tree (Qt-free).

A native state that ``size_hint`` calls big is not built whole: ``open_lazy`` turns its root
piece into what the tree shows, where each big part is a ``LazyValue`` — a chunked list or
map whose entries are read a page at a time (``entries``; only the chunks holding that page
are decoded), or a long string stored as a piece of its own whose first characters are read
without decompressing the rest (``LazyText``). Small parts are decoded as usual. Whatever
needs a whole value (Raw JSON, search, copy, save) calls ``materialize`` in a worker: it is
built within the read budgets, as ``Store.load`` builds a state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspector.codec import ChunkedList, ChunkedMap, Ref
from inspector.codec import expand
from inspector.diff.piece_view import PieceView
from inspector.diff.resolve import FetchMany, has_markers, prefetch
from inspector.lazy import LazyText, LazyValue, is_lazy, materialize
from inspector.model import replace

SMALL_REF = 64 * 1024       # a piece this small is read whole with the page that holds it
EAGER_REFS = 1024 * 1024    # a plain container whose small pieces sum to more is paged (LazyForm)
EAGER_ITEMS = 1000          # … and one with more items than this
PREFIX_BYTES = 2_000_000    # a long string at the top of a state: this much is read (the detail pane's limit)
PAGE_PREFIX = 16 * 1024     # … one on a page of a big list or map: this much (its preview and tooltip)
_STR8, _STR16, _STR32 = 0xD9, 0xDA, 0xDB
_MARKERS = (Ref, ChunkedList, ChunkedMap)
Peek = Callable[[bytes, int], bytes]


class _Stored(LazyValue):
    """A LazyValue over a stored form, read through a ``LazyReader``."""

    __slots__ = ("reader", "form")

    def __init__(self, reader: LazyReader, form: Any, kind: str, length: int, size: int) -> None:
        super().__init__(kind, length, size)
        self.reader, self.form = reader, form

    def materialize(self) -> Any:
        return self.reader.materialize(self.form)


class LazyList(_Stored):
    """A chunked list: a page of items decodes only the chunks that hold it."""

    __slots__ = ()

    def entries(self, start: int, stop: int) -> list[tuple[Any, Any]]:
        stop = min(stop, self.length)
        if start >= stop:
            return []
        found = self.reader.view.list_items(self.form, range(start, stop))
        return self.reader.shown_entries([(i, found[i]) for i in range(start, stop)])


class LazyMap(_Stored):
    """A chunked map: a page of entries decodes only the chunks that hold it."""

    __slots__ = ()

    def entries(self, start: int, stop: int) -> list[tuple[Any, Any]]:
        stop = min(stop, self.length)
        if start >= stop:
            return []
        found = self.reader.view.map_entries(self.form, range(start, stop))
        return self.reader.shown_entries([found[i] for i in range(start, stop)])


class LazyForm(_Stored):
    """A plain list or map of a piece whose many items refer to further pieces."""

    __slots__ = ()

    def entries(self, start: int, stop: int) -> list[tuple[Any, Any]]:
        form = self.form
        items = list(form.items())[start:stop] if isinstance(form, dict) else \
            list(enumerate(form[start:stop], start))
        return self.reader.shown_entries(items)


class StoredText(LazyText):
    """A long string stored as one piece: ``prefix`` holds its first characters (up to
    ``PREFIX_BYTES`` of UTF-8); ``materialize`` reads it whole."""

    __slots__ = ("reader", "form")

    def __init__(self, reader: LazyReader, form: Ref, length: int, prefix: str) -> None:
        super().__init__(length, form.size, prefix)
        self.reader, self.form = reader, form

    def materialize(self) -> Any:
        return self.reader.materialize(self.form)


class LazyReader:
    """Turns stored forms (decoded pieces, markers left) into what the tree shows."""

    def __init__(self, fetch: FetchMany, view: PieceView, peek: Peek | None) -> None:
        self.fetch, self.view, self.peek = fetch, view, peek
        self.prefix_bytes = PAGE_PREFIX

    def shown(self, form: Any) -> Any:
        """What the tree shows for one stored form."""
        kind = type(form)
        if kind is ChunkedList:
            return LazyList(self, form, "array", form.length, form.size)
        if kind is ChunkedMap:
            return LazyMap(self, form, "object", form.length, form.size)
        if kind is Ref:
            return self._ref(form)
        if kind is dict or kind is list:
            return self._plain(form)
        return form

    def shown_entries(self, items: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
        """``shown`` of each value; the small pieces of a page are read together."""
        small = [v for _, v in items if type(v) is Ref and v.size <= SMALL_REF]
        built = self._build(small) if small else {}
        return [(k, built[v.digest] if type(v) is Ref and v.digest in built else self.shown(v)) for k, v in items]

    def materialize(self, form: Any) -> Any:
        """A stored form built whole, within the read budgets."""
        table: dict[bytes, Any] = {}
        prefetch([form], table, self.fetch)
        table[expand.ROOT] = form
        return expand.resolve_all([expand.ROOT], table, "The value")[expand.ROOT]

    def _build(self, refs: list[Ref]) -> dict[bytes, Any]:
        table: dict[bytes, Any] = {}
        prefetch(refs, table, self.fetch)
        digests = list(dict.fromkeys(r.digest for r in refs))
        return expand.resolve_all(digests, table, "The value")

    def _plain(self, form: dict | list) -> Any:
        if not has_markers(form):
            return form
        values = form.values() if isinstance(form, dict) else form
        small = sum(v.size for v in values if type(v) is Ref and v.size <= SMALL_REF)
        if small > EAGER_REFS or len(form) > EAGER_ITEMS:
            return LazyForm(self, form, "object" if isinstance(form, dict) else "array", len(form),
                            sum(v.size for v in values if type(v) in _MARKERS))
        items = list(form.items()) if isinstance(form, dict) else list(enumerate(form))
        shown = self.shown_entries(items)
        return dict(shown) if isinstance(form, dict) else [v for _, v in shown]

    def _ref(self, ref: Ref) -> Any:
        if ref.size <= SMALL_REF:
            return self._build([ref])[ref.digest]
        if self.peek is not None:
            head = self.peek(ref.digest, self.prefix_bytes + 5)
            text = _text_head(head)
            if text is not None:
                return StoredText(self, ref, text[0], text[1])
        piece = self.view.deref(ref)
        if type(piece) in (dict, list) and has_markers(piece):   # its parts are read when it is opened
            return LazyForm(self, piece, "object" if type(piece) is dict else "array", len(piece), ref.size)
        return self.shown(piece)


def _text_head(head: bytes) -> tuple[int, str] | None:
    """(UTF-8 length, first characters) when ``head`` starts a msgpack string, else None."""
    if not head:
        return None
    first = head[0]
    if 0xA0 <= first <= 0xBF:
        length, start = first & 0x1F, 1
    elif first in (_STR8, _STR16, _STR32):
        width = {_STR8: 1, _STR16: 2, _STR32: 4}[first]
        if len(head) < 1 + width:
            return None
        length, start = int.from_bytes(head[1:1 + width], "big"), 1 + width
    else:
        return None
    body = head[start:start + length]
    for cut in range(4):     # the prefix may end inside a character
        try:
            return length, body[:len(body) - cut].decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            continue
    return length, body.decode("utf-8", "replace")


def open_lazy(store: Any, form: Any) -> Any:
    """What the tree shows for a native state's root form (see the module docstring)."""
    from inspector.diff.resolve import raw_fetcher, store_fetcher
    fetch = store_fetcher(store)
    peek = getattr(store, "peek_piece", None)
    reader = LazyReader(fetch, PieceView(fetch, raw_fetcher(store)), peek if callable(peek) else None)
    reader.prefix_bytes = PREFIX_BYTES      # the top level's long strings: what the detail pane shows
    try:
        return reader.shown(form)
    finally:
        reader.prefix_bytes = PAGE_PREFIX


__all__ = ["LazyForm", "LazyList", "LazyMap", "LazyText", "LazyValue", "StoredText", "is_lazy", "load_view",
           "materialize", "open_lazy"]


def load_view(store: Any, checkpoint_id: int | str) -> Any:
    """A checkpoint's Snapshot for showing: ``Store.load_view`` (``Store.load`` unless the
    adapter reads big parts on demand), except that a big native state (``size_hint`` over
    the window's thresholds) is not built: its ``state`` holds LazyValues for the big parts
    and ``meta["lazy"]`` is True."""
    from inspector.diff.checkpoints import stored_form
    from inspector.diff.piece_view import size_hint
    from inspector.diff.window import BIG_CHARS, BIG_NODES
    shell = getattr(store, "load_shell", None)
    snap = shell(checkpoint_id) if callable(shell) else None
    if snap is not None:
        form = stored_form(store, snap.info)
        if form is not None and size_hint(form, BIG_NODES, BIG_CHARS):
            return replace(snap, state=open_lazy(store, form), meta={**snap.meta, "lazy": True})
        return store.load(checkpoint_id)
    view = getattr(store, "load_view", None)    # other adapters' own lazy view (LangGraph), else load
    return view(checkpoint_id) if callable(view) else store.load(checkpoint_id)

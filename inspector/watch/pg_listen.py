"""LISTEN for store changes on PostgreSQL in a background thread (pure Python, no Qt).

Writers send ``NOTIFY checkpoint_inspector, '<run id>'`` inside each write transaction, so a
notification arrives exactly when a change is committed. ``PgListener`` keeps one dedicated
connection, calls ``on_change`` with the run ids of a burst of notifications, reconnects
with exponential backoff when the connection drops (then calls ``on_change(None)``: "reload,
notifications may have been missed"), and reports its state through ``on_state``. When the
server cannot LISTEN (a pooler in transaction mode, a driver missing) it falls back to a slow
poll: ``on_change(None)`` every ``poll_interval`` seconds.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from typing import TYPE_CHECKING, Any
from collections.abc import Callable

import sqlalchemy as sa

if TYPE_CHECKING:
    from inspector.store.base import Store

log = logging.getLogger(__name__)

CHANNEL = "checkpoint_inspector"   # the same channel as inspector.store.native.writer.NOTIFY_CHANNEL
CONNECTING, LISTENING, DISCONNECTED, POLLING, STOPPED = (
    "connecting", "listening", "disconnected", "polling", "stopped")

ChangeCallback = Callable[[frozenset | None], None]
StateCallback = Callable[[str, str | None], None]


def libpq_dsn(url: str) -> str:
    """A SQLAlchemy ``postgresql+driver://`` URL as a plain libpq connection URL."""
    parsed = sa.engine.make_url(url).set(drivername="postgresql")
    return parsed.render_as_string(hide_password=False)


class PgListener:
    """A background LISTEN connection with reconnect, backoff and a polling fallback.

    ``on_change(run_ids)`` gets a frozenset of run ids, or None when everything should be
    re-read (after a reconnect, or each poll in polling mode). ``on_state(state, detail)``
    gets one of ``connecting``, ``listening``, ``disconnected`` (detail: the error),
    ``polling`` (detail: why) and finally ``stopped``. Callbacks run on the listener thread.
    """

    def __init__(self, url: str, on_change: ChangeCallback, *, on_state: StateCallback | None = None,
                 readonly: bool = True, channel: str = CHANNEL, poll_interval: float = 10.0,
                 min_backoff: float = 0.2, max_backoff: float = 10.0, ping_interval: float = 15.0,
                 wake_interval: float = 0.25, poll_only: str | None = None) -> None:
        self.dsn = libpq_dsn(url)
        self.on_change = on_change
        self.on_state = on_state
        self.readonly = readonly
        self.channel = channel
        self.poll_interval = poll_interval
        self.min_backoff, self.max_backoff = min_backoff, max_backoff
        self.ping_interval = ping_interval
        self.wake_interval = wake_interval
        self.poll_only = poll_only
        self.state = STOPPED
        self.detail: str | None = None
        self.reconnects = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------
    def start(self) -> PgListener:
        """Start the background thread (returns self)."""
        if self._thread is not None:
            raise RuntimeError("the listener was already started")
        self._thread = threading.Thread(target=self._run, name="pg-listen", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Ask the thread to stop and wait for it (at most ``timeout`` seconds)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    @property
    def running(self) -> bool:
        """True while the background thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    # -- internals ---------------------------------------------------------------
    def _set_state(self, state: str, detail: str | None = None) -> None:
        if (state, detail) == (self.state, self.detail):
            return
        self.state, self.detail = state, detail
        if self.on_state is not None:
            try:
                self.on_state(state, detail)
            except Exception:  # a broken callback must not kill the listener
                log.exception("listener state callback failed")

    def _emit(self, run_ids: frozenset | None) -> None:
        try:
            self.on_change(run_ids)
        except Exception:
            log.exception("listener change callback failed")

    def _run(self) -> None:
        if self.poll_only:
            self._poll_forever(self.poll_only)
            return
        try:
            import psycopg
        except ImportError:
            self._poll_forever("psycopg is not installed")
            return
        if tuple(int(x) for x in psycopg.__version__.split(".")[:2]) < (3, 2):
            self._poll_forever("psycopg 3.2 or newer is needed for notifications")
            return
        delay, connected_before = self.min_backoff, False
        while not self._stop.is_set():
            self._set_state(CONNECTING, self.detail if self.state == DISCONNECTED else None)
            try:
                conn = self._connect(psycopg)
            except psycopg.Error as err:
                self._set_state(DISCONNECTED, _one_line(err))
                self._stop.wait(delay)
                delay = min(delay * 2, self.max_backoff)
                continue
            try:
                try:
                    conn.execute(f'LISTEN "{self.channel}"')
                except psycopg.errors.FeatureNotSupported as err:  # e.g. a pooler that cannot LISTEN
                    self._poll_forever(f"notifications are unavailable ({_one_line(err)})")
                    return
                self._set_state(LISTENING)
                delay = self.min_backoff
                if connected_before:
                    self.reconnects += 1
                    self._emit(None)  # notifications sent while we were away are lost: reload
                connected_before = True
                self._listen(conn)
            except psycopg.Error as err:
                if self._stop.is_set():
                    break
                self._set_state(DISCONNECTED, _one_line(err))
                self._stop.wait(delay)
                delay = min(delay * 2, self.max_backoff)
            finally:
                _close_quietly(conn)
        self._set_state(STOPPED)

    def _connect(self, psycopg):  # psycopg is imported lazily
        extra = {"options": "-c default_transaction_read_only=on"} if self.readonly else {}
        return psycopg.connect(self.dsn, autocommit=True, connect_timeout=5, keepalives=1,
                               keepalives_idle=10, keepalives_interval=5, keepalives_count=3,
                               application_name="checkpoint-inspector-listen", **extra)

    def _listen(self, conn) -> None:
        last_traffic = time.monotonic()
        while not self._stop.is_set():
            burst = [n.payload for n in conn.notifies(timeout=self.wake_interval, stop_after=1)]
            if burst:
                # coalesce what arrived meanwhile into one callback
                burst += [n.payload for n in conn.notifies(timeout=0)]
                self._emit(frozenset(burst))
                last_traffic = time.monotonic()
            elif time.monotonic() - last_traffic > self.ping_interval:
                conn.execute("SELECT 1")  # finds a dead peer even when TCP stays silent
                last_traffic = time.monotonic()

    def _poll_forever(self, why: str) -> None:
        self._set_state(POLLING, why)
        while not self._stop.wait(self.poll_interval):
            self._emit(None)
        self._set_state(STOPPED)


def _one_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__


def _close_quietly(conn) -> None:
    with contextlib.suppress(Exception):  # the socket may already be gone
        conn.close()


def make_pg_watcher(store: Store, on_change: ChangeCallback, on_state: StateCallback | None = None,
                    **options: Any) -> PgListener | None:  # options: PgListener keywords, forwarded
    """A (not yet started) listener for a PostgreSQL store, or None for other backends.

    Call ``start()`` on it, and ``stop()`` when the store is closed. Stores whose writers
    send no NOTIFY (LangGraph's PostgresSaver) get a listener that polls every 2 s. For a
    SQLite store use a file watcher on ``store.watch_paths()`` instead.
    """
    if store.info.backend != "postgresql":
        return None
    if store.info.kind != "native":
        options.setdefault("poll_only", "this kind of store sends no change notifications")
        options.setdefault("poll_interval", 2.0)
    return PgListener(store.info.url, on_change, on_state=on_state, readonly=store.info.read_only,
                      **options)


def listen_to_store(store: Store, callback: Callable[[], None],
                    on_state: StateCallback | None = None) -> PgListener:
    """A started listener that calls ``callback()`` (no arguments) for every burst of changes,
    and also when the connection is lost (so the caller's next read shows the error) and
    regained (so it catches up). ``inspector.watch.open_change_source`` uses it for a native
    store on PostgreSQL (the store layer knows nothing of watching)."""
    def state_changed(state: str, detail: str | None) -> None:
        if on_state is not None:
            on_state(state, detail)
        if state == DISCONNECTED:
            callback()

    listener = make_pg_watcher(store, lambda _ids: callback(), state_changed)
    if listener is None:
        raise ValueError("only PostgreSQL stores can be listened to")
    return listener.start()

"""One writable DuckDB connection per store file, kept open while batches keep coming.

Opening traces.duckdb costs more than writing a batch of spans into it (catalog load, layout
check, checkpoint on close), so the exporter keeps its connection between batches, and opens
it while the batch that needs it is still being converted (`expect`): creating a new store's
views and loading a catalog run in DuckDB without the GIL, beside the conversion. DuckDB lets
one process hold a file for writing and nobody else open it meanwhile, not even to read, and in
one process a read-only open is refused while a writable one exists. So the connection is given
back quickly:

- a batch that does not follow another within `IDLE_CLOSE_S` closes the file right after it,
  as if there were no cache (the SDK's batch processor exports every few seconds, so outside
  floods of spans nothing changes for readers);
- in a flood, after `IDLE_CLOSE_S` without a batch;
- after `MAX_HOLD_S` of continuous writing, followed by a `READER_WINDOW_S` pause before the
  next open, long enough for a reader polling at `db._open`'s retry interval to get in;
- on the exporter's flush and shutdown, when a reader in this process finds the file busy
  (`db.connect` asks the cache to let go), after any failed write, and when the file on disk is
  no longer the one opened or no longer writable (moved away, replaced, made read-only), so such
  a batch fails to open and is spooled exactly as without the cache.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import duckdb

from agentchaos_otel.store.database import connect as db
from agentchaos_otel.store.database.connect import StoreError, connect

logger = logging.getLogger(__name__)

IDLE_CLOSE_S = 0.05
MAX_HOLD_S = 1.0
READER_WINDOW_S = 0.15
EXPECT_GRACE_S = 0.25  # how long an announced batch may take to convert before the file is given back


@dataclass
class _Held:
    conn: duckdb.DuckDBPyConnection
    ident: tuple[int, int]
    opened: float
    last_used: float = field(default=0.0)
    busy: bool = True
    reserved_until: float = field(default=0.0)  # a batch was announced (`expect`): not idle before this


def _file_ident(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _close_quietly(conn: duckdb.DuckDBPyConnection) -> None:
    try:
        conn.close()
    except Exception as exc:  # the data is committed already; a failed checkpoint leaves the WAL
        logger.debug("closing a store connection: %s", exc)


def _writer(conn: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """A span writer's connection runs its statements in the calling thread alone.

    A batch of spans is a few hundred rows: DuckDB's worker threads cost more to coordinate
    than they save, and on a small machine they take the cores the agent's own threads are
    waiting for. (The setting belongs to the file's database instance in this process, so a
    derived-table writer sharing it meanwhile runs single-threaded too.)
    """
    try:
        conn.execute("SET threads = 1")
    except duckdb.Error as exc:  # only speed depends on it
        logger.debug("SET threads on a store writer: %s", exc)
    return conn


class WriterCache:
    """Writable connections by absolute path; every method is thread-safe."""

    def __init__(self, idle_close_s: float = IDLE_CLOSE_S, max_hold_s: float = MAX_HOLD_S,
                 reader_window_s: float = READER_WINDOW_S, clock: Callable[[], float] = time.monotonic) -> None:
        # ``clock``: what decides floods, idleness and hold limits; injectable, so those decisions
        # are tested on a clock the test moves, not on how fast the machine runs the test.
        self.clock = clock
        self.idle_close_s = idle_close_s
        self.max_hold_s = max_hold_s
        self.reader_window_s = reader_window_s
        self._cv = threading.Condition(threading.Lock())
        self._held: dict[str, _Held] = {}
        self._released_at: dict[str, float] = {}  # path -> when a max-hold release happened
        self._last_end: dict[str, float] = {}  # path -> when its last write ended
        self._idle_before: dict[str, float] = {}  # path -> idle time before the write under way
        self._arrived: dict[str, float] = {}  # path -> when the batch being converted arrived
        self._opening: set[str] = set()  # paths being opened ahead of their batch (`expect`)
        self._open_failed: dict[str, Exception] = {}  # why such an open failed, for the batch's acquire
        self._closer: threading.Thread | None = None
        self._openers: set[threading.Thread] = set()
        self._stopping = False  # the interpreter is exiting: no more background work

    def acquire(self, path: str, timeout_s: float) -> duckdb.DuckDBPyConnection:
        """A writable connection to `path`; give it back with `release`. Raises StoreError.

        A directory is refused: spans never go into a Parquet dataset's ``derived.duckdb``
        (``db.connect`` would open that for derived tables); the caller spools them instead.
        """
        if os.path.isdir(path):
            raise StoreError(f"{path}: is a directory, not a trace file (a Parquet dataset takes spans "
                             "through ParquetSpanSink)")
        stale: _Held | None = None
        shared = False
        with self._cv:
            while path in self._opening:  # opened ahead of this batch: that connection is the one
                self._cv.wait()
            failed = self._open_failed.pop(path, None)
            if failed is not None:
                raise failed
            last_end = self._last_end.get(path)
            arrived = self._arrived.pop(path, None)
            came = arrived if arrived is not None and last_end is not None and arrived >= last_end else self.clock()
            self._idle_before[path] = came - last_end if last_end is not None else float("inf")
            held = self._held.get(path)
            if held is not None and not held.busy:
                now = self.clock()
                usable = (_file_ident(path) == held.ident and os.access(path, os.W_OK)
                          and now - held.opened < self.max_hold_s)
                if usable:
                    held.busy = True
                    return held.conn
                if now - held.opened >= self.max_hold_s:
                    self._released_at[path] = now
                stale = self._held.pop(path)
            shared = held is not None and held.busy  # in use by another thread: a separate, uncached one
            released = None if shared else self._released_at.pop(path, None)
        if shared:
            return _writer(connect(path, read_only=False, timeout_s=timeout_s))
        if stale is not None:
            _close_quietly(stale.conn)
        if released is not None:  # let waiting readers in before taking the file again
            time.sleep(max(0.0, released + self.reader_window_s - self.clock()))
        conn = _writer(connect(path, read_only=False, timeout_s=timeout_s))
        ident = _file_ident(path)
        if ident is None or self.idle_close_s <= 0:
            return conn  # nothing to compare later: not cached
        with self._cv:
            if path in self._held:  # another thread cached one meanwhile: keep theirs
                return conn
            self._held[path] = _Held(conn, ident, self.clock())
        return conn

    def expect(self, path: str, timeout_s: float | None = None) -> None:
        """A batch for `path` has arrived and is being converted before its write.

        The file's idle time ends now, not when the converted batch asks for the connection, and
        the cached connection is not closed as idle meanwhile (for at most `EXPECT_GRACE_S`, so a
        batch that never comes cannot keep readers out): converting a large batch can take longer
        than `idle_close_s`, and would otherwise cost a close and an open per batch in a flood.
        With `timeout_s`, a file not open yet is opened now in a thread of its own (the batch's
        `acquire` waits for it, and gets its error if it failed).
        """
        path = os.path.abspath(path)
        with self._cv:
            now = self.clock()
            if len(self._arrived) > 1024:
                self._arrived.clear()
            self._arrived[path] = now
            held = self._held.get(path)
            if held is not None and not held.busy:
                held.reserved_until = now + EXPECT_GRACE_S
            self._open_failed.pop(path, None)  # an earlier batch's failed open is not this one's
            if (timeout_s is None or held is not None or path in self._opening or self.idle_close_s <= 0
                    or os.path.isdir(path) or self._stopping):
                return
            self._opening.add(path)
            released = self._released_at.pop(path, None)
            opener = threading.Thread(target=self._open_ahead, args=(path, timeout_s, released),
                                      name="agentchaos-store-opener", daemon=True)
            self._openers.add(opener)
        opener.start()

    def _open_ahead(self, path: str, timeout_s: float, released: float | None) -> None:
        try:
            self._open_ahead_now(path, timeout_s, released)
        finally:
            with self._cv:
                self._openers.discard(threading.current_thread())

    def _open_ahead_now(self, path: str, timeout_s: float, released: float | None) -> None:
        conn: duckdb.DuckDBPyConnection | None = None
        try:
            if released is not None:  # let waiting readers in before taking the file again
                time.sleep(max(0.0, released + self.reader_window_s - self.clock()))
            conn = _writer(connect(path, read_only=False, timeout_s=timeout_s))
            ident = _file_ident(path)
        except Exception as exc:  # noqa: BLE001 - handed to the batch's acquire, which raises it
            with self._cv:
                self._open_failed[path] = exc
                self._opening.discard(path)
                self._cv.notify_all()
            return
        with self._cv:
            self._opening.discard(path)
            self._cv.notify_all()
            if ident is None or path in self._held:
                extra = conn
            else:
                now = self.clock()
                self._held[path] = _Held(conn, ident, now, last_used=now, busy=False,
                                         reserved_until=now + EXPECT_GRACE_S)
                extra = None
                self._start_closer()
        if extra is not None:
            _close_quietly(extra)

    def _start_closer(self) -> None:
        if self._stopping:
            return
        if self._closer is None or not self._closer.is_alive():
            self._closer = threading.Thread(target=self._close_idle, name="agentchaos-store-closer",
                                            daemon=True)
            self._closer.start()

    def release(self, path: str, conn: duckdb.DuckDBPyConnection, *, ok: bool) -> None:
        """Give a connection back: kept for the next batch when the write went well in a flood."""
        with self._cv:
            now = self.clock()
            if len(self._last_end) > 1024:
                self._last_end.clear()
                self._idle_before.clear()
            self._last_end[path] = now
            # A flood: this batch came within the idle time of the previous one's end.
            in_flood = self._idle_before.pop(path, float("inf")) < self.idle_close_s
            held = self._held.get(path)
            if held is None or held.conn is not conn:
                _close_quietly(conn)
                return
            if not ok or not in_flood:
                del self._held[path]
                _close_quietly(conn)
                return
            held.busy = False
            held.last_used = now
            held.reserved_until = 0.0  # the announced batch is written: idle from now
            self._cv.notify_all()
            self._start_closer()

    def close(self, path: str) -> None:
        """Close the cached connection of `path` now (unless a write is using it)."""
        path = os.path.abspath(path)
        with self._cv:
            held = self._held.get(path)
            if held is None or held.busy:
                return
            del self._held[path]
            self._released_at.pop(path, None)
            _close_quietly(held.conn)

    def shutdown_at_exit(self, timeout_s: float = 30.0) -> None:
        """At interpreter exit: end the closer and the openers, then close every connection here.

        Background threads are daemons; one still inside DuckDB (a checkpoint on close, an open)
        when the interpreter finalizes is stopped in the middle of C++ code, which aborts the
        process. So the exit waits for them, and no new one starts.
        """
        with self._cv:
            self._stopping = True
            self._cv.notify_all()
            threads = [t for t in (self._closer, *self._openers) if t is not None]
        for t in threads:
            if t is not threading.current_thread():
                t.join(timeout_s)
        self.close_all()

    def close_all(self) -> None:
        with self._cv:
            for path in [p for p, h in self._held.items() if not h.busy]:
                _close_quietly(self._held.pop(path).conn)

    def is_open(self, path: str) -> bool:
        with self._cv:
            return path in self._held

    def close_idle_now(self) -> float:
        """Close every connection idle by ``clock``; the seconds until the next one is due."""
        with self._cv:
            return self._close_due()

    def _close_due(self) -> float:
        now = self.clock()
        wait = self.idle_close_s
        for path, held in list(self._held.items()):
            if held.busy:
                continue
            due = max(held.last_used + self.idle_close_s, held.reserved_until)
            if due <= now:
                del self._held[path]
                _close_quietly(held.conn)
            else:
                wait = min(wait, due - now)
        return wait

    def _close_idle(self) -> None:
        with self._cv:
            while self._held and not self._stopping:
                wait = self._close_due()
                if self._held:
                    self._cv.wait(wait)
            self._closer = None

    def _forget_after_fork(self) -> None:
        # The parent's connections must never be closed (and so checkpointed) by the child.
        _inherited.extend(h.conn for h in self._held.values())
        self._cv = threading.Condition(threading.Lock())
        self._held = {}
        self._released_at = {}
        self._last_end = {}
        self._idle_before = {}
        self._arrived = {}
        self._opening = set()
        self._open_failed = {}
        self._closer = None
        self._openers = set()


_inherited: list[duckdb.DuckDBPyConnection] = []
writers = WriterCache()
db.release_writer = writers.close
atexit.register(writers.shutdown_at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=writers._forget_after_fork)

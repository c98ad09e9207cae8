"""OTLP requests parsed in worker processes, beside the receiver's one writer.

Decoding an OTLP request into span rows is Python work that holds the interpreter lock for
about as long as the rest of storing it (journal, load into DuckDB) takes together, so a
receiver in one process uses about one core however many it has. With ``workers=N`` the
receiver starts N processes that accept on its listening socket and run the same request
handler; each sends the rows it parsed to the receiver's process over a pipe and answers once
that process says they are durable. Everything about a request's outcome stays where it was:
one bounded queue and one writer in the receiver's process decide 200 (journaled), 503 with
Retry-After (queue full, store unavailable) or a partial success, and its counters count every
answer. A worker that dies only drops the connections it held, whose requests were never
answered and are retried by the exporter (stored spans are deduplicated by id).

Workers are spawned (not forked): the receiver's process runs threads, and a forked copy of
a lock held by one of them would never be released in the child.
"""

from __future__ import annotations

import itertools
import logging
import multiprocessing as mp
import signal
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection
from typing import Any

from agentchaos_otel import redact
from agentchaos_otel.parallel.processes import processes_per_core
from agentchaos_otel.store.receivers.write_queue import QueueFull, StoreResult

logger = logging.getLogger(__name__)

STOP_TIMEOUT_S = 10.0


def default_workers() -> int:
    """Worker processes for this machine: one per core (``scale.local``), none on one core.

    Measured on 2 cores (``python -m benchmarks receiver``): 2 workers took 1.18x the spans per
    second of parsing in the receiver's process at 4 senders, 1.56x at 20.
    """
    n = processes_per_core()
    return n if n > 1 else 0


class _RemoteIngest:
    """The worker's stand-in for the receiver's ``IngestQueue``: ``store`` asks the receiver's process."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._send_lock = threading.Lock()
        self._waiting: dict[int, tuple[threading.Event, list[Any]]] = {}
        self._ids = itertools.count()
        self._full = False  # as of the receiver's last answer: lets a busy receiver skip the parse

    def full(self) -> bool:
        return self._full

    def send(self, message: tuple[Any, ...]) -> None:
        with self._send_lock:
            self._conn.send(message)

    def store(self, rows: list[dict[str, Any]], timeout_s: float | None = None) -> StoreResult:
        if not rows:
            return StoreResult(0, 0, True)
        ident = next(self._ids)
        done, box = threading.Event(), []
        self._waiting[ident] = (done, box)
        try:
            self.send(("store", ident, rows, timeout_s))
        except (OSError, ValueError) as exc:  # the receiver is going away
            self._waiting.pop(ident, None)
            raise QueueFull(f"the store writer is stopping ({exc})") from None
        if not done.wait(None if timeout_s is None else timeout_s + 5.0):
            self._waiting.pop(ident, None)
            return StoreResult(0, 0, False, "the store writer did not finish in time")
        kind, value = box
        if kind == "full":
            raise QueueFull(value)
        return StoreResult(*value)

    def read_answers(self, on_end: Any) -> None:
        """Hand each answer of the receiver's process to the handler waiting for it, until the pipe closes."""
        try:
            while True:
                message = self._conn.recv()
                if message[0] == "stop":
                    break
                _, ident, kind, value, full = message
                self._full = full
                waiting = self._waiting.pop(ident, None)
                if waiting is not None:
                    waiting[1].extend((kind, value))
                    waiting[0].set()
        except (EOFError, OSError):
            pass
        on_end()


class _Front:
    """What ``otlp_receiver._Handler`` needs of a receiver, in a worker process."""

    def __init__(self, conn: Connection, read_timeout_s: float, store_timeout_s: float, parsers: int,
                 access: Any) -> None:
        self.ingest = _RemoteIngest(conn)
        self.access = access
        self.parse_slots = threading.BoundedSemaphore(parsers)
        self.read_timeout_s = read_timeout_s
        self.store_timeout_s = store_timeout_s

    def count(self, what: str) -> None:
        self.ingest.send(("count", what))

    def accepted(self, stored: int, rejected: int) -> None:
        self.ingest.send(("accepted", stored, rejected))


def worker_main(sock: socket.socket, conn: Connection, read_timeout_s: float, store_timeout_s: float,
                parsers: int, secrets: list[str], access: Any) -> None:
    """A worker process: serve the receiver's socket until the receiver says stop or goes away.

    ``secrets``: the credentials the receiver's process remembered when it started the workers,
    so that spans carrying them are redacted here as they would be there.
    """
    from agentchaos_otel import redact
    from agentchaos_otel.store.receivers.otlp_http import _Handler, _Server

    # Ctrl-C reaches the whole process group: the receiver's process decides when workers stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for value in secrets:
        redact.remember(value)

    front = _Front(conn, read_timeout_s, store_timeout_s, parsers, access)
    handler = type("Handler", (_Handler,), {"receiver": front})
    server = _Server(sock.getsockname(), handler, bind_and_activate=False)
    server.socket.close()
    server.socket = sock
    server.daemon_threads = True
    reader = threading.Thread(target=front.ingest.read_answers, args=(server.shutdown,), daemon=True)
    reader.start()
    server.serve_forever()
    server.socket.close()


class Workers:
    """The receiver's side: start the worker processes and answer their ``store`` requests."""

    def __init__(self, receiver: Any, sock: socket.socket, n: int, parsers: int, access: Any) -> None:
        self.receiver = receiver
        self._pool = ThreadPoolExecutor(max_workers=max(8, receiver.ingest.max_pending + 4),
                                        thread_name_prefix="agentchaos-otlp-store")
        ctx = mp.get_context("spawn")
        self._procs: list[Any] = []
        self._conns: list[tuple[Connection, threading.Lock]] = []
        self._threads: list[threading.Thread] = []
        for i in range(n):
            mine, theirs = ctx.Pipe()
            proc = ctx.Process(target=worker_main, name=f"agentchaos-otlp-worker-{i}", daemon=True,
                               args=(sock, theirs, receiver.read_timeout_s, receiver.store_timeout_s, parsers,
                                     redact.remembered(), access))
            proc.start()
            theirs.close()
            self._procs.append(proc)
            self._conns.append((mine, threading.Lock()))
        for conn, lock in self._conns:
            t = threading.Thread(target=self._serve, args=(conn, lock), name="agentchaos-otlp-worker-pipe",
                                 daemon=True)
            t.start()
            self._threads.append(t)

    def _serve(self, conn: Connection, lock: threading.Lock) -> None:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                return
            what = message[0]
            if what == "store":
                self._pool.submit(self._store, conn, lock, *message[1:])
            elif what == "count":
                self.receiver.count(message[1])
            elif what == "accepted":
                self.receiver.accepted(message[1], message[2])

    def _store(self, conn: Connection, lock: threading.Lock, ident: int, rows: list[dict[str, Any]],
               timeout_s: float | None) -> None:
        ingest = self.receiver.ingest
        try:
            r = ingest.store(rows, timeout_s=timeout_s)
            answer: tuple[Any, ...] = ("result", ident, "ok", (r.stored, r.refused, r.durable, r.message))
        except QueueFull as exc:
            answer = ("result", ident, "full", str(exc))
        except Exception as exc:  # never leave a worker's handler waiting
            logger.exception("otlp receiver: storing a worker's request failed")
            answer = ("result", ident, "ok", (0, 0, False, f"{type(exc).__name__}: {exc}"))
        try:
            with lock:
                conn.send((*answer, ingest.full()))
        except (OSError, ValueError):
            pass  # the worker is gone: its client was never answered and retries

    def stop(self) -> None:
        """Stop accepting (every worker), then wait for the stores under way."""
        for conn, lock in self._conns:
            try:
                with lock:
                    conn.send(("stop",))
            except (OSError, ValueError):
                pass
        for proc in self._procs:
            proc.join(STOP_TIMEOUT_S)
            if proc.is_alive():
                proc.kill()
                proc.join(STOP_TIMEOUT_S)
        self._pool.shutdown(wait=True)
        for conn, _ in self._conns:
            conn.close()
        for t in self._threads:
            t.join(STOP_TIMEOUT_S)

"""A bounded queue between request handlers and the one thread that writes the trace store.

DuckDB admits one writer, and opening the file costs about as much as inserting a few thousand
rows, so handlers (the OTLP/HTTP receiver, or any other front end such as a gRPC service) hand
parsed rows to ``IngestQueue.store`` and one writer thread takes whatever is waiting at once. It
first journals the rows to the store's spool (one fsynced append; the same spool every writer
loads), then answers, then loads the spool into DuckDB in large batches: when the queue goes
idle, and at least every ``LOAD_INTERVAL_S`` under load. A load runs in a thread of its own and
the spool is locked only while the load takes its rows, so requests keep being journaled and
answered while the rows go into DuckDB. An answer of success therefore always
means on disk, and ``traces summary`` counts the spans still in the spool. When the spool cannot
be written (disk full), rows go straight through the exporter, whose answer says whether they are
durable. The queue is bounded: when it is full, ``store`` raises ``QueueFull`` at once and the
front end answers with a retryable status (OTLP's 503 with Retry-After) instead of letting memory
grow with the load.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.sdk.trace.export import SpanExportResult

from agentchaos_otel import settings
from agentchaos_otel.store.exporter import WriteOutcome

logger = logging.getLogger(__name__)

MAX_BATCH_ROWS = 20_000  # rows journaled in one append
LOAD_INTERVAL_S = 0.5  # longest time journaled rows wait for the database while requests keep coming
LOAD_ROWS = 100_000  # ... or this many rows
IDLE_S = 0.05  # no request for this long: load now
MAX_BACKOFF_S = 10.0  # longest pause between load attempts while the database is unavailable


class QueueFull(Exception):
    """The writer is behind: the caller should answer "retry later" (and not lose anything)."""


@dataclass
class StoreResult:
    """What happened to one request's rows."""

    stored: int  # rows now in the database or the spool
    refused: int  # rows the database refused (kept in the rejected file)
    durable: bool  # False: held in memory only (disk full) or lost, so the caller must not say OK
    message: str = ""


@dataclass
class _Ticket:
    rows: list[dict[str, Any]]
    done: threading.Event = field(default_factory=threading.Event)
    result: StoreResult | None = None


class IngestQueue:
    """``store(rows)`` from any number of threads; one writer thread writes through ``exporter``."""

    def __init__(self, exporter: Any, max_pending: int | None = None) -> None:
        """``exporter``: the DuckDB exporter (journal then load), or any sink whose ``export_rows``
        writes durably before it returns (e.g. ``store.parquet.ParquetSpanSink``)."""
        self.exporter = exporter
        # requests waiting for the writer; each holds at most one request's rows
        self.max_pending = max_pending if max_pending is not None else settings.RECEIVER_QUEUE.value()
        self._queue: queue.Queue[_Ticket | None] = queue.Queue(maxsize=self.max_pending)
        self._thread = threading.Thread(target=self._run, name="agentchaos-store-writer", daemon=True)
        self._stopped = False
        self._thread.start()

    def full(self) -> bool:
        """Whether ``store`` would raise QueueFull now (checked before parsing a request)."""
        return self._queue.full()

    def store(self, rows: list[dict[str, Any]], timeout_s: float | None = None) -> StoreResult:
        """Write rows durably and wait for it; raises QueueFull when the writer is behind."""
        if not rows:
            return StoreResult(0, 0, True)
        if self._stopped:
            raise QueueFull("the store writer has stopped")
        ticket = _Ticket(rows)
        try:
            self._queue.put_nowait(ticket)
        except queue.Full:
            raise QueueFull(f"{self.max_pending} requests already wait for the store writer") from None
        if not ticket.done.wait(timeout_s):
            # Still queued or being written: the rows may yet be stored, but the caller must not
            # claim so; a retry is harmless because stored spans are deduplicated by id.
            return StoreResult(0, 0, False, "the store writer did not finish in time")
        assert ticket.result is not None
        return ticket.result

    def _run(self) -> None:
        self._pending = 0  # rows journaled, not yet loaded into the database
        self._pending_lock = threading.Lock()
        self._loader: threading.Thread | None = None
        self._last_load = time.monotonic()
        self._load_failing = False
        self._retry_at = 0.0  # while the database is unavailable, loads back off (each waits for its lock)
        self._backoff = LOAD_INTERVAL_S
        while True:
            try:
                first = self._queue.get(timeout=self._idle_wait())
            except queue.Empty:
                self._load()
                continue
            if first is None:
                self._final_load()
                return
            batch = [first]
            n = len(first.rows)
            stop = False
            while n < MAX_BATCH_ROWS:
                try:
                    t = self._queue.get_nowait()
                except queue.Empty:
                    break
                if t is None:
                    stop = True
                    break
                batch.append(t)
                n += len(t.rows)
            self._write(batch)
            if stop:
                self._final_load()
                return
            if self._pending and time.monotonic() >= self._retry_at and (
                    self._pending >= LOAD_ROWS or time.monotonic() - self._last_load >= LOAD_INTERVAL_S):
                self._load()

    def _idle_wait(self) -> float | None:
        """How long to wait for a request before loading the journal (None: nothing to load)."""
        if not self._pending:
            return None
        if self._loader is not None and self._loader.is_alive():
            return IDLE_S  # look again once the load under way may have ended
        return max(IDLE_S, self._retry_at - time.monotonic())

    def _write(self, batch: list[_Ticket]) -> None:
        rows = [r for t in batch for r in t.rows]
        outcome: WriteOutcome | None = None
        message = ""
        if getattr(self.exporter, "spool", None) is None:  # a sink with no journal (Parquet): write through
            self._write_through(batch, rows)
            return
        try:
            self.exporter.spool.append(rows)  # the journal: durable before anyone is answered
            outcome = WriteOutcome(SpanExportResult.SUCCESS, "spool")
            with self._pending_lock:
                self._pending += len(rows)
        except OSError as exc:
            logger.debug("store writer: journal not writable (%s); writing directly", exc)
        if outcome is None:
            try:
                outcome = self.exporter.store_rows(rows)
            except Exception as exc:  # never leave a handler waiting forever
                logger.exception("store writer: unexpected error")
                message = f"{type(exc).__name__}: {exc}"
        for t in batch:
            t.result = self._result(t, outcome) if outcome is not None else StoreResult(0, 0, False, message)
            t.done.set()

    def _write_through(self, batch: list[_Ticket], rows: list[dict[str, Any]]) -> None:
        """A sink that writes each call durably itself (``export_rows`` returns once on disk)."""
        try:
            ok = self.exporter.export_rows(rows) == SpanExportResult.SUCCESS
            message = "" if ok else "the sink could not write the spans; retry later"
        except Exception as exc:  # never leave a handler waiting forever
            logger.exception("store writer: unexpected error")
            ok, message = False, f"{type(exc).__name__}: {exc}"
        for t in batch:
            t.result = StoreResult(len(t.rows), 0, True) if ok else StoreResult(0, 0, False, message)
            t.done.set()

    def _load(self) -> None:
        """Start moving journaled rows into the database, unless a load is under way."""
        if not self._pending or (self._loader is not None and self._loader.is_alive()):
            return
        self._last_load = time.monotonic()
        self._loader = threading.Thread(target=self._load_now, name="agentchaos-store-loader", daemon=True)
        self._loader.start()

    def _final_load(self) -> None:
        if self._loader is not None:
            self._loader.join()
        self._load_now()

    def _load_now(self) -> None:
        """Move journaled rows into the database; they stay in the spool (durable) if it is unavailable."""
        with self._pending_lock:
            taking = self._pending  # rows journaled from now on wait for the next load
        if not taking:
            return
        try:
            loaded = self.exporter.load_journal()
        except Exception:
            logger.exception("store writer: loading the journal failed")
            loaded = False
        if loaded:
            with self._pending_lock:
                self._pending = max(0, self._pending - taking)
            self._retry_at, self._backoff = 0.0, LOAD_INTERVAL_S
            if self._load_failing:
                logger.warning("%s: journaled spans loaded into the database again", self.exporter.path)
            self._load_failing = False
            return
        self._retry_at = time.monotonic() + self._backoff
        self._backoff = min(self._backoff * 2, MAX_BACKOFF_S)
        if not self._load_failing:
            logger.error("%s: database unavailable; received spans are kept in %s until it is",
                         self.exporter.path, self.exporter.spool.path)
            self._load_failing = True

    @staticmethod
    def _result(ticket: _Ticket, outcome: WriteOutcome) -> StoreResult:
        if not outcome.durable:
            where = "held in memory (disk full)" if outcome.where == "memory" else "not stored"
            return StoreResult(0, 0, False, f"spans {where}; retry later")
        if not outcome.refused:
            return StoreResult(len(ticket.rows), 0, True)
        refused_keys = {(r.get("trace_id"), r.get("span_id")) for r in outcome.refused}
        mine = sum(1 for r in ticket.rows if (r.get("trace_id"), r.get("span_id")) in refused_keys)
        return StoreResult(len(ticket.rows) - mine, mine, True,
                           f"{mine} span(s) refused by the database" if mine else "")

    def stop(self, timeout_s: float = 30.0) -> None:
        """Write everything queued, then end the writer thread."""
        if self._stopped:
            return
        self._stopped = True
        self._queue.put(None)
        self._thread.join(timeout_s)

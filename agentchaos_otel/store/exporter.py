"""OpenTelemetry span exporter into traces.duckdb.

The file is opened per batch and closed right after, because DuckDB admits one writing process
or several readers: holding it open would stop `agentchaos traces summary` or a live predictor
from reading while the agent runs. A batch that cannot be written (file locked past the retry
window, read-only, corrupt, newer or foreign) is appended to a JSONL spool next to the database
and the export reports SUCCESS: the spans are kept on disk and loaded by the next successful
write, and reporting FAILURE would only make the SDK log and drop them. FAILURE is returned only
when the spool cannot be written either, so nothing is ever dropped silently.
"""

from __future__ import annotations

import json
import logging
import math
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from agentchaos_otel import attributes as A
from agentchaos_otel.store import schema
from agentchaos_otel.store.db import StoreError, bulk_execute, connect, default_path
from agentchaos_otel.store.memory import MemoryHold
from agentchaos_otel.store.repair import repair_rows
from agentchaos_otel.store.spool import Spool

logger = logging.getLogger(__name__)

_path_locks: dict[str, threading.Lock] = {}
_path_locks_guard = threading.Lock()


def _lock_for(path: str) -> threading.Lock:
    # Two exporters of one process on one file would otherwise race for DuckDB's write lock.
    with _path_locks_guard:
        return _path_locks.setdefault(path, threading.Lock())


def _reset_locks_after_fork() -> None:
    # A lock held by another thread at fork time would never be released in the child.
    global _path_locks_guard
    _path_locks.clear()
    _path_locks_guard = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_locks_after_fork)


def is_secret_key(key: str) -> bool:
    """True for attribute keys that name a credential header, in any common spelling."""
    last = key.lower().rsplit(".", 1)[-1].replace("_", "-")
    return last in A.SECRET_HEADER_NAMES


def json_value(value: Any) -> Any:
    """An OTel attribute value as plain JSON (non-finite floats become null)."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, Mapping):
        return {str(k): json_value(v) for k, v in value.items() if not is_secret_key(str(k))}
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    return str(value)


def clean_attributes(attrs: Mapping[str, Any] | None) -> dict[str, Any]:
    if not attrs:
        return {}
    return {str(k): json_value(v) for k, v in attrs.items() if not is_secret_key(str(k))}


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def events_json(events: Sequence[tuple[str, int | None, Mapping[str, Any] | None]]) -> str:
    return dumps([{"name": n, "time_ns": t, "attributes": clean_attributes(a)} for n, t, a in events])


def span_to_row(span: ReadableSpan, exported_ns: int | None = None) -> dict[str, Any]:
    """The `spans` table row of an SDK span (JSON columns as text, ready for insert or spool)."""
    ctx = span.context
    parent = span.parent
    resource_attrs = dict(span.resource.attributes) if span.resource is not None else {}
    scope = span.instrumentation_scope
    service = resource_attrs.get(A.SERVICE_NAME)
    return {
        "trace_id": format(ctx.trace_id, "032x") if ctx else None,
        "span_id": format(ctx.span_id, "016x") if ctx else None,
        "parent_span_id": format(parent.span_id, "016x") if parent is not None else None,
        "name": span.name,
        "kind": span.kind.name,
        "start_ns": span.start_time,
        "end_ns": span.end_time,
        "status_code": span.status.status_code.name,
        "status_message": span.status.description,
        "service_name": str(service) if service is not None else None,
        "scope_name": scope.name if scope is not None else None,
        "attributes": dumps(clean_attributes(span.attributes)),
        "resource": dumps(clean_attributes(resource_attrs)),
        "events": events_json([(e.name, e.timestamp, e.attributes) for e in span.events]),
        "exported_ns": exported_ns if exported_ns is not None else time.time_ns(),
    }


_INSERT_SQL = (f"INSERT INTO spans ({', '.join(schema.SPAN_COLUMNS)}) "
               f"SELECT {', '.join(schema.SPAN_COLUMNS)} FROM {{rel}} ON CONFLICT DO NOTHING")


def insert_rows(conn: duckdb.DuckDBPyConnection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert span rows in one statement; spans already stored are left as they are."""
    unique: dict[tuple[Any, Any], Sequence[Any]] = {}
    for r in rows:  # a statement may not hit one key twice, and spool + batch can overlap
        unique.setdefault((r.get("trace_id"), r.get("span_id")), [r.get(c) for c in schema.SPAN_COLUMNS])
    if unique:
        bulk_execute(conn, _INSERT_SQL, schema.SPAN_COLUMNS, list(unique.values()))


# Errors that mean "the database refuses these values", as opposed to "the database is unavailable".
_DATA_ERRORS = (duckdb.ConstraintException, duckdb.ConversionException, duckdb.InvalidInputException,
                duckdb.TypeMismatchException, UnicodeError, OverflowError)


def insert_or_split(conn: duckdb.DuckDBPyConnection, rows: Sequence[Mapping[str, Any]],
                    reasons: list[str] | None = None) -> list[Mapping[str, Any]]:
    """Insert rows; returns the rows the database refused, each isolated by halving the batch.

    One statement is atomic, so a refused row would take its whole batch with it; splitting the
    refused part in two until single rows remain costs about log2(n) statements per bad row and
    stores every other row. Errors that are not about the data propagate unchanged.
    """
    if not rows:
        return []
    try:
        insert_rows(conn, rows)
        return []
    except _DATA_ERRORS as exc:
        if len(rows) == 1:
            if reasons is not None:
                reasons.append(" ".join(str(exc).split())[:200])
            return [rows[0]]
    mid = len(rows) // 2
    return insert_or_split(conn, rows[:mid], reasons) + insert_or_split(conn, rows[mid:], reasons)


def write_span_rows(path: str, rows: Sequence[Mapping[str, Any]], spool: Spool, *,
                    timeout_s: float, refused_out: list[dict[str, Any]] | None = None) -> int:
    """Write rows, loading any spool first; returns how many spooled rows were loaded.

    Rows the database refuses go to the spool's rejected file alone; every other row, spooled or
    new, is stored. Raises StoreError when the database cannot take the batch (caller spools it).
    """
    conn = connect(path, read_only=False, timeout_s=timeout_s)
    try:
        with spool.claim() as spooled:
            batch = [*repair_rows(spooled), *rows] if spooled else rows
            reasons: list[str] = []
            try:
                refused = insert_or_split(conn, batch, reasons)
            except duckdb.Error as exc:
                raise StoreError(f"{path}: insert failed ({' '.join(str(exc).split())[:200]})") from None
            if refused:
                spool.reject([dict(r) for r in refused])
                if refused_out is not None:
                    refused_out.extend(dict(r) for r in refused)
                logger.error("%s: %d span(s) refused by the database (%s); moved to %s, the other %d stored",
                             path, len(refused), reasons[0] if reasons else "?", spool.rejected_path,
                             len(batch) - len(refused))
            return len(spooled)
    finally:
        conn.close()


@dataclass
class WriteOutcome:
    """Where a batch ended up: ``database`` and ``spool`` are durable, ``memory`` is not (disk full)."""

    result: SpanExportResult
    where: str  # "database" | "spool" | "memory" | "lost"
    refused: list[dict[str, Any]] = field(default_factory=list)  # in the rejected file, not stored

    @property
    def durable(self) -> bool:
        return self.where in ("database", "spool")


class DuckDBSpanExporter(SpanExporter):
    """Span exporter writing to a DuckDB trace store; use it behind a BatchSpanProcessor.

    `path=None` reads AGENTCHAOS_DB, default `traces.duckdb`, so the OTel auto-configuration
    (`OTEL_TRACES_EXPORTER=agentchaos_duckdb`) can construct it without arguments.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, lock_timeout_s: float = 2.0) -> None:
        # Absolute now, so a later chdir of the agent does not scatter spans over several files.
        self.path = os.path.abspath(str(path) if path is not None else default_path())
        self.lock_timeout_s = lock_timeout_s
        self.spool = Spool(self.path)
        self._failing = False
        self._shutdown = False
        self._journal = False
        self._memory = MemoryHold(self.path, log=logger)  # rows kept while neither database nor spool is writable

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._shutdown:
            logger.error("%s: export after shutdown, %d spans not written", self.path, len(spans))
            return SpanExportResult.FAILURE
        now = time.time_ns()
        return self.export_rows([span_to_row(s, now) for s in spans])

    def export_rows(self, rows: list[dict[str, Any]]) -> SpanExportResult:
        """Store rows already in `spans` layout (the OTLP receiver converts wire spans to these)."""
        return self.store_rows(rows).result

    def store_rows(self, rows: list[dict[str, Any]]) -> WriteOutcome:
        """``export_rows`` that also says where the rows went and which the database refused."""
        if self._shutdown:
            logger.error("%s: export after shutdown, %d spans not written", self.path, len(rows))
            return WriteOutcome(SpanExportResult.FAILURE, "lost")
        with _lock_for(self.path):
            return self._write_or_spool(rows)

    def _write_or_spool(self, rows: list[dict[str, Any]]) -> WriteOutcome:
        rows = repair_rows(rows)  # the one point where rows become storable (store/repair.py)
        held = self._memory.take()
        pending = [*held, *rows] if held else rows
        refused: list[dict[str, Any]] = []
        try:
            loaded = write_span_rows(self.path, pending, self.spool, timeout_s=self.lock_timeout_s,
                                     refused_out=refused)
        except Exception as exc:  # whatever went wrong, the spans go to the spool
            if not isinstance(exc, (StoreError, OSError)):
                exc = StoreError(f"{self.path}: unexpected {type(exc).__name__}: {exc}")
            if not pending:
                return WriteOutcome(SpanExportResult.SUCCESS, "database")
            try:
                self.spool.append(pending)
            except OSError as spool_exc:
                result = self._memory.hold(pending, f"{exc}; spool {self.spool.path} not writable either "
                                                    f"({spool_exc})")
                return WriteOutcome(result, "memory" if result == SpanExportResult.SUCCESS else "lost")
            if held:
                self._memory.released(len(held), "spool")
            if not self._failing:
                logger.error("%s; spooling spans to %s until it is writable", exc, self.spool.path)
                self._failing = True
            else:
                logger.debug("%s; spooled %d more spans", exc, len(pending))
            return WriteOutcome(SpanExportResult.SUCCESS, "spool")
        if held:
            self._memory.released(len(held), "database")
        if loaded:
            # a journal load (the OTLP receiver spools first, by design) is routine, not news
            logger.log(logging.DEBUG if self._journal else logging.WARNING, "%s: loaded %d spooled spans from %s",
                       self.path, loaded, self.spool.path)
        self._failing = False
        return WriteOutcome(SpanExportResult.SUCCESS, "database", refused)

    def drain_spool(self, *, journal: bool = False) -> bool:
        """Try to move spooled spans into the database; True when no spool remains.

        ``journal``: the spool is used as a write-ahead journal (the receiver), so loading it is
        routine and logged at debug level.
        """
        with _lock_for(self.path):
            if not self.spool.exists() and not self._memory:
                return True
            self._journal = journal
            try:
                self._write_or_spool([])
            finally:
                self._journal = False
            return not self.spool.exists() and not self._memory

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        # Nothing is buffered here (the span processor buffers); spooled spans are durable, so
        # flushing succeeds even when the database is still unavailable.
        self.drain_spool()
        return True

    def shutdown(self) -> None:
        if self._shutdown:
            return
        if not self.drain_spool():
            if self._memory:
                logger.error("%s: still unavailable at shutdown; %d spans held in memory are lost",
                             self.path, len(self._memory))
            if self.spool.exists():
                logger.error("%s: still unavailable at shutdown; spans remain in %s", self.path,
                             self.spool.path)
        self._shutdown = True

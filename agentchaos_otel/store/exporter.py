"""OpenTelemetry span exporter into traces.duckdb.

DuckDB admits one writing process or several readers, so the file must not stay open for long:
`agentchaos traces summary` or a live predictor would be locked out while the agent runs. Opening
it costs more than writing a batch, though, so the connection is kept while batches keep coming
and given back after a short idle time, after a bounded hold (with a pause for readers), and
on flush and shutdown (`store/writer.py`). A batch that cannot be written (file locked past the
retry window, read-only, corrupt, newer or foreign) is appended to a JSONL spool next to the
database and the export reports SUCCESS: the spans are kept on disk and loaded by the next
successful write, and reporting FAILURE would only make the SDK log and drop them. FAILURE is
returned only when the spool cannot be written either, so nothing is ever dropped silently.

A batch is built as columns in one pass over the spans (``spans_to_batch``): one C-level JSON
encode per span, resource JSON cached (and redacted) per resource, secret-key checks memoised per
set of keys, ids through ``bytes.hex``. Redaction and the storability repair then run once per
column (``store/columns.py``: only rows a rule could change go through ``redact_row``), and the
batch goes to DuckDB as one Arrow table, deduplicated by the primary key (``db.insert_new_spans``).
The conversion runs in the batch processor's thread, beside the agent's threads in the agent's
process, and changes none of that interpreter's settings (switch interval, timer slack): it
hands the GIL over instead (``gil_handoff.Slices``: a short pause once per 0.2 ms of work, between
spans and between the Arrow chunks), and keeps long C calls short, so an agent thread waiting for
the GIL is not kept out for long: the key-uniqueness set is built only after DuckDB refuses a
duplicate key, and a batch is freed column by column.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import operator
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode

from agentchaos_otel import attributes as A
from agentchaos_otel import redact
from agentchaos_otel.gil_handoff import Slices
from agentchaos_otel.store.database.columns import SpanBatch, as_rows
from agentchaos_otel.store.database.connect import (
    StoreError,
    default_path,
    insert_new_spans,
    insert_span_rows,
    insert_spans_skipping_stored,
)
from agentchaos_otel.store.database.writer import writers
from agentchaos_otel.store.durability.memory_hold import MemoryHold
from agentchaos_otel.store.durability.spool import Spool

logger = redact.get_logger(__name__)

SPOOL_NOTICE_PERIOD_S = 60.0


class SpoolNotice:
    """Says that spans go to the spool once per period, with how often and how many since the last line.

    Writers taking turns on one file lock each other out many times a minute; a line per event
    buries the log (143 lines from 8 writers in one run). The first event is said at once, the
    rest are counted and said, with their count, at the first event after ``period_s``.
    ``clock`` is injectable, so the period is tested without waiting.
    """

    def __init__(self, period_s: float = SPOOL_NOTICE_PERIOD_S, clock: Any = time.monotonic) -> None:
        self.period_s = period_s
        self.clock = clock
        self._said_at: float | None = None
        self._events = 0
        self._spans = 0

    def spooled(self, exc: BaseException, spans: int, spool: Any, *, new_event: bool) -> None:
        """``spans`` went to ``spool`` because of ``exc``; ``new_event``: the database was writable before."""
        self._events += new_event
        self._spans += spans
        now = self.clock()
        if self._said_at is not None and now - self._said_at < self.period_s:
            logger.debug("%s; spooled %d more spans", exc, spans)
            return
        since = ("" if self._said_at is None else
                 f" ({self._events} times, {self._spans} spans spooled since the last note)")
        logger.error("%s; spooling spans to %s until it is writable%s", exc, spool, since)
        self._said_at, self._events, self._spans = now, 0, 0

# How the project sizes the batch processor in front of this exporter (``configure()``, and
# zero-code when the store is the only trace exporter) unless the user set the OTEL_BSP_* sizes.
# DuckDB's fixed cost per insert statement is a large part of a 512-span batch, the SDK's
# default, so four times that costs less per span; the queue holds four batches, so spans keep
# arriving while one is written. (Not for OTLP: a request that large can exceed a collector's limit.)
EXPORT_BATCH = 2048
EXPORT_QUEUE = 8192
BSP_SIZE_ENV = ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "OTEL_BSP_MAX_QUEUE_SIZE")


def batch_processor_sizes() -> dict[str, int]:
    """``BatchSpanProcessor`` keyword arguments for this exporter; none when the user chose sizes."""
    if any(os.environ.get(v, "").strip() for v in BSP_SIZE_ENV):
        return {}  # one of them alone with ours could break the SDK's batch <= queue rule
    return {"max_export_batch_size": EXPORT_BATCH, "max_queue_size": EXPORT_QUEUE}


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
    return redact.is_secret_name(key)


# Attribute keys repeat across spans, so the check runs once per distinct key (bounded).
secret_key_memo = functools.lru_cache(maxsize=8192)(is_secret_key)


def json_value(value: Any) -> Any:
    """An OTel attribute value as plain JSON (non-finite floats become null)."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, Mapping):
        return {str(k): json_value(v) for k, v in value.items() if not secret_key_memo(str(k))}
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    return str(value)


def clean_attributes(attrs: Mapping[str, Any] | None) -> dict[str, Any]:
    if not attrs:
        return {}
    return {str(k): json_value(v) for k, v in attrs.items() if not secret_key_memo(str(k))}


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _refuse(value: Any) -> Any:
    raise TypeError(f"not plain JSON: {type(value).__name__}")


_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
if json.encoder.c_make_encoder is not None:
    # The json module's C encoder, made once: `json.dumps` builds one per call, a visible cost
    # at one call per span. No circular-reference markers: only acyclic plain values reach it.
    _c_encoder = json.encoder.c_make_encoder(None, _refuse, json.encoder.encode_basestring, None, ":", ",",
                                             False, False, False)

    def _encode(value: Any) -> str:  # noqa: F811 - faster twin of the encoder above
        return "".join(_c_encoder(value, 0))


_SCALARS = frozenset({str, int, bool, float, type(None)})


def _plain_dict(attrs: Any) -> dict[str, Any] | None:
    """The dict behind an attribute mapping without a Python call per key, or None.

    The SDK's BoundedAttributes keeps its items in a plain dict; going through the Mapping API
    instead costs a Python-level __getitem__ per key, the largest single cost of a row.
    """
    if type(attrs) is dict:
        return attrs
    inner = getattr(attrs, "_dict", None) if isinstance(attrs, BoundedAttributes) else None
    return inner if type(inner) is dict else None


# Spans of one instrumentation repeat one set of keys: whether it names a secret is looked up once.
_secret_keysets: dict[tuple[Any, ...], bool] = {}


def _remember_keyset(keys: tuple[Any, ...]) -> bool:
    secret = any(secret_key_memo(str(k)) for k in keys)
    if len(_secret_keysets) >= 4096:
        _secret_keysets.clear()
    _secret_keysets[keys] = secret
    return secret


def attributes_json(attrs: Mapping[str, Any] | None) -> str:
    """`dumps(clean_attributes(attrs))`, with one C-level encode when the values are plain.

    Plain means scalars or tuples of scalars under string keys (what instrumentations set); maps,
    bytes or non-finite floats take the general path, which gives the same text.
    """
    if not attrs:
        return "{}"
    if attrs.__class__ is BoundedAttributes and attrs._dict.__class__ is dict:
        # The SDK validated these values (scalars and tuples of scalars), so they need no type
        # check: the C encoder takes them, or refuses (NaN, bytes) and the general path runs.
        plain = attrs._dict
        try:
            keys = tuple(plain)
            secret = _secret_keysets.get(keys)
            if secret is None:
                secret = _remember_keyset(keys)
            return _encode({k: v for k, v in plain.items() if not secret_key_memo(k)} if secret else plain)
        except (TypeError, ValueError, AttributeError):
            return dumps(clean_attributes(plain))
    plain = _plain_dict(attrs)
    if plain is None:
        plain = dict(attrs)
    try:
        kinds = set(map(type, plain.values()))
        if not kinds <= _SCALARS and not (
                kinds - _SCALARS == {tuple}
                and all(set(map(type, v)) <= _SCALARS for v in plain.values() if type(v) is tuple)):
            return dumps(clean_attributes(plain))
        keys = tuple(plain)
        secret = _secret_keysets.get(keys)
        if secret is None:
            secret = _remember_keyset(keys)
        if secret:
            plain = {k: v for k, v in plain.items() if not secret_key_memo(k)}
        return _encode(plain)
    except (TypeError, ValueError, AttributeError):  # NaN/inf, non-string keys: general path
        return dumps(clean_attributes(plain))


def events_json(events: Sequence[tuple[str, int | None, Mapping[str, Any] | None]]) -> str:
    return dumps([{"name": n, "time_ns": t, "attributes": clean_attributes(a)} for n, t, a in events])


def _span_events_json(events: Sequence[Any]) -> str:
    if not events:
        return "[]"
    parts = [f'{{"name":{_encode(str(e.name))},"time_ns":{_encode(e.timestamp)},'
             f'"attributes":{attributes_json(e.attributes)}}}' for e in events]
    return "[" + ",".join(parts) + "]"


# A resource is shared by every span of its provider: its JSON is computed (and redacted) once per object.
_resource_memo: dict[int, tuple[Any, str, str | None]] = {}


def _resource_json(resource: Any) -> tuple[str, str | None]:
    hit = _resource_memo.get(id(resource))
    if hit is not None and hit[0] is resource:
        return hit[1], hit[2]
    attrs = dict(resource.attributes) if resource is not None else {}
    service = attrs.get(A.SERVICE_NAME)
    text = redact.redact_json_text(dumps(clean_attributes(attrs)))
    entry = (resource, text, str(service) if service is not None else None)
    if len(_resource_memo) >= 256:
        _resource_memo.clear()
    _resource_memo[id(resource)] = entry  # holding the object keeps its id from being reused
    return entry[1], entry[2]


def span_to_row(span: ReadableSpan, exported_ns: int | None = None) -> dict[str, Any]:
    """The `spans` table row of an SDK span (JSON columns as text, ready for insert or spool)."""
    ctx = span.context
    parent = span.parent
    scope = span.instrumentation_scope
    resource, service = _resource_json(span.resource)
    status = span.status
    raw_attrs = getattr(span, "_attributes", None)
    return redact.redact_row({
        "trace_id": format(ctx.trace_id, "032x") if ctx else None,
        "span_id": format(ctx.span_id, "016x") if ctx else None,
        "parent_span_id": format(parent.span_id, "016x") if parent is not None else None,
        "name": span.name,
        "kind": span.kind.name,
        "start_ns": span.start_time,
        "end_ns": span.end_time,
        "status_code": status.status_code.name,
        "status_message": status.description,
        "service_name": service,
        "scope_name": scope.name if scope is not None else None,
        "attributes": attributes_json(raw_attrs if _plain_dict(raw_attrs) is not None else span.attributes),
        "resource": resource,
        "events": _span_events_json(span.events),
        "exported_ns": exported_ns if exported_ns is not None else time.time_ns(),
    })


# The SDK's ReadableSpan properties only return the private fields (``attributes`` wraps them in
# a proxy, ``events`` copies them into a tuple); for a class that keeps those properties the
# fields are read directly, in one C call per span.
_PROPS = ("context", "parent", "name", "kind", "start_time", "end_time", "status", "resource",
          "instrumentation_scope", "attributes", "events")
_fields = operator.attrgetter(*("_" + p for p in _PROPS))
_props = operator.attrgetter(*_PROPS)
_plain_types: dict[type, bool] = {}


def _reads_fields(cls: type) -> bool:
    known = _plain_types.get(cls)
    if known is None:
        known = all(getattr(cls, p, None) is getattr(ReadableSpan, p) for p in _PROPS)
        if len(_plain_types) < 64:
            _plain_types[cls] = known
    return known


_ENUM_NAMES: dict[int, str] = {id(k): k.name for k in (*SpanKind, *StatusCode)}  # by identity: no Python __hash__


_scope_memo: dict[int, tuple[Any, str | None]] = {}


def _scope_name(scope: Any) -> str | None:
    """An instrumentation scope's name, looked up once per scope object (one per tracer)."""
    hit = _scope_memo.get(id(scope))
    if hit is not None and hit[0] is scope:
        return hit[1]
    name = scope.name if scope is not None else None
    if len(_scope_memo) >= 256:
        _scope_memo.clear()
    _scope_memo[id(scope)] = (scope, name)  # holding the object keeps its id from being reused
    return name


def _enum_name(value: Any) -> str:
    name = _ENUM_NAMES.get(id(value))
    return name if name is not None else value.name


def spans_to_batch(spans: Sequence[ReadableSpan], exported_ns: int | None = None) -> SpanBatch:
    """The `spans` rows of a batch of SDK spans as columns, redacted and repaired.

    Equal, row for row, to `span_to_row` followed by the store's repair; built column by column
    so that redaction and the storability checks run once per column (``store/columns.py``).
    """
    now = exported_ns if exported_ns is not None else time.time_ns()
    n = len(spans)
    trace_ids: list[str | None] = []
    span_ids: list[str | None] = []
    parents: list[str | None] = []
    names: list[Any] = []
    kinds: list[Any] = []
    starts: list[Any] = []
    ends: list[Any] = []
    codes: list[Any] = []
    messages: list[Any] = []
    services: list[str | None] = []
    scopes: list[Any] = []
    attributes: list[str] = []
    resources: list[str] = []
    events: list[str] = []
    slices = Slices()  # a waiting agent thread gets the GIL between spans (the switch interval is the user's)
    for span in spans:
        slices.tick()
        ctx, parent, name, kind, start, end, status, resource, scope, attrs, evs = (
            _fields(span) if _reads_fields(span.__class__) else _props(span))
        if ctx:
            # SpanContext is a tuple (trace id, span id, ...): indexing skips two property calls;
            # bytes.hex is several times faster than format(); odd ids take the general path
            try:
                tid, sid = (ctx[0], ctx[1]) if ctx.__class__ is SpanContext else (ctx.trace_id, ctx.span_id)
                trace_ids.append(tid.to_bytes(16, "big").hex())
                span_ids.append(sid.to_bytes(8, "big").hex())
            except (OverflowError, AttributeError, TypeError):
                trace_ids.append(format(ctx.trace_id, "032x"))
                span_ids.append(format(ctx.span_id, "016x"))
        else:
            trace_ids.append(None)
            span_ids.append(None)
        if parent is None:
            parents.append(None)
        else:
            try:
                parents.append((parent[1] if parent.__class__ is SpanContext else parent.span_id)
                               .to_bytes(8, "big").hex())
            except (OverflowError, AttributeError, TypeError):
                parents.append(format(parent.span_id, "016x"))
        names.append(name)
        kinds.append(_enum_name(kind))
        starts.append(start)
        ends.append(end)
        if status.__class__ is Status:
            codes.append(_enum_name(status._status_code))
            messages.append(status._description)
        else:
            codes.append(_enum_name(status.status_code))
            messages.append(status.description)
        res, service = _resource_json(resource)
        resources.append(res)
        services.append(service)
        scopes.append(_scope_name(scope))
        attributes.append(attributes_json(attrs))
        events.append(_span_events_json(evs) if evs else "[]")
    batch = SpanBatch({
        "trace_id": trace_ids, "span_id": span_ids, "parent_span_id": parents, "name": names, "kind": kinds,
        "start_ns": starts, "end_ns": ends, "status_code": codes, "status_message": messages,
        "service_name": services, "scope_name": scopes, "attributes": attributes, "resource": resources,
        "events": events, "exported_ns": [now] * n,
    })
    batch.redact()
    batch.repair()
    return batch


def insert_rows(conn: duckdb.DuckDBPyConnection, rows: SpanBatch | Sequence[Mapping[str, Any]], *,
                in_transaction: bool = False) -> None:
    """Insert span rows in one statement; spans already stored are left as they are."""
    if isinstance(rows, SpanBatch):
        table = rows.arrow()
        if table is not None:
            if not len(rows) or (not in_transaction and insert_new_spans(conn, table)):
                return
            if rows.unique_keys():  # checked only now: a set of the keys holds the GIL for a millisecond
                insert_spans_skipping_stored(conn, table)
                return
        rows = rows.rows()
    unique: dict[tuple[Any, Any], Mapping[str, Any]] = {}
    for r in rows:  # a statement may not hit one key twice, and spool + batch can overlap
        unique.setdefault((r.get("trace_id"), r.get("span_id")), r)
    if unique:
        insert_span_rows(conn, list(unique.values()), in_transaction=in_transaction)


# Errors that mean "the database refuses these values", as opposed to "the database is unavailable".
_DATA_ERRORS = (duckdb.ConstraintException, duckdb.ConversionException, duckdb.InvalidInputException,
                duckdb.TypeMismatchException, UnicodeError, OverflowError)


def insert_or_split(conn: duckdb.DuckDBPyConnection, rows: SpanBatch | Sequence[Mapping[str, Any]],
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
        rows = as_rows(rows)
        if len(rows) == 1:
            if reasons is not None:
                reasons.append(" ".join(str(exc).split())[:200])
            return [rows[0]]
    mid = len(rows) // 2
    return insert_or_split(conn, rows[:mid], reasons) + insert_or_split(conn, rows[mid:], reasons)


def write_span_rows(path: str, rows: SpanBatch | Sequence[Mapping[str, Any]], spool: Spool, *,
                    timeout_s: float, refused_out: list[dict[str, Any]] | None = None) -> int:
    """Write rows, loading any spool first; returns how many spooled rows were loaded.

    Rows the database refuses go to the spool's rejected file alone; every other row, spooled or
    new, is stored. Raises StoreError when the database cannot take the batch (caller spools it).
    """
    conn = writers.acquire(path, timeout_s)
    ok = False
    try:
        with spool.claim() as spooled:
            batch: SpanBatch | Sequence[Mapping[str, Any]] = rows
            if spooled:  # spooled rows are repaired as a batch (new rows were, as they became rows)
                loaded = SpanBatch.from_rows(spooled)
                loaded.repair()
                batch = SpanBatch.concat([loaded, rows])
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
            ok = True
            return len(spooled)
    finally:
        writers.release(path, conn, ok=ok)


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
        self.spool_notice = SpoolNotice()
        self._shutdown = False
        self._journal = False
        self._memory = MemoryHold(self.path, log=logger)  # rows kept while neither database nor spool is writable

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._shutdown:
            logger.error("%s: export after shutdown, %d spans not written", self.path, len(spans))
            return SpanExportResult.FAILURE
        writers.expect(self.path, self.lock_timeout_s)  # the file is opened (or kept) while the batch converts
        batch = spans_to_batch(spans, time.time_ns())
        try:
            with _lock_for(self.path):
                return self._write_or_spool(batch).result
        finally:
            batch.discard()

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

    def _write_or_spool(self, rows: SpanBatch | list[dict[str, Any]]) -> WriteOutcome:
        if not isinstance(rows, SpanBatch):  # a batch of spans is repaired as it is built
            rows = SpanBatch.from_rows(rows)
            rows.repair()  # the one point where rows become storable (store/repair.py, per column)
        held = self._memory.take()
        pending: SpanBatch | list[dict[str, Any]] = [*held, *as_rows(rows)] if held else rows
        refused: list[dict[str, Any]] = []
        try:
            loaded = write_span_rows(self.path, pending, self.spool, timeout_s=self.lock_timeout_s,
                                     refused_out=refused)
        except Exception as exc:  # whatever went wrong, the spans go to the spool
            if not isinstance(exc, (StoreError, OSError)):
                exc = StoreError(f"{self.path}: unexpected {type(exc).__name__}: {exc}")
            if not len(pending):
                return WriteOutcome(SpanExportResult.SUCCESS, "database")
            pending = as_rows(pending)
            try:
                self.spool.append(pending)
            except OSError as spool_exc:
                result = self._memory.hold(pending, f"{exc}; spool {self.spool.path} not writable either "
                                                    f"({spool_exc})")
                return WriteOutcome(result, "memory" if result == SpanExportResult.SUCCESS else "lost")
            if held:
                self._memory.released(len(held), "spool")
            self.spool_notice.spooled(exc, len(pending), self.spool.path, new_event=not self._failing)
            self._failing = True
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

    def load_journal(self) -> bool:
        """Move the spooled rows into the database (the receiver's journal); True when they went in.

        Unlike ``drain_spool`` this does not ask whether a spool remains: the receiver journals
        new requests while a load runs, so one usually does. Rows claimed by a failed load are
        back in the spool (``Spool.claim``).
        """
        if self._memory:  # rows held while the disk was full go first, by the general path
            self.drain_spool(journal=True)
        with _lock_for(self.path):
            if not self.spool.exists():
                return True
            try:
                write_span_rows(self.path, [], self.spool, timeout_s=self.lock_timeout_s)
            except Exception as exc:  # noqa: BLE001 - the rows are spooled; the caller retries later
                logger.debug("%s: journal not loaded (%s)", self.path, exc)
                return False
            return True

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        # Nothing is buffered here (the span processor buffers); spooled spans are durable, so
        # flushing succeeds even when the database is still unavailable.
        self.drain_spool()
        writers.close(self.path)  # a reader that waited for the flush gets the file at once
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
        writers.close(self.path)
        self._shutdown = True

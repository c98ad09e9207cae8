"""A loopback OTLP/HTTP trace receiver that lands any agent's spans in traces.duckdb.

Agents in other languages, or Python agents already wired to an OTLP exporter, can point
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` at this receiver and get the same store, views and
diagnosis as in-process tracing, without a collector. Both OTLP encodings are accepted
(protobuf and JSON, optionally gzip); rows go through the DuckDB exporter, so locking,
spooling and secret filtering behave exactly as for in-process spans.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.sdk.trace.export import SpanExportResult

from agentchaos_otel import attributes as A
from agentchaos_otel import redact
from agentchaos_otel.store.exporter import DuckDBSpanExporter, clean_attributes, dumps, events_json

logger = redact.get_logger(__name__)

TRACES_PATH = "/v1/traces"
MAX_BODY = 64 * 1024 * 1024

_KINDS = {0: "INTERNAL", 1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}
_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR"}


class BadPayload(ValueError):
    pass


# --- protobuf ----------------------------------------------------------------------------------

def _pb_value(v: AnyValue) -> Any:
    which = v.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [_pb_value(x) for x in v.array_value.values]
    if which == "kvlist_value":
        return {kv.key: _pb_value(kv.value) for kv in v.kvlist_value.values}
    if which == "bytes_value":  # base64, as OTLP/JSON carries bytes
        return base64.b64encode(v.bytes_value).decode("ascii")
    return getattr(v, which)


def _pb_attrs(kvs: Any) -> dict[str, Any]:
    return {kv.key: _pb_value(kv.value) for kv in kvs}


def rows_from_protobuf(body: bytes, exported_ns: int | None = None) -> list[dict[str, Any]]:
    req = ExportTraceServiceRequest()
    try:
        req.ParseFromString(body)
    except DecodeError as exc:
        raise BadPayload(f"not an OTLP protobuf trace request: {exc}") from None
    now = exported_ns or time.time_ns()
    rows = []
    for rs in req.resource_spans:
        resource = _pb_attrs(rs.resource.attributes)
        for ss in rs.scope_spans:
            for sp in ss.spans:
                rows.append(_row(
                    trace_id=sp.trace_id.hex(), span_id=sp.span_id.hex(),
                    parent=sp.parent_span_id.hex() or None, name=sp.name, kind=int(sp.kind),
                    start=sp.start_time_unix_nano, end=sp.end_time_unix_nano,
                    status=int(sp.status.code), message=sp.status.message or None,
                    scope=ss.scope.name or None, attrs=_pb_attrs(sp.attributes), resource=resource,
                    events=[(e.name, e.time_unix_nano, _pb_attrs(e.attributes)) for e in sp.events],
                    exported_ns=now))
    return rows


# --- JSON (OTLP/JSON: camelCase fields, hex ids, 64-bit integers possibly as strings) ----------

def _js_value(v: dict[str, Any]) -> Any:
    if not isinstance(v, dict) or not v:
        return None
    key, val = next(iter(v.items()))
    if key == "intValue":
        return int(val)
    if key == "doubleValue":
        return float(val)
    if key == "arrayValue":
        return [_js_value(x) for x in (val or {}).get("values", [])]
    if key == "kvlistValue":
        return {kv.get("key", ""): _js_value(kv.get("value") or {}) for kv in (val or {}).get("values", [])}
    return val  # stringValue, boolValue, bytesValue (base64 text)


def _js_attrs(kvs: Any) -> dict[str, Any]:
    return {kv.get("key", ""): _js_value(kv.get("value") or {}) for kv in kvs or [] if isinstance(kv, dict)}


def _js_int(v: Any) -> int | None:
    return None if v in (None, "") else int(v)


def _js_enum(v: Any, names: dict[int, str]) -> int:
    """Enums arrive as numbers, or as names such as SPAN_KIND_CLIENT from some encoders."""
    if isinstance(v, str) and not v.isdigit():
        for code, name in names.items():
            if v.upper().endswith(name):
                return code
        return 0
    return int(v or 0)


def rows_from_json(body: bytes, exported_ns: int | None = None) -> list[dict[str, Any]]:
    try:
        doc = json.loads(body)
        now = exported_ns or time.time_ns()
        rows = []
        for rs in doc.get("resourceSpans", []):
            resource = _js_attrs((rs.get("resource") or {}).get("attributes"))
            for ss in rs.get("scopeSpans", []):
                scope = (ss.get("scope") or {}).get("name") or None
                for sp in ss.get("spans", []):
                    status = sp.get("status") or {}
                    rows.append(_row(
                        trace_id=str(sp["traceId"]).lower(), span_id=str(sp["spanId"]).lower(),
                        parent=(str(sp.get("parentSpanId") or "").lower() or None), name=sp.get("name", ""),
                        kind=_js_enum(sp.get("kind"), _KINDS),
                        start=_js_int(sp.get("startTimeUnixNano")), end=_js_int(sp.get("endTimeUnixNano")),
                        status=_js_enum(status.get("code"), _STATUS),
                        message=status.get("message") or None, scope=scope,
                        attrs=_js_attrs(sp.get("attributes")), resource=resource,
                        events=[(e.get("name", ""), _js_int(e.get("timeUnixNano")),
                                 _js_attrs(e.get("attributes"))) for e in sp.get("events", [])],
                        exported_ns=now))
        return rows
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise BadPayload(f"not an OTLP JSON trace request: {type(exc).__name__}: {exc}") from None


def _row(*, trace_id: str, span_id: str, parent: str | None, name: str, kind: int, start: int | None,
         end: int | None, status: int, message: str | None, scope: str | None, attrs: dict[str, Any],
         resource: dict[str, Any], events: list[tuple[str, int | None, dict[str, Any]]],
         exported_ns: int) -> dict[str, Any]:
    if len(trace_id) != 32 or len(span_id) != 16:
        raise BadPayload(f"span {name!r} has an invalid trace or span id")
    service = resource.get(A.SERVICE_NAME)
    return {
        "trace_id": trace_id, "span_id": span_id, "parent_span_id": parent, "name": name,
        "kind": _KINDS.get(kind, "INTERNAL"), "start_ns": start, "end_ns": end,
        "status_code": _STATUS.get(status, "UNSET"), "status_message": message,
        "service_name": str(service) if service is not None else None, "scope_name": scope,
        "attributes": dumps(clean_attributes(attrs)), "resource": dumps(clean_attributes(resource)),
        "events": events_json(events), "exported_ns": exported_ns,
    }


# --- server ------------------------------------------------------------------------------------

class _Handler(BaseHTTPRequestHandler):
    receiver: OTLPReceiver  # set on the per-server subclass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        logger.debug("otlp receiver: " + format, *args)

    def _reply(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str, as_json: bool) -> None:
        # OTLP/HTTP error bodies are google.rpc.Status; a message is all a client logs from it.
        if as_json:
            self._reply(status, json.dumps({"message": message}).encode(), "application/json")
        else:
            self._reply(status, message.encode(), "text/plain; charset=utf-8")

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        as_json = ctype == "application/json"
        if self.path.split("?")[0] != TRACES_PATH:
            self._error(404, f"only {TRACES_PATH} is served: this receiver stores traces, not metrics or logs", as_json)
            return
        if ctype not in ("application/x-protobuf", "application/json"):
            self._error(415, "content type must be application/x-protobuf or application/json", as_json)
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length <= 0 or length > MAX_BODY:
            self._error(400 if length <= 0 else 413, "missing or oversized body", as_json)
            return
        body = self.rfile.read(length)
        if (self.headers.get("Content-Encoding") or "").lower() == "gzip":
            try:
                body = gzip.decompress(body)
            except (OSError, EOFError) as exc:
                self._error(400, f"bad gzip body: {exc}", as_json)
                return
        try:
            rows = redact.redact_rows(rows_from_json(body) if as_json else rows_from_protobuf(body))
        except BadPayload as exc:
            self._error(400, str(exc), as_json)
            return
        result = self.receiver.exporter.export_rows(rows) if rows else SpanExportResult.SUCCESS
        if result != SpanExportResult.SUCCESS:
            self._error(503, "spans could not be stored", as_json)
            return
        with self.receiver.lock:
            self.receiver.received += len(rows)
        if as_json:
            self._reply(200, b"{}", "application/json")
        else:
            self._reply(200, ExportTraceServiceResponse().SerializeToString(), "application/x-protobuf")


class OTLPReceiver:
    """`with OTLPReceiver("traces.duckdb") as r:` then export OTLP/HTTP to `r.endpoint`.

    Binds to loopback only: the receiver has no authentication.
    """

    def __init__(self, db: str | os.PathLike[str] | None = None, *, host: str = "127.0.0.1",
                 port: int = 0, sink: Any = None) -> None:
        # ``sink``: anything with export_rows(rows) -> SpanExportResult and shutdown(), e.g.
        # store.parquet.ParquetSpanSink; default the DuckDB store at ``db``.
        self.exporter = sink if sink is not None else DuckDBSpanExporter(db)
        self.received = 0
        self.lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"receiver": self})
        self._server = ThreadingHTTPServer((host, port), handler)
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def endpoint(self) -> str:
        host = self._server.server_address[0]
        return f"http://{host}:{self.port}{TRACES_PATH}"

    def start(self) -> OTLPReceiver:
        self._thread = threading.Thread(target=self._server.serve_forever, name="otlp-receiver", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.exporter.shutdown()

    def __enter__(self) -> OTLPReceiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

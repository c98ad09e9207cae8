"""A loopback OTLP/HTTP trace receiver that lands any agent's spans in traces.duckdb.

Agents in other languages, or Python agents already wired to an OTLP exporter, can point
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` at this receiver and get the same store, views and
diagnosis as in-process tracing, without a collector. Both OTLP encodings are accepted
(protobuf and JSON, optionally gzip or deflate); rows go through the DuckDB exporter, so locking,
spooling, repair and secret filtering behave exactly as for in-process spans.

What gets a 200 is stored: a request is decoded (bounded), parsed and validated span by span
before anything is answered, spans that cannot be stored are refused through OTLP's
``partial_success``, and the answer waits until the rows are in the database or its spool. Bad
requests get the 4xx OTLP exporters expect (400, 408, 411, 413, 415) and never stop the server;
when the one writer is behind, a bounded queue answers 503 with Retry-After, which every OTLP
exporter retries. ``parse_request`` and ``IngestQueue.store`` are the two steps, usable by any
other front end.
"""

from __future__ import annotations

import base64
import json
import math
import os
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTracePartialSuccess,
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from agentchaos_otel import attributes as A
from agentchaos_otel import redact
from agentchaos_otel.content_encoding import TooLarge, UnsupportedEncoding, bounded_decompress
from agentchaos_otel.store.database.columns import PER_SPAN_REDACTED
from agentchaos_otel.store.exporter import DuckDBSpanExporter, clean_attributes, events_json, secret_key_memo
from agentchaos_otel.store.receivers.access import Access, needs_token
from agentchaos_otel.store.receivers.write_queue import IngestQueue, QueueFull

logger = redact.get_logger(__name__)

TRACES_PATH = "/v1/traces"
MAX_BODY = 64 * 1024 * 1024  # bytes on the wire
MAX_DECODED = 64 * 1024 * 1024  # bytes after Content-Encoding is undone
READ_TIMEOUT_S = 10.0  # a client that stops sending mid-body (or declares more than it sends)
STORE_TIMEOUT_S = 60.0  # longest a handler waits for the writer before answering "retry"
RETRY_AFTER_S = 1
PARSERS = 2  # requests parsed at once

CONTENT_TYPES = ("application/x-protobuf", "application/json")

_KINDS = {0: "INTERNAL", 1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}
_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR"}
_HEX = frozenset("0123456789abcdef")


class BadPayload(ValueError):
    pass


class RequestError(Exception):
    """A request refused as a whole, with the HTTP status OTLP/HTTP prescribes for it."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class ParsedRequest:
    """Rows of the spans that can be stored, and how many spans of the request were refused."""

    rows: list[dict[str, Any]]
    rejected: int = 0
    error: str = ""  # why the first refused span was refused


# --- protobuf ----------------------------------------------------------------------------------

def _pb_value(v: AnyValue) -> Any:
    """An OTLP value as ``exporter.json_value`` leaves an attribute value: plain JSON, no secret keys.

    Done here in one walk because cleaning the decoded dict again cost a fifth of the parse.
    """
    which = v.WhichOneof("value")
    if which == "string_value":
        return v.string_value
    if which is None:
        return None
    if which == "double_value":
        d = v.double_value
        return d if math.isfinite(d) else None
    if which == "array_value":
        return [_pb_value(x) for x in v.array_value.values]
    if which == "kvlist_value":
        return _pb_attrs(v.kvlist_value.values)
    if which == "bytes_value":  # base64, as OTLP/JSON carries bytes
        return base64.b64encode(v.bytes_value).decode("ascii")
    return getattr(v, which)  # int_value, bool_value


def _pb_attrs(kvs: Any) -> dict[str, Any]:
    """Attributes as ``exporter.clean_attributes`` gives them (secret-named keys dropped)."""
    return {kv.key: _pb_value(kv.value) for kv in kvs if not secret_key_memo(kv.key)}


def parse_protobuf(body: bytes, exported_ns: int | None = None) -> ParsedRequest:
    req = ExportTraceServiceRequest()
    try:
        req.ParseFromString(body)
    except (DecodeError, RecursionError, ValueError) as exc:
        raise BadPayload(f"not an OTLP protobuf trace request: {exc}") from None
    now = exported_ns or time.time_ns()
    out = ParsedRequest([])
    for rs in req.resource_spans:
        resource = _Resource(_pb_attrs(rs.resource.attributes))
        for ss in rs.scope_spans:
            for sp in ss.spans:
                try:
                    out.rows.append(_row(
                        trace_id=sp.trace_id.hex(), span_id=sp.span_id.hex(),
                        parent=sp.parent_span_id.hex() or None, name=sp.name, kind=int(sp.kind),
                        start=sp.start_time_unix_nano, end=sp.end_time_unix_nano,
                        status=int(sp.status.code), message=sp.status.message or None,
                        scope=ss.scope.name or None, attrs=_pb_attrs(sp.attributes), clean=True,
                        resource=resource,
                        events=[(e.name, e.time_unix_nano, _pb_attrs(e.attributes)) for e in sp.events],
                        exported_ns=now))
                except (BadPayload, ValueError, TypeError, RecursionError) as exc:
                    _refuse(out, exc)
    return _redacted(out)


def rows_from_protobuf(body: bytes, exported_ns: int | None = None) -> list[dict[str, Any]]:
    """Rows of an OTLP protobuf trace request; raises BadPayload if any span is unusable."""
    return _all_or_nothing(parse_protobuf(body, exported_ns))


def _refuse(out: ParsedRequest, exc: BaseException) -> None:
    out.rejected += 1
    if not out.error:
        out.error = str(exc) if isinstance(exc, BadPayload) else f"{type(exc).__name__}: {exc}"


def _all_or_nothing(parsed: ParsedRequest) -> list[dict[str, Any]]:
    if parsed.rejected:
        raise BadPayload(parsed.error)
    return parsed.rows


# --- JSON (OTLP/JSON: camelCase fields, hex ids, 64-bit integers possibly as strings) ----------

def _js_value(v: dict[str, Any]) -> Any:
    if not isinstance(v, dict) or not v:
        return None
    key, val = next(iter(v.items()))
    if key == "intValue":
        return _js_int(val)
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
    if v is None or v == "":
        return None
    if isinstance(v, bool) or not isinstance(v, (int, str)) or (isinstance(v, str) and len(v) > 40):
        raise ValueError(f"not an integer: {str(v)[:40]!r}")  # 1e400 parses as inf, a float
    return int(v)


def _js_enum(v: Any, names: dict[int, str]) -> int:
    """Enums arrive as numbers, or as names such as SPAN_KIND_CLIENT from some encoders."""
    if isinstance(v, str) and not v.isdigit():
        for code, name in names.items():
            if v.upper().endswith(name):
                return code
        return 0
    return int(v or 0)


def parse_json(body: bytes, exported_ns: int | None = None) -> ParsedRequest:
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError) as exc:  # RecursionError: absurdly deep nesting
        raise BadPayload(f"not an OTLP JSON trace request: {type(exc).__name__}: {str(exc)[:200]}") from None
    if not isinstance(doc, dict):
        raise BadPayload("not an OTLP JSON trace request: the body is not a JSON object")
    now = exported_ns or time.time_ns()
    out = ParsedRequest([])
    try:
        for rs in _js_list(doc.get("resourceSpans")):
            resource = _Resource(_js_attrs((rs.get("resource") or {}).get("attributes")))
            for ss in _js_list(rs.get("scopeSpans")):
                scope = (ss.get("scope") or {}).get("name") or None
                for sp in _js_list(ss.get("spans")):
                    try:
                        out.rows.append(_js_row(sp, scope, resource, now))
                    except (BadPayload, ValueError, TypeError, KeyError, AttributeError, OverflowError,
                            RecursionError) as exc:
                        _refuse(out, exc)
    except (ValueError, TypeError, KeyError, AttributeError, OverflowError, RecursionError) as exc:
        raise BadPayload(f"not an OTLP JSON trace request: {type(exc).__name__}: {str(exc)[:200]}") from None
    return _redacted(out)


def _js_list(v: Any) -> list[dict[str, Any]]:
    if v is None:
        return []
    if not isinstance(v, list) or not all(isinstance(x, dict) for x in v):
        raise TypeError("expected a list of objects")
    return v


def _js_row(sp: dict[str, Any], scope: str | None, resource: _Resource, now: int) -> dict[str, Any]:
    status = sp.get("status") or {}
    return _row(
        trace_id=str(sp["traceId"]).lower(), span_id=str(sp["spanId"]).lower(),
        parent=(str(sp.get("parentSpanId") or "").lower() or None), name=str(sp.get("name", "")),
        kind=_js_enum(sp.get("kind"), _KINDS),
        start=_js_int(sp.get("startTimeUnixNano")), end=_js_int(sp.get("endTimeUnixNano")),
        status=_js_enum(status.get("code"), _STATUS),
        message=status.get("message") or None, scope=scope,
        attrs=_js_attrs(sp.get("attributes")), resource=resource,
        events=[(str(e.get("name", "")), _js_int(e.get("timeUnixNano")), _js_attrs(e.get("attributes")))
                for e in _js_list(sp.get("events"))],
        exported_ns=now)


def rows_from_json(body: bytes, exported_ns: int | None = None) -> list[dict[str, Any]]:
    """Rows of an OTLP JSON trace request; raises BadPayload if any span is unusable."""
    return _all_or_nothing(parse_json(body, exported_ns))


def parse_request(body: bytes, content_type: str, content_encoding: str = "", *,
                  limit: int = MAX_DECODED, exported_ns: int | None = None) -> ParsedRequest:
    """Decode (bounded), parse and validate one OTLP trace request body.

    Raises RequestError with the status to answer when the request is refused as a whole: 415
    for a content type or encoding we do not read, 413 when the decoded body would pass
    ``limit``, 400 for a corrupt body or when no span of it can be stored.
    """
    ctype = content_type.split(";")[0].strip().lower()
    if ctype not in CONTENT_TYPES:
        raise RequestError(415, "content type must be application/x-protobuf or application/json")
    try:
        body = bounded_decompress(body, content_encoding, limit)
    except TooLarge as exc:
        raise RequestError(413, f"request body too large: {exc}") from None
    except UnsupportedEncoding as exc:
        raise RequestError(415, str(exc)) from None
    except ValueError as exc:
        raise RequestError(400, f"bad {content_encoding} body: {exc}") from None
    try:
        parsed = parse_json(body, exported_ns) if ctype == "application/json" else parse_protobuf(body, exported_ns)
    except BadPayload as exc:
        raise RequestError(400, str(exc)) from None
    if parsed.rejected and not parsed.rows:
        raise RequestError(400, f"no span of the request can be stored: {parsed.error}")
    return parsed


class _Resource:
    """A resource's attributes, cleaned and encoded once for all the spans that share it."""

    def __init__(self, attrs: dict[str, Any]) -> None:
        service = attrs.get(A.SERVICE_NAME)
        self.service = str(service) if service is not None else None
        self.json = redact.redact_json_text(_encode(clean_attributes(attrs)))  # once per resource


# one encoder for every row: json.dumps with options builds a new encoder per call
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def _row(*, trace_id: str, span_id: str, parent: str | None, name: str, kind: int, start: int | None,
         end: int | None, status: int, message: str | None, scope: str | None, attrs: dict[str, Any],
         resource: _Resource, events: list[tuple[str, int | None, dict[str, Any]]],
         exported_ns: int, clean: bool = False) -> dict[str, Any]:
    """One ``spans`` row; ``clean``: ``attrs`` are already as ``clean_attributes`` leaves them."""
    if (len(trace_id) != 32 or len(span_id) != 16 or not _HEX.issuperset(trace_id)
            or not _HEX.issuperset(span_id) or (parent is not None and not _HEX.issuperset(parent))):
        raise BadPayload(f"span {name[:80]!r} has an invalid trace or span id")
    # Not redacted here: ``_redacted`` does it for the whole request (see ``ParsedRequest``).
    return {
        "trace_id": trace_id, "span_id": span_id, "parent_span_id": parent, "name": name,
        "kind": _KINDS.get(kind, "INTERNAL"), "start_ns": start, "end_ns": end,
        "status_code": _STATUS.get(status, "UNSET"), "status_message": message,
        "service_name": resource.service, "scope_name": scope,
        "attributes": _encode(attrs if clean else clean_attributes(attrs)), "resource": resource.json,
        "events": events_json(events) if events else "[]", "exported_ns": exported_ns,
    }


def _redacted(out: ParsedRequest) -> ParsedRequest:
    """Every received or imported OTLP span passes here: the one place their credentials go."""
    redact.redact_rows(out.rows, PER_SPAN_REDACTED)
    return out


# --- server ------------------------------------------------------------------------------------

class _Handler(BaseHTTPRequestHandler):
    receiver: OTLPReceiver  # set on the per-server subclass
    protocol_version = "HTTP/1.1"  # keep-alive, as OTLP exporters use it

    def setup(self) -> None:
        self.timeout = self.receiver.read_timeout_s  # applied to the socket by StreamRequestHandler
        super().setup()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        logger.debug("otlp receiver: " + format, *args)

    def _reply(self, status: int, body: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str, as_json: bool, headers: dict[str, str] | None = None) -> None:
        # OTLP/HTTP error bodies are google.rpc.Status; a message is all a client logs from it.
        if as_json:
            self._reply(status, json.dumps({"code": status, "message": message}).encode(), "application/json",
                        headers)
        else:
            self._reply(status, message.encode(), "text/plain; charset=utf-8", headers)

    def _read_body(self, as_json: bool) -> bytes | None:
        raw = self.headers.get("Content-Length")
        if raw is None:
            self.close_connection = True
            self._error(411, "Content-Length required", as_json)
            return None
        if not raw.strip().isdigit():
            self.close_connection = True  # the stream position of the next request is unknown
            self._error(400, f"invalid Content-Length {raw[:40]!r}", as_json)
            return None
        length = int(raw)
        if length > MAX_BODY:
            self.close_connection = True
            self._error(413, f"request body over {MAX_BODY} bytes", as_json)
            return None
        try:
            body = self.rfile.read(length)
        except TimeoutError:
            self.close_connection = True
            self._error(408, f"body not received within {self.receiver.read_timeout_s:g} s", as_json)
            return None
        if len(body) < length:
            self.close_connection = True
            self._error(400, f"body ended after {len(body)} of {length} bytes", as_json)
            return None
        return body

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        try:
            self._post()
        except (ConnectionError, TimeoutError):
            self.close_connection = True  # the client went away; nothing was accepted
        except Exception:  # the server keeps serving whatever one request does
            logger.exception("otlp receiver: unexpected error")
            self.close_connection = True
            try:
                self._error(500, "internal error", False)
            except OSError:
                pass

    def _post(self) -> None:
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        as_json = ctype == "application/json"
        refusal = self.receiver.access.refusal(self.headers.get("Host"), self.headers.get("Authorization"))
        if refusal is not None:
            self.close_connection = True
            self.receiver.count("refused")
            self._error(*refusal, as_json)
            return
        if self.path.split("?")[0] != TRACES_PATH:
            self.close_connection = True
            self._error(404, f"only {TRACES_PATH} is served: this receiver stores traces, not metrics or logs", as_json)
            return
        if ctype not in CONTENT_TYPES:
            self.close_connection = True
            self._error(415, "content type must be application/x-protobuf or application/json", as_json)
            return
        body = self._read_body(as_json)
        if body is None:
            return
        receiver = self.receiver
        if receiver.ingest.full():
            receiver.count("busy")
            self._busy(as_json, "the store writer is behind")
            return
        try:
            with receiver.parse_slots:
                parsed = parse_request(body, ctype, self.headers.get("Content-Encoding") or "", limit=MAX_DECODED)
        except RequestError as exc:
            receiver.count("refused")
            self._error(exc.status, exc.message, as_json)
            return
        try:
            result = receiver.ingest.store(parsed.rows, timeout_s=receiver.store_timeout_s)
        except QueueFull as exc:
            receiver.count("busy")
            self._busy(as_json, str(exc))
            return
        if not result.durable:
            receiver.count("busy")
            self._busy(as_json, result.message)
            return
        rejected = parsed.rejected + result.refused
        message = "; ".join(m for m in (parsed.error, result.message) if m)
        receiver.accepted(result.stored, rejected)
        self._accept(as_json, rejected, message)

    def _busy(self, as_json: bool, message: str) -> None:
        self._error(503, f"{message}; retry later", as_json, {"Retry-After": str(RETRY_AFTER_S)})

    def _accept(self, as_json: bool, rejected: int, message: str) -> None:
        if as_json:
            doc: dict[str, Any] = {}
            if rejected:
                doc["partialSuccess"] = {"rejectedSpans": str(rejected), "errorMessage": message[:500]}
            self._reply(200, json.dumps(doc).encode(), "application/json")
            return
        resp = ExportTraceServiceResponse()
        if rejected:
            resp.partial_success.CopyFrom(ExportTracePartialSuccess(rejected_spans=rejected,
                                                                    error_message=message[:500]))
        self._reply(200, resp.SerializeToString(), "application/x-protobuf")


class _Server(ThreadingHTTPServer):
    # the stdlib backlog of 5 resets connections when a few dozen exporters connect at once
    request_queue_size = 256

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that resets or drops its connection is routine: one debug line, not a traceback on stderr."""
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            logger.debug("otlp receiver: %s from %s went away (%s)", type(exc).__name__, client_address[0], exc)
            return
        logger.error("otlp receiver: unexpected %s serving %s", type(exc).__name__, client_address[0],
                     exc_info=exc)


class OTLPReceiver:
    """`with OTLPReceiver("traces.duckdb") as r:` then export OTLP/HTTP to `r.endpoint`.

    Answers only requests whose ``Host`` names its address and, given a ``token``, that carry it
    as a bearer token; beyond loopback a token is required (``access.py``). ``queue_size`` bounds how many
    requests may wait for the writer (default ``AGENTCHAOS_RECEIVER_QUEUE`` or 64); beyond it
    requests get 503 with Retry-After. ``workers``: processes that parse requests beside this
    one's writer (``store/otlp_workers.py``); 0 parses in this process.
    """

    def __init__(self, db: str | os.PathLike[str] | None = None, *, host: str = "127.0.0.1",
                 port: int = 0, queue_size: int | None = None, read_timeout_s: float = READ_TIMEOUT_S,
                 store_timeout_s: float = STORE_TIMEOUT_S, sink: Any = None, workers: int = 0,
                 token: str | None = None) -> None:
        needs_token(host, token)  # before anything is opened
        # ``sink``: anything whose export_rows(rows) writes durably before returning, and
        # shutdown(), e.g. store.parquet.ParquetSpanSink; default the DuckDB store at ``db``.
        self.exporter = sink if sink is not None else DuckDBSpanExporter(db)
        self.ingest = IngestQueue(self.exporter, queue_size)
        # Parsing is pure Python: more parsers than cores only take the interpreter lock from the
        # writer, which then falls behind (throughput at 20 senders dropped to half without this).
        self.parse_slots = threading.BoundedSemaphore(PARSERS)
        self.read_timeout_s = read_timeout_s
        self.store_timeout_s = store_timeout_s
        self.received = 0  # spans stored (database or spool)
        self.rejected = 0  # spans refused through partial_success
        self.answers: dict[str, int] = {}  # requests refused ("refused") or deferred ("busy")
        self.lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"receiver": self})
        self._server = _Server((host, port), handler)
        self._server.daemon_threads = True
        self.access = Access.bound(host, self.port, token)
        self._thread: threading.Thread | None = None
        self.workers = max(0, workers)
        self._workers: Any = None

    def accepted(self, stored: int, rejected: int) -> None:
        """A request was answered 200: ``stored`` spans are durable, ``rejected`` refused in its answer."""
        with self.lock:
            self.received += stored
            self.rejected += rejected

    def count(self, what: str) -> None:
        with self.lock:
            self.answers[what] = self.answers.get(what, 0) + 1

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def endpoint(self) -> str:
        host = self._server.server_address[0]
        return f"http://{host}:{self.port}{TRACES_PATH}"

    def start(self) -> OTLPReceiver:
        if self.workers:
            from agentchaos_otel.store.receivers.parse_workers import Workers

            self._workers = Workers(self, self._server.socket, self.workers, PARSERS, self.access)
            return self
        self._thread = threading.Thread(target=self._server.serve_forever, name="otlp-receiver", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._workers is not None:
            self._workers.stop()
        elif self._thread is not None:
            self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.ingest.stop()
        self.exporter.shutdown()

    def __enter__(self) -> OTLPReceiver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

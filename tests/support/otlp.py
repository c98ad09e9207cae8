"""Builders of OTLP trace requests (JSON and protobuf) and raw HTTP exchanges for receiver tests."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from agentchaos_otel.store.database.connect import open_store

PB = {"Content-Type": "application/x-protobuf"}


def json_span(trace_id: str, span_id: str, name: str = "s", start: Any = "1700000000000000000",
              attrs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"traceId": trace_id, "spanId": span_id, "name": name, "kind": 1,
            "startTimeUnixNano": start, "endTimeUnixNano": "1700000000500000000",
            "attributes": attrs or [], "status": {"code": 0}}


def json_request(spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "remote"}}]},
        "scopeSpans": [{"scope": {"name": "test"}, "spans": spans}]}]}


def pb_request(n: int, trace_byte: int = 1, attrs_per_span: int = 8, prefix: bytes = b"") -> bytes:
    """A protobuf request of ``n`` spans in one trace, each with a few typical attributes."""
    spans = []
    trace_id = (prefix + bytes([trace_byte]) * 16)[:16]
    for i in range(n):
        kvs = [KeyValue(key="gen_ai.operation.name", value=AnyValue(string_value="chat")),
               KeyValue(key="gen_ai.request.model", value=AnyValue(string_value="gpt-x")),
               KeyValue(key="gen_ai.usage.input_tokens", value=AnyValue(int_value=100 + i))]
        kvs += [KeyValue(key=f"attr.{j}", value=AnyValue(string_value=f"value {j} of span {i}"))
                for j in range(max(0, attrs_per_span - 3))]
        spans.append(Span(trace_id=trace_id, span_id=(i + 1).to_bytes(8, "big"), name=f"chat {i}",
                          kind=Span.SPAN_KIND_CLIENT, start_time_unix_nano=1_700_000_000_000_000_000 + i,
                          end_time_unix_nano=1_700_000_000_000_100_000 + i, attributes=kvs))
    req = ExportTraceServiceRequest(resource_spans=[ResourceSpans(
        resource=Resource(attributes=[KeyValue(key="service.name", value=AnyValue(string_value="bench"))]),
        scope_spans=[ScopeSpans(spans=spans)])])
    return req.SerializeToString()


def raw_http(port: int, request: bytes, timeout_s: float = 10.0) -> tuple[int, bytes]:
    """Send bytes as they are (bad framing included) and return (status, response bytes).

    ``Host: x`` (``post_head``'s) becomes the receiver's own address: requests for another host
    are refused before anything else is looked at (``receivers/access.py``).
    """
    request = request.replace(b"\r\nHost: x\r\n", f"\r\nHost: 127.0.0.1:{port}\r\n".encode(), 1)
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as s:
        s.sendall(request)
        data = b""
        while True:
            try:
                chunk = s.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            data += chunk
            if b"\r\n\r\n" in data:
                head, _, rest = data.partition(b"\r\n\r\n")
                length = [int(h.split(b":", 1)[1]) for h in head.split(b"\r\n")
                          if h.lower().startswith(b"content-length:")]
                if length and len(rest) >= length[0]:
                    break
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0
    return status, data


def post_head(path: str, ctype: str, length: str | None, extra: str = "") -> bytes:
    cl = f"Content-Length: {length}\r\n" if length is not None else ""
    return (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: {ctype}\r\n{cl}{extra}\r\n").encode()


def stored_ids(db: Any, trace_prefix: str = "") -> set[tuple[str, str]]:
    """(trace, span) ids on disk: in the database, or in its spool waiting to be loaded.

    The spool is read first: a row only ever moves from the spool into the database, so one read
    after the other cannot miss it.
    """
    ids: set[tuple[str, str]] = set()
    spool = Path(str(db) + ".spool.jsonl")
    try:
        lines = spool.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = []
    for line in lines:
        try:
            row = json.loads(line)
        except ValueError:
            continue  # a line being appended right now (another request's)
        if str(row["trace_id"]).startswith(trace_prefix):
            ids.add((row["trace_id"], row["span_id"]))
    if Path(db).exists():
        with open_store(db) as conn:
            rows = conn.execute("SELECT trace_id, span_id FROM spans WHERE starts_with(trace_id, ?)",
                                [trace_prefix]).fetchall()
        ids |= {(r[0], r[1]) for r in rows}
    return ids


def body_of(obj: Any) -> bytes:
    return json.dumps(obj).encode()

"""Property-based fuzzing of the OTLP receiver with random and malformed requests, JSON and protobuf.

Properties, for every generated request sent over loopback HTTP to one running receiver:
- it gets an answer (never a dropped connection), with a status OTLP exporters understand;
- what a 200 accepted is stored: the spans stored under the request's own trace-id prefix are
  exactly as many as it sent minus the ``rejectedSpans`` it was told, all with span ids it sent;
- a refused request stores nothing;
- the receiver serves the next request.

Bounded for the normal run (a fixed number of examples, derandomized, no example database);
``AGENTCHAOS_FUZZ_EXAMPLES=5000`` raises every property to that many examples.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue, KeyValueList
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from agentchaos_otel.store.receivers.otlp_http import OTLPReceiver
from tests.support.otlp import stored_ids

pytestmark = pytest.mark.reliability

_LONG = int(os.environ.get("AGENTCHAOS_FUZZ_EXAMPLES", "0") or 0)
ANSWERS = {200, 400, 413, 415}
_counter = itertools.count(1)


def fuzz(examples: int) -> Callable[[Any], Any]:
    return settings(max_examples=_LONG or examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def receiver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[OTLPReceiver, Path, httpx.Client]]:
    db = tmp_path_factory.mktemp("fuzz") / "fuzz.duckdb"
    with OTLPReceiver(db) as r, httpx.Client(timeout=30) as client:
        yield r, db, client


# text with the awkward parts: lone surrogates, NUL, non-BMP, escapes
odd_text = st.one_of(st.text(max_size=20),
                     st.lists(st.sampled_from(["a", "\ud800", "\udfff", "\x00", "😀", "\\u", '"', "é"]),
                              max_size=8).map("".join))
big_int = st.one_of(st.integers(min_value=0, max_value=2**64 - 1), st.integers(min_value=-(2**70), max_value=2**70))
json_time = st.one_of(big_int, big_int.map(str), st.just(1e400), st.just("1e400"), st.none(), st.just("x"),
                      st.floats(allow_nan=True))
json_value = st.recursive(
    st.one_of(odd_text.map(lambda s: {"stringValue": s}), big_int.map(lambda i: {"intValue": str(i)}),
              st.floats().map(lambda f: {"doubleValue": f}), st.booleans().map(lambda b: {"boolValue": b}),
              st.just({}), st.just({"intValue": "nope"})),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda v: {"arrayValue": {"values": v}}),
        st.lists(st.tuples(odd_text, inner), max_size=3).map(
            lambda kv: {"kvlistValue": {"values": [{"key": k, "value": v} for k, v in kv]}})),
    max_leaves=6)
json_attrs = st.lists(st.tuples(odd_text, json_value), max_size=4).map(
    lambda kv: [{"key": k, "value": v} for k, v in kv])


@st.composite
def json_spans(draw: st.DrawFn, prefix: str) -> list[dict[str, Any]]:
    spans = []
    for i in range(draw(st.integers(0, 5))):
        tid = prefix + draw(st.text(alphabet="0123456789abcdefABCDEF", min_size=24, max_size=24))
        tid = draw(st.sampled_from([tid, tid, tid.upper(), tid[:-1], tid[:-2] + "zz"]))
        sid = draw(st.sampled_from([f"{i + 1:016x}", f"{i + 1:016X}", f"{i + 1:015x}", "g" * 16]))
        span: dict[str, Any] = {"traceId": tid, "spanId": sid, "name": draw(odd_text),
                                "kind": draw(st.one_of(st.integers(-1, 9), st.sampled_from(["SPAN_KIND_CLIENT", "x"]))),
                                "startTimeUnixNano": draw(json_time), "endTimeUnixNano": draw(json_time),
                                "attributes": draw(json_attrs),
                                "status": {"code": draw(st.integers(0, 3)), "message": draw(odd_text)}}
        if draw(st.booleans()):
            span["events"] = [{"name": draw(odd_text), "timeUnixNano": draw(json_time),
                               "attributes": draw(json_attrs)}]
        if draw(st.booleans()):
            del span[draw(st.sampled_from(sorted(span)))]
        spans.append(span)
    return spans


def _json_text(doc: Any) -> bytes:
    # ensure_ascii writes lone surrogates as \\u escapes, as any JSON encoder may
    return json.dumps(doc, ensure_ascii=True, allow_nan=True).replace("Infinity", "1e400").encode()


def check(receiver: tuple[OTLPReceiver, Path, httpx.Client], prefix: str, body: bytes, ctype: str,
          sent_ids: set[str], n_sent: int) -> None:
    r, db, client = receiver
    resp = client.post(r.endpoint, content=body, headers={"Content-Type": ctype})
    assert resp.status_code in ANSWERS, resp.text
    stored = stored_ids(db, prefix)
    if resp.status_code != 200:
        assert stored == set()
        return
    if ctype == "application/json":
        rejected = int(resp.json().get("partialSuccess", {}).get("rejectedSpans", 0))
    else:
        rejected = ExportTraceServiceResponse.FromString(resp.content).partial_success.rejected_spans
    assert len(stored) == n_sent - rejected
    assert {s for _, s in stored} <= sent_ids


@fuzz(30)
@given(data=st.data())
def test_json_requests(receiver: tuple[OTLPReceiver, Path, httpx.Client], data: st.DataObject) -> None:
    prefix = f"{next(_counter):08x}"
    spans = data.draw(json_spans(prefix))
    doc = {"resourceSpans": [{"resource": {"attributes": data.draw(json_attrs)},
                              "scopeSpans": [{"scope": {"name": data.draw(odd_text)}, "spans": spans}]}]}
    # spans whose trace id lost the prefix cannot be counted under it: only send countable ones
    spans = [s for s in spans if str(s.get("traceId", "")).lower().startswith(prefix)]
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"] = spans
    body = _json_text(doc)
    sent = {str(s.get("spanId", "")).lower() for s in spans}
    if data.draw(st.integers(0, 4)) == 0:  # malformed: cut or corrupt the text
        cut = data.draw(st.integers(0, len(body)))
        body = body[:cut] + data.draw(st.binary(max_size=4))
        r, _, client = receiver
        assert client.post(r.endpoint, content=body, headers={"Content-Type": "application/json"}
                           ).status_code in ANSWERS
        return
    check(receiver, prefix, body, "application/json", sent, len(spans))


def _pb_value(draw: st.DrawFn, depth: int = 0) -> AnyValue:
    kind = draw(st.integers(0, 5 if depth < 2 else 3))
    if kind == 0:
        return AnyValue(string_value=draw(odd_text.filter(lambda s: not any("\ud800" <= c <= "\udfff" for c in s))))
    if kind == 1:
        return AnyValue(int_value=draw(st.integers(-(2**63), 2**63 - 1)))
    if kind == 2:
        return AnyValue(double_value=draw(st.floats()))
    if kind == 3:
        return AnyValue(bytes_value=draw(st.binary(max_size=8)))
    n = draw(st.integers(0, 2))
    if kind == 4:
        return AnyValue(array_value=ArrayValue(values=[_pb_value(draw, depth + 1) for _ in range(n)]))
    kvs = [KeyValue(key=draw(st.text(max_size=5)), value=_pb_value(draw, depth + 1)) for _ in range(n)]
    return AnyValue(kvlist_value=KeyValueList(values=kvs))


@fuzz(30)
@given(data=st.data())
def test_protobuf_requests(receiver: tuple[OTLPReceiver, Path, httpx.Client], data: st.DataObject) -> None:
    prefix = f"{next(_counter):08x}"
    spans = []
    for i in range(data.draw(st.integers(0, 5))):
        tid = bytes.fromhex(prefix) + data.draw(st.binary(min_size=12, max_size=12))
        sid = data.draw(st.sampled_from([(i + 1).to_bytes(8, "big"), b"\x01" * 7, b""]))
        spans.append(Span(trace_id=tid, span_id=sid, name=data.draw(st.text(max_size=10)),
                          kind=data.draw(st.integers(0, 5)),
                          start_time_unix_nano=data.draw(st.integers(0, 2**64 - 1)),
                          end_time_unix_nano=data.draw(st.integers(0, 2**64 - 1)),
                          attributes=[KeyValue(key=data.draw(st.text(max_size=8)), value=_pb_value(data.draw))
                                      for _ in range(data.draw(st.integers(0, 3)))]))
    body = ExportTraceServiceRequest(resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=spans)])]
                                     ).SerializeToString()
    if data.draw(st.integers(0, 4)) == 0:  # malformed: truncated or with random bytes appended
        body = body[:data.draw(st.integers(0, len(body)))] + data.draw(st.binary(max_size=6))
        spans = []  # whatever still parses cannot be counted reliably; only the answer is checked
    sent = {s.span_id.hex() for s in spans}
    r, db, client = receiver
    if not spans:
        resp = client.post(r.endpoint, content=body, headers={"Content-Type": "application/x-protobuf"})
        assert resp.status_code in ANSWERS
        return
    check(receiver, prefix, body, "application/x-protobuf", sent, len(spans))


@fuzz(30)
@given(body=st.binary(max_size=300), ctype=st.sampled_from(["application/json", "application/x-protobuf"]),
       encoding=st.sampled_from(["", "gzip", "deflate", "identity", "br"]))
def test_random_bytes_are_answered(receiver: tuple[OTLPReceiver, Path, httpx.Client], body: bytes, ctype: str,
                                   encoding: str) -> None:
    r, _, client = receiver
    headers = {"Content-Type": ctype, **({"Content-Encoding": encoding} if encoding else {})}
    assert client.post(r.endpoint, content=body, headers=headers).status_code in ANSWERS

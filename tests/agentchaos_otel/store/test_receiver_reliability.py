"""The OTLP receiver answers every request properly, stays up, and stores what it answered 200 for
(issue 8, items 4 and 6). Real loopback HTTP (httpx and raw sockets) against a real receiver."""

from __future__ import annotations

import gzip
import json
import threading
import time
import zlib
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from agentchaos_otel import attributes as A
from agentchaos_otel.store.database.connect import open_store
from agentchaos_otel.store.durability.spool import Spool
from agentchaos_otel.store.receivers import otlp_http as otlp_receiver
from agentchaos_otel.store.receivers.otlp_http import OTLPReceiver
from tests.support.otlp import PB, body_of, json_request, json_span, pb_request, post_head, raw_http, stored_ids

pytestmark = pytest.mark.reliability

T1 = "11" * 16
JS = {"Content-Type": "application/json"}


def good(receiver: OTLPReceiver, trace: str = T1, n: int = 1) -> None:
    """The receiver still serves: a valid request is answered 200 and stored."""
    spans = [json_span(trace, f"{i + 1:016x}") for i in range(n)]
    r = httpx.post(receiver.endpoint, content=body_of(json_request(spans)), headers=JS)
    assert r.status_code == 200, r.text


def test_gzip_bomb_gets_413_and_the_receiver_stays_up(tmp_path: Path) -> None:
    bomb = gzip.compress(b"\x00" * (160 * 1024 * 1024), compresslevel=9)  # 160 KiB on the wire
    assert len(bomb) < 1024 * 1024
    db = tmp_path / "t.duckdb"
    with OTLPReceiver(db) as receiver:
        r = httpx.post(receiver.endpoint, content=bomb, headers={**PB, "Content-Encoding": "gzip"})
        assert r.status_code == 413
        deflated = zlib.compress(pb_request(3, trace_byte=0x22))
        r = httpx.post(receiver.endpoint, content=deflated, headers={**PB, "Content-Encoding": "deflate"})
        assert r.status_code == 200
        r = httpx.post(receiver.endpoint, content=b"x", headers={**PB, "Content-Encoding": "br"})
        assert r.status_code == 415
        good(receiver)
    assert len(stored_ids(db)) == 4


def test_oversized_raw_body_gets_413(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(otlp_receiver, "MAX_BODY", 1000)
    with OTLPReceiver(tmp_path / "t.duckdb") as receiver:
        status, _ = raw_http(receiver.port, post_head("/v1/traces", "application/x-protobuf", "5000"))
        assert status == 413
        good(receiver)


def test_time_beyond_bigint_is_stored_and_spooled_spans_stay(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    with OTLPReceiver(db) as receiver:
        good(receiver, "aa" * 16, n=3)
    # spans spooled while the file was unavailable must survive a later odd span
    Spool(db).append([{"trace_id": "bb" * 16, "span_id": f"{i:016x}", "name": "spooled", "start_ns": i}
                      for i in range(1, 4)])
    with OTLPReceiver(db) as receiver:
        spans = [json_span(T1, "0" * 15 + "1", start=str(2**63)), json_span(T1, "0" * 15 + "2", start=str(2**64))]
        r = httpx.post(receiver.endpoint, content=body_of(json_request(spans)), headers=JS)
        assert r.status_code == 200 and "partialSuccess" not in r.json()
    assert len(stored_ids(db)) == 8
    with open_store(db) as conn:
        starts = conn.execute("SELECT start_ns, attributes->>'$.\"agentchaos.store.repaired\"' FROM spans "
                              "WHERE trace_id = ?", [T1]).fetchall()
    assert starts == [(2**63 - 1, '["start_ns"]')] * 2
    assert not Path(str(db) + ".spool.rejected.jsonl").exists()


@pytest.mark.parametrize(("body", "status"), [
    (b"[" * 100_000 + b"]" * 100_000, 400),
    (b'{"resourceSpans": [{"scopeSpans": [{"spans": [' + json.dumps(
        json_span(T1, "1" * 16, start=1e300)).encode().replace(b"1e+300", b"1e400") + b"]}]}]}", 400),
    (b'{"resourceSpans": "\xed\xa0\x80"}', 400),  # a lone surrogate as raw bytes: not UTF-8
    (b"{not json", 400),
    (b"null", 400),
], ids=["deep-nesting", "1e400", "raw-surrogate", "truncated", "null"])
def test_malformed_json_gets_4xx(tmp_path: Path, body: bytes, status: int) -> None:
    db = tmp_path / "t.duckdb"
    with OTLPReceiver(db) as receiver:
        r = httpx.post(receiver.endpoint, content=body, headers=JS)
        assert r.status_code == status, r.text
        good(receiver)
    assert len(stored_ids(db)) == 1


def test_escaped_lone_surrogate_is_stored_repaired(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    body = body_of(json_request([json_span(T1, "1" * 16, name="x")])).replace(b'"name": "x"', b'"name": "x\\ud800"')
    with OTLPReceiver(db) as receiver:
        assert httpx.post(receiver.endpoint, content=body, headers=JS).status_code == 200
    with open_store(db) as conn:
        assert conn.execute("SELECT name FROM spans").fetchall() == [("x\ufffd",)]


@pytest.mark.parametrize(("head", "status"), [
    (post_head("/v1/traces", "application/json", "twelve"), 400),
    (post_head("/v1/traces", "application/json", "-5"), 400),
    (post_head("/v1/traces", "application/json", None), 411),
    (post_head("/v1/traces", "application/json", "100") + b'{"resourceSpans": []}', 408),
    (post_head("/v1/traces", "text/plain", "2") + b"{}", 415),
    (post_head("/v1/logs", "application/json", "2") + b"{}", 404),
], ids=["non-numeric-length", "negative-length", "no-length", "length-over-body", "content-type", "path"])
def test_bad_framing_gets_4xx_and_the_receiver_keeps_serving(tmp_path: Path, head: bytes, status: int) -> None:
    with OTLPReceiver(tmp_path / "t.duckdb", read_timeout_s=0.5) as receiver:
        # The answer itself is the check (a hang would leave no status): no wall-clock limit here.
        got, _ = raw_http(receiver.port, head, timeout_s=60)
        assert got == status
        good(receiver)


def test_partial_success_names_refused_spans(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    spans = [json_span(T1, "1" * 16), json_span(T1, "xyz"), json_span("zz" * 16, "2" * 16),
             json_span(T1, "3" * 16, attrs=[{"key": "n", "value": {"intValue": "1e400"}}])]
    with OTLPReceiver(db) as receiver:
        r = httpx.post(receiver.endpoint, content=body_of(json_request(spans)), headers=JS)
        assert r.status_code == 200
        assert r.json()["partialSuccess"]["rejectedSpans"] == "3"
        assert "invalid trace or span id" in r.json()["partialSuccess"]["errorMessage"]
        assert receiver.received == 1 and receiver.rejected == 3
        r = httpx.post(receiver.endpoint, content=pb_request(2, trace_byte=0x33), headers=PB)
        resp = ExportTraceServiceResponse.FromString(r.content)
        assert r.status_code == 200 and not resp.HasField("partial_success")
    assert stored_ids(db) == {(T1, "1" * 16)} | {("33" * 16, f"{i:016x}") for i in (1, 2)}


def test_full_queue_answers_503_with_retry_after_and_loses_nothing(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    release = threading.Event()
    results: dict[str, int] = {}
    with OTLPReceiver(db, queue_size=1) as receiver:
        real = receiver.exporter.spool.append
        writing = threading.Event()

        def slow(rows: list[dict[str, Any]]) -> None:
            writing.set()
            release.wait(300)  # a writer held up (a slow disk), until the test lets it go
            real(rows)

        receiver.exporter.spool.append = slow  # type: ignore[method-assign]

        def send(name: str, byte: int) -> None:
            results[name] = httpx.post(receiver.endpoint, content=pb_request(4, trace_byte=byte), headers=PB,
                                       timeout=20).status_code

        first = threading.Thread(target=send, args=("first", 0x41))
        first.start()
        assert writing.wait(300)  # the writer has taken the first request and blocks in it
        second = threading.Thread(target=send, args=("second", 0x42))
        second.start()
        while not receiver.ingest.full():  # however slow the machine: the second request waits in the queue
            time.sleep(0.01)
        r = httpx.post(receiver.endpoint, content=pb_request(4, trace_byte=0x43), headers=PB)
        assert r.status_code == 503 and r.headers["Retry-After"] == "1"
        release.set()
        first.join()
        second.join()
        assert results == {"first": 200, "second": 200}
        assert httpx.post(receiver.endpoint, content=pb_request(4, trace_byte=0x43), headers=PB).status_code == 200
    assert len(stored_ids(db)) == 12
    with open_store(db) as conn:
        assert A.STORE_REPAIRED not in conn.execute("SELECT string_agg(attributes::VARCHAR) FROM spans").fetchone()[0]


def test_a_client_that_resets_its_connection_leaves_no_traceback(tmp_path: Path,
                                                                  capfd: pytest.CaptureFixture[str]) -> None:
    """A sender killed mid-request (RST), before and after its headers: nothing on stderr, still serving."""
    import socket
    import struct

    with OTLPReceiver(tmp_path / "t.duckdb") as receiver:
        head = post_head("/v1/traces", "application/x-protobuf", "100").replace(
            b"Host: x", f"Host: 127.0.0.1:{receiver.port}".encode())
        for partial in (b"POST /v1/tra", head + b"abc"):
            s = socket.create_connection(("127.0.0.1", receiver.port))
            s.sendall(partial)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()  # RST: the server's read fails with ConnectionResetError
        good(receiver)
    err = capfd.readouterr().err
    assert "Traceback" not in err and "ConnectionResetError" not in err, err

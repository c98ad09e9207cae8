"""Throughput of the OTLP receiver into DuckDB against a receiver that only parses and dumps JSONL.

Run: ``python -m benchmarks.bench_receiver [--quick]``

Ours runs as ``agentchaos traces receive`` runs it by default (``otlp_workers.default_workers()``
parser processes beside the writer) and, beside that, parsing in the receiver's own process
(``--workers 0``). Both receivers get the same 512-span OTLP/protobuf requests over loopback HTTP/1.1 from 1, 4 and
20 concurrent senders (separate processes, each with one keep-alive connection; a 503 is retried
after its Retry-After, as OTLP exporters do). The baseline is a stdlib HTTP server that parses each
request with the same protobuf library and appends one JSON line per span to a file: no
validation, no repair, no database. Figures are spans per second of wall time from the first
request to the last answer; every span the receiver answered 200 for is counted in the database
afterwards (a mismatch raises). The two are run side by side per sender count, so machine load
affects them alike.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import duckdb
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from agentchaos_otel.store.receivers.otlp_http import OTLPReceiver
from agentchaos_otel.store.receivers.parse_workers import default_workers

SPANS_PER_REQUEST = 512
SENDERS = (1, 4, 20)
TARGET = 20_000.0  # spans/s at 4 and 20 senders on a 2-core machine


def payload(request_no: int) -> bytes:
    """One 512-span request of a typical agent trace (chat spans with GenAI attributes)."""
    trace_id = request_no.to_bytes(16, "big")
    spans = []
    for i in range(SPANS_PER_REQUEST):
        kvs = [KeyValue(key="gen_ai.operation.name", value=AnyValue(string_value="chat")),
               KeyValue(key="gen_ai.request.model", value=AnyValue(string_value="gpt-x")),
               KeyValue(key="gen_ai.usage.input_tokens", value=AnyValue(int_value=100 + i)),
               KeyValue(key="gen_ai.usage.output_tokens", value=AnyValue(int_value=20 + i)),
               KeyValue(key="server.address", value=AnyValue(string_value="api.example.test")),
               KeyValue(key="agentchaos.step", value=AnyValue(int_value=i))]
        spans.append(Span(trace_id=trace_id, span_id=(i + 1).to_bytes(8, "big"), name="chat gpt-x",
                          kind=Span.SPAN_KIND_CLIENT, start_time_unix_nano=1_700_000_000_000_000_000 + i * 1000,
                          end_time_unix_nano=1_700_000_000_000_500_000 + i * 1000, attributes=kvs))
    req = ExportTraceServiceRequest(resource_spans=[ResourceSpans(
        resource=Resource(attributes=[KeyValue(key="service.name", value=AnyValue(string_value="bench"))]),
        scope_spans=[ScopeSpans(spans=spans)])])
    return req.SerializeToString()


class _DumpHandler(BaseHTTPRequestHandler):
    """Baseline: parse the protobuf, append a JSON line per span, answer 200."""

    protocol_version = "HTTP/1.1"
    out: Any
    lock: threading.Lock

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def do_POST(self) -> None:  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        req = ExportTraceServiceRequest.FromString(body)
        lines = []
        for rs in req.resource_spans:
            for ss in rs.scope_spans:
                for sp in ss.spans:
                    lines.append(json.dumps({"trace_id": sp.trace_id.hex(), "span_id": sp.span_id.hex(),
                                             "name": sp.name, "start": sp.start_time_unix_nano,
                                             "end": sp.end_time_unix_nano,
                                             "attributes": {kv.key: str(kv.value) for kv in sp.attributes}}))
        with self.lock:
            self.out.write("\n".join(lines) + "\n")
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # same backlog as the receiver's


def _sender(port: int, bodies: list[bytes], start: Any, results: Any) -> None:
    try:
        results.put(_send(port, bodies, start))
    except Exception as exc:
        results.put(f"{type(exc).__name__}: {exc}")


def _send(port: int, bodies: list[bytes], start: Any) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    start.wait()
    ok = 0
    for body in bodies:
        while True:
            conn.request("POST", "/v1/traces", body=body, headers={"Content-Type": "application/x-protobuf"})
            resp = conn.getresponse()
            resp.read()
            if resp.status == 200:
                ok += 1
                break
            if resp.status in (429, 503):
                time.sleep(float(resp.getheader("Retry-After") or 1))
                continue
            raise RuntimeError(f"unexpected answer {resp.status}")
    return ok


def _drive(port: int, senders: int, bodies: list[bytes]) -> float:
    """Seconds for ``senders`` processes to deliver ``bodies`` (split evenly) to ``port``."""
    ctx = mp.get_context("fork")
    start, results = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_sender, args=(port, bodies[i::senders], start, results)) for i in range(senders)]
    for p in procs:
        p.start()
    time.sleep(0.2)  # every sender connected and waiting
    t0 = time.perf_counter()
    start.set()
    answers = [results.get(timeout=600) for _ in procs]
    elapsed = time.perf_counter() - t0
    errors = [a for a in answers if isinstance(a, str)]
    if errors:
        raise RuntimeError(f"sender failed: {errors[0]}")
    delivered = sum(answers)
    for p in procs:
        p.join()
    if delivered != len(bodies):
        raise RuntimeError(f"{delivered} of {len(bodies)} requests delivered")
    return elapsed


def _ours(senders: int, bodies: list[bytes], tmp: Path, workers: int) -> float:
    db = tmp / f"ours-{senders}-{workers}.duckdb"
    with OTLPReceiver(db, workers=workers) as receiver:
        if workers:
            time.sleep(1.0)  # the worker processes start (spawned: a fresh interpreter each)
        elapsed = _drive(receiver.port, senders, bodies)
    with duckdb.connect(str(db), read_only=True) as conn:
        stored = conn.execute("SELECT count(*) FROM spans").fetchone()[0]
    if stored != len(bodies) * SPANS_PER_REQUEST:
        raise RuntimeError(f"stored {stored} spans, answered 200 for {len(bodies) * SPANS_PER_REQUEST}")
    return len(bodies) * SPANS_PER_REQUEST / elapsed


def _baseline(senders: int, bodies: list[bytes], tmp: Path) -> float:
    with open(tmp / f"dump-{senders}.jsonl", "w", encoding="utf-8") as out:
        handler = type("H", (_DumpHandler,), {"out": out, "lock": threading.Lock()})
        server = _Server(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            elapsed = _drive(int(server.server_address[1]), senders, bodies)
        finally:
            server.shutdown()
            server.server_close()
    return len(bodies) * SPANS_PER_REQUEST / elapsed


def run(quick: bool = False) -> list[dict[str, Any]]:
    """Per sender count: our spans/s (as ``traces receive`` runs it, and parsing in-process) beside the baseline's."""
    n_requests = 40 if quick else 160
    bodies = [payload(i + 1) for i in range(n_requests)]
    workers = default_workers()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for senders in SENDERS:
            base = _baseline(senders, bodies, tmp)
            ours = _ours(senders, bodies, tmp, workers)
            alone = _ours(senders, bodies, tmp, 0) if workers else None
            target = TARGET if senders > 1 else None
            rows.append({
                "figure": f"OTLP receiver throughput, {senders} sender(s), 512-span protobuf requests, "
                          f"{workers} parser process(es) (the default here)",
                "value": round(ours), "unit": "spans/s",
                "baseline": "parse + JSONL dump, no storage", "baseline_value": round(base),
                "ratio": round(ours / base, 3), "target": f">= {TARGET:.0f} spans/s" if target else None,
                "holds": (ours >= target) if target else None,
            })
            if alone is not None:
                rows.append({
                    "figure": f"OTLP receiver throughput, {senders} sender(s), parsing in the receiver's process "
                              "(--workers 0)",
                    "value": round(alone), "unit": "spans/s",
                    "baseline": "parse + JSONL dump, no storage", "baseline_value": round(base),
                    "ratio": round(alone / base, 3), "target": "informational", "holds": None,
                })
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer requests per configuration")
    args = ap.parse_args()
    rows = run(quick=args.quick)
    for r in rows:
        print(f"{r['figure']}: {r['value']:,} spans/s  vs  {r['baseline_value']:,}  ratio {r['ratio']}  "
              f"{r['target'] or '-'} {'' if r['holds'] is None else ('holds' if r['holds'] else 'MISSED')}")


if __name__ == "__main__":
    main()

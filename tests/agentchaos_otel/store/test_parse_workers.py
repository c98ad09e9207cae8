"""The OTLP receiver with parsing in worker processes: same answers, same store, same counters."""

from __future__ import annotations

import gzip
import threading
from pathlib import Path

import httpx
import pytest

from agentchaos_otel import redact
from agentchaos_otel.store.database.connect import open_store
from agentchaos_otel.store.receivers.otlp_http import OTLPReceiver
from agentchaos_otel.store.receivers.parse_workers import default_workers
from tests.support.otlp import PB, body_of, json_request, json_span, pb_request, stored_ids

JS = {"Content-Type": "application/json"}


def _post_all(endpoint: str, bodies: list[tuple[bytes, dict[str, str]]]) -> list[int]:
    statuses: list[int] = [0] * len(bodies)

    def send(i: int) -> None:
        with httpx.Client(timeout=30) as client:
            statuses[i] = client.post(endpoint, content=bodies[i][0], headers=bodies[i][1]).status_code

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(bodies))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return statuses


def test_workers_store_what_the_in_process_receiver_stores(tmp_path: Path) -> None:
    bodies = [(pb_request(5, trace_byte=0x10 + i), PB) for i in range(12)]
    bodies.append((gzip.compress(pb_request(3, trace_byte=0x60)), {**PB, "Content-Encoding": "gzip"}))
    bodies.append((body_of(json_request([json_span("77" * 16, f"{i + 1:016x}") for i in range(4)])), JS))
    results = {}
    for workers in (0, 2):
        db = tmp_path / f"w{workers}.duckdb"
        with OTLPReceiver(db, workers=workers) as receiver:
            statuses = _post_all(receiver.endpoint, bodies)
            bad = httpx.post(receiver.endpoint, content=b"\x00not protobuf", headers=PB)
            assert bad.status_code == 400
        assert statuses == [200] * len(bodies)
        assert receiver.received == 12 * 5 + 3 + 4 and receiver.rejected == 0
        assert receiver.answers.get("refused") == 1  # counted where the answer was decided, in a worker
        with open_store(db) as conn:
            results[workers] = sorted(conn.execute(
                "SELECT trace_id, span_id, name, kind, start_ns, end_ns, attributes::VARCHAR, resource::VARCHAR "
                "FROM spans").fetchall())
    assert results[2] == results[0] and len(results[2]) == receiver.received


def test_workers_redact_what_the_receiver_process_remembered(tmp_path: Path) -> None:
    secret = "zq-remembered-credential-98231"  # no rule's shape: only the registry knows it
    redact.remember(secret)
    try:
        db = tmp_path / "t.duckdb"
        span = json_span("88" * 16, "1" * 16, attrs=[{"key": "note", "value": {"stringValue": f"used {secret}"}}])
        with OTLPReceiver(db, workers=1) as receiver:
            r = httpx.post(receiver.endpoint, content=body_of(json_request([span])), headers=JS)
            assert r.status_code == 200
        with open_store(db) as conn:
            text = conn.execute("SELECT attributes::VARCHAR FROM spans").fetchone()[0]
        assert secret not in text and "used" in text
    finally:
        redact.forget_all()


def test_stopping_answers_nothing_it_did_not_store(tmp_path: Path) -> None:
    """Every 200 is stored; a request cut off by the stop gets no 200 (its exporter retries)."""
    db = tmp_path / "t.duckdb"
    receiver = OTLPReceiver(db, workers=2).start()
    ok: list[int] = []
    stop = threading.Event()

    def sender(k: int) -> None:
        i = 0
        with httpx.Client(timeout=30) as client:
            while not stop.is_set():
                try:
                    r = client.post(receiver.endpoint, content=pb_request(4, trace_byte=k * 16 + i % 16), headers=PB)
                except httpx.HTTPError:
                    return
                if r.status_code == 200:
                    ok.append(k * 16 + i % 16)
                i += 1

    threads = [threading.Thread(target=sender, args=(k,)) for k in range(1, 4)]
    for t in threads:
        t.start()
    while len(ok) < 10:
        threading.Event().wait(0.01)
    receiver.stop()
    stop.set()
    for t in threads:
        t.join()
    stored = {tid for tid, _ in stored_ids(db)}
    assert {f"{b:02x}" * 16 for b in ok} <= stored


@pytest.mark.parametrize("cpus,expected", [(1, 0), (2, 2), (16, 4), (None, 0)])
def test_default_workers_follow_the_cores(monkeypatch: pytest.MonkeyPatch, cpus: int | None, expected: int) -> None:
    monkeypatch.setattr("os.cpu_count", lambda: cpus)
    assert default_workers() == expected


def test_traces_receive_with_workers_from_the_command_line(tmp_path: Path) -> None:
    """The console command spawns its workers, stores what it answered 200 for and says how many."""
    import os
    import re
    import shutil
    import subprocess
    import sys

    db = tmp_path / "cli.duckdb"
    exe = shutil.which("agentchaos", path=os.path.dirname(sys.executable)) or "agentchaos"
    proc = subprocess.Popen([exe, "traces", "receive", "--db", str(db), "--port", "0", "--seconds", "8",
                             "--workers", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "300"})
    assert proc.stdout is not None
    line = proc.stdout.readline()
    m = re.search(r"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=(\S+)", line)
    assert m, line
    statuses = _post_all(m.group(1), [(pb_request(6, trace_byte=0x70 + i), PB) for i in range(4)])
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert statuses == [200] * 4
    assert "received 24 spans" in out
    assert len(stored_ids(db)) == 24


def test_traces_receive_queue_option_bounds_the_writer_queue(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--queue` sizes the queue whose overflow is answered 503 + Retry-After; without it the
    environment variable (or 64) does."""
    from typer.testing import CliRunner

    from agentchaos_otel.cli.main import app
    from agentchaos_otel.store.receivers import otlp_http as otlp_receiver

    made: list[OTLPReceiver] = []

    class Recording(OTLPReceiver):
        def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(otlp_receiver, "OTLPReceiver", Recording)
    monkeypatch.setenv("AGENTCHAOS_RECEIVER_QUEUE", "9")
    base = ["traces", "receive", "--db", str(tmp_path / "q.duckdb"), "--port", "0", "--seconds", "0.1",
            "--workers", "0"]
    for extra, expected in ((["--queue", "3"], 3), ([], 9)):
        result = CliRunner().invoke(app, base + extra)
        assert result.exit_code == 0, result.output
        assert made.pop().ingest.max_pending == expected
    bad = CliRunner().invoke(app, base + ["--queue", "0"])
    assert bad.exit_code == 2

"""Faults of our own: the trace file is locked, read-only, corrupt or deleted while agents run.

Each case runs real episodes through the real SDK (batch processor, DuckDB exporter, the flush at
episode end), puts the fault on the file between episodes, runs more, removes the fault, runs more,
and then counts spans produced against spans stored (database plus spool, read with plain DuckDB
SQL and the JSONL file): zero loss for every ended episode. The receiver gets the same treatment
with OTLP requests. The disk-full and SIGKILL cases are in ``test_reliability_store_durability``.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path

import duckdb
import httpx
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from agentchaos_otel.episode_scope import episode
from agentchaos_otel.store.durability.episode_flush import EpisodeFlushProcessor
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from agentchaos_otel.store.receivers.otlp_http import OTLPReceiver
from tests.agentchaos_otel.store.test_spool import _HOLDER, read_only_file
from tests.support.otlp import PB, pb_request

pytestmark = pytest.mark.reliability

STEPS = 2


@contextmanager
def locked(db: Path) -> Iterator[None]:
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)


@contextmanager
def corrupt(db: Path) -> Iterator[None]:
    aside = db.with_suffix(".good")
    db.rename(aside)
    db.write_bytes(bytes(range(256)) * 64)
    try:
        yield
    finally:
        db.unlink()
        aside.rename(db)  # the user restores the file


@contextmanager
def deleted(db: Path) -> Iterator[None]:
    db.unlink()  # the spans stored so far are gone with the file; the next ones must not be
    yield


FAULTS: dict[str, Callable[[Path], AbstractContextManager[None]]] = {
    "locked": locked, "read_only": read_only_file, "corrupt": corrupt, "deleted": deleted,
    "none": lambda db: nullcontext(),
}


def on_disk(db: Path) -> dict[str, int]:
    """Spans per trace in the database and its spool (plain SQL and JSON, not our reader)."""
    counts: dict[str, int] = {}
    spool = Path(str(db) + ".spool.jsonl")
    if spool.exists():  # first: rows only move from the spool into the database
        for line in spool.read_text().splitlines():
            tid = line.split('"trace_id":"', 1)[1][:32]
            counts[tid] = counts.get(tid, 0) + 1
    try:
        with duckdb.connect(str(db), read_only=True) as conn:
            for tid, n in conn.execute("SELECT trace_id, count(*) FROM spans GROUP BY 1").fetchall():
                counts[tid] = counts.get(tid, 0) + n
    except duckdb.Error:
        pass  # the file is the fault (locked, corrupt, gone): its spans are in the spool
    return counts


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_episodes_survive_file_faults(tmp_path: Path, fault: str) -> None:
    db = tmp_path / "t.duckdb"
    tp = TracerProvider()
    bsp = BatchSpanProcessor(DuckDBSpanExporter(db, lock_timeout_s=0.2), schedule_delay_millis=600_000)
    tp.add_span_processor(bsp)
    tp.add_span_processor(EpisodeFlushProcessor(bsp))
    tracer = tp.get_tracer("faults")
    produced: dict[str, int] = {}

    def run(phase: str, n: int) -> None:
        for i in range(n):
            with episode(f"{phase}-{i}", tracer_provider=tp) as ep:
                for j in range(STEPS):
                    with tracer.start_as_current_span(f"step-{j}"):
                        pass
                assert ep.span is not None
                produced[format(ep.span.get_span_context().trace_id, "032x")] = STEPS + 1

    run("before", 2)
    with FAULTS[fault](db):
        if fault == "deleted":
            produced.clear()
        run("during", 3)
        during = on_disk(db)
    run("after", 2)
    tp.shutdown()
    stored = on_disk(db)
    assert {t: stored.get(t, 0) for t in produced} == produced
    assert all(during.get(t, 0) == n for t, n in produced.items() if t in during)  # nothing half-written
    assert not Path(str(db) + ".spool.jsonl").exists()  # everything loaded once the file was back
    assert not Path(str(db) + ".spool.rejected.jsonl").exists()


@pytest.mark.parametrize("fault", ["locked", "corrupt", "read_only"])
def test_receiver_keeps_accepting_through_file_faults(tmp_path: Path, fault: str) -> None:
    db = tmp_path / "t.duckdb"
    sent = 0
    with OTLPReceiver(db) as receiver:
        receiver.exporter.lock_timeout_s = 0.2
        with httpx.Client() as client:
            def send(byte: int) -> None:
                nonlocal sent
                r = client.post(receiver.endpoint, content=pb_request(5, trace_byte=byte), headers=PB)
                assert r.status_code == 200
                sent += 5

            send(1)
            deadline = time.monotonic() + 10
            while Path(str(db) + ".spool.jsonl").exists() and time.monotonic() < deadline:
                time.sleep(0.02)  # the idle receiver loads its journal into the database
            assert db.exists() and not Path(str(db) + ".spool.jsonl").exists()
            with FAULTS[fault](db):
                send(2)
                send(3)
                assert sum(on_disk(db).values()) >= 10  # answered 200: on disk (spool) while the file is unusable
            send(4)
    assert sum(on_disk(db).values()) == sent
    assert not Path(str(db) + ".spool.jsonl").exists()

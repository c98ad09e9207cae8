"""The DuckDB span exporter: row conversion, idempotence, secrets, auto-configuration, live reads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExportResult
from opentelemetry.trace import SpanKind
from opentelemetry.util._importlib_metadata import entry_points

from agentchaos_otel import attributes as A
from agentchaos_otel.store.database.connect import StoreError, connect, open_store
from agentchaos_otel.store.durability.spool import spool_path
from agentchaos_otel.store.exporter import DuckDBSpanExporter, is_secret_key
from tests.agentchaos_otel.store.test_support_builders import Step, emit_episode, finished, provider


def count(path: Path, sql: str = "SELECT count(*) FROM spans") -> int:
    with open_store(path) as conn:
        return conn.execute(sql).fetchone()[0]


def test_row_shape(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    with provider(db, service="svc-a") as (tracer, mem, _):
        with tracer.start_as_current_span("outer") as outer:
            with tracer.start_as_current_span("chat m", kind=SpanKind.CLIENT, attributes={
                    "b": True, "i": 7, "f": 0.25, "s": "x", "seq": ("a", "b"), "nums": (1, 2),
                    "nan": float("nan")}) as sp:
                sp.add_event("evt", {"k": 1})
        outer_id = format(outer.get_span_context().span_id, "016x")
        inner = finished(mem)[0]
    with open_store(db) as conn:
        row = conn.execute("SELECT * FROM spans WHERE name = 'chat m'").fetchone()
        cols = [d[0] for d in conn.description]
    r = dict(zip(cols, row, strict=True))
    assert r["trace_id"] == format(inner.context.trace_id, "032x")
    assert r["span_id"] == format(inner.context.span_id, "016x")
    assert r["parent_span_id"] == outer_id
    assert (r["kind"], r["status_code"], r["service_name"], r["scope_name"]) == (
        "CLIENT", "UNSET", "svc-a", "agentchaos-store-test")
    assert (r["start_ns"], r["end_ns"]) == (inner.start_time, inner.end_time)
    attrs = json.loads(r["attributes"])
    assert attrs == {"b": True, "i": 7, "f": 0.25, "s": "x", "seq": ["a", "b"], "nums": [1, 2], "nan": None}
    assert json.loads(r["resource"])[A.SERVICE_NAME] == "svc-a"
    (ev,) = json.loads(r["events"])
    assert ev["name"] == "evt" and ev["attributes"] == {"k": 1} and ev["time_ns"] > 0
    assert r["exported_ns"] > 0


def test_reexport_does_not_duplicate(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    with provider(db) as (tracer, mem, exp):
        emit_episode(tracer, "t", [Step("llm"), Step("tool")])
        spans = finished(mem)
        assert exp is not None
        assert exp.export(spans) == SpanExportResult.SUCCESS
        assert exp.export(spans[:2]) == SpanExportResult.SUCCESS
    assert count(db) == len(spans) == 3
    assert count(db, "SELECT count(*) FROM steps") == 2


def test_secret_looking_attributes_dropped(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    secrets = {"http.request.header.authorization": ("Bearer sk-1",), "api_key": "sk-2",
               "http.request.header.x-api-key": ("sk-3",), "Cookie": "sid=1",
               "http.request.header.proxy-authorization": ("Basic x",), "openai.api-key": "sk-4"}
    tp = TracerProvider(resource=Resource({A.SERVICE_NAME: "s", "x_api_key": "sk-5"}))
    exp = DuckDBSpanExporter(db)
    tp.add_span_processor(BatchSpanProcessor(exp))
    with tp.get_tracer("t").start_as_current_span("chat m", attributes={**secrets, "keep.me": 1,
                                                                         "token_count": 3}) as sp:
        sp.add_event("request", {"authorization": "Bearer sk-6", "ok": True})
    tp.shutdown()
    with open_store(db) as conn:
        attrs, resource, events = conn.execute("SELECT attributes, resource, events FROM spans").fetchone()
    text = attrs + resource + events
    assert "sk-" not in text and "sid=1" not in text and "Basic" not in text
    assert json.loads(attrs) == {"keep.me": 1, "token_count": 3}
    assert json.loads(events)[0]["attributes"] == {"ok": True}
    assert is_secret_key("HTTP.Request.Header.Set-Cookie") and not is_secret_key("gen_ai.usage.input_tokens")


def test_batch_processor_many_spans(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    tp = TracerProvider()
    tp.add_span_processor(BatchSpanProcessor(DuckDBSpanExporter(db), max_export_batch_size=64,
                                             schedule_delay_millis=10))
    tracer = tp.get_tracer("t")
    for i in range(40):
        emit_episode(tracer, f"task-{i}", [Step("llm"), Step("tool"), Step("llm")], seed=i)
    tp.shutdown()
    assert count(db) == 160
    assert count(db, "SELECT count(*) FROM episodes WHERE n_steps = 3") == 40
    assert not spool_path(db).exists()


def test_env_path_and_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`OTEL_TRACES_EXPORTER=agentchaos_duckdb` constructs the exporter with no arguments."""
    db = tmp_path / "env.duckdb"
    monkeypatch.setenv("AGENTCHAOS_DB", str(db))
    (ep,) = entry_points(group="opentelemetry_traces_exporter", name="agentchaos_duckdb")
    cls = ep.load()
    assert cls is DuckDBSpanExporter
    exp = cls()
    assert exp.path == str(db)  # tmp_path is absolute already
    tp = TracerProvider()
    tp.add_span_processor(BatchSpanProcessor(exp))
    with tp.get_tracer("t").start_as_current_span("x"):
        pass
    tp.shutdown()
    assert count(db) == 1


def test_default_path_without_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTCHAOS_DB", raising=False)
    monkeypatch.chdir(tmp_path)
    assert DuckDBSpanExporter().path == str(tmp_path / "traces.duckdb")


def test_export_after_shutdown_fails(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    with provider(None) as (tracer, mem, _):
        with tracer.start_as_current_span("x"):
            pass
        spans = finished(mem)
    exp = DuckDBSpanExporter(db)
    assert exp.export(spans) == SpanExportResult.SUCCESS
    exp.shutdown()
    assert exp.export(spans) == SpanExportResult.FAILURE
    assert exp.force_flush() is True


_WRITER = textwrap.dedent("""
    import sys
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from agentchaos_otel import attributes as A
    from agentchaos_otel.store.exporter import DuckDBSpanExporter

    db, n_batches, per_batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    tp = TracerProvider()
    proc = BatchSpanProcessor(DuckDBSpanExporter(db, lock_timeout_s=10.0), max_export_batch_size=per_batch,
                              schedule_delay_millis=600_000)  # only whole batches, never a timed partial one
    tp.add_span_processor(proc)
    tracer = tp.get_tracer("writer")
    for b in range(n_batches):
        for i in range(per_batch):
            with tracer.start_as_current_span("chat m", attributes={A.GEN_AI_OPERATION_NAME: "chat"}):
                pass
        proc.force_flush()
        print(b, flush=True)
    tp.shutdown()
""")


def test_read_while_another_process_exports(tmp_path: Path) -> None:
    """Readers open and close around a writer's per-batch transactions; nothing is lost."""
    db = tmp_path / "live.duckdb"
    n_batches, per_batch = 8, 25
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(db), str(n_batches), str(per_batch)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: list[int] = []
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # the store exists once the first batch is flushed
        assert first.strip() == "0"
        while proc.poll() is None:
            try:
                with open_store(db, timeout_s=10.0) as conn:
                    n = conn.execute("SELECT count(*) FROM llm_calls").fetchone()[0]
            except StoreError as exc:  # only a busy file is acceptable
                assert "locked" in str(exc)
                continue
            seen.append(n)
            time.sleep(0.02)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert seen, "the reader never got in while the writer ran"
    assert seen == sorted(seen) and all(n % per_batch == 0 for n in seen)  # whole batches only
    assert count(db) == n_batches * per_batch
    assert not spool_path(db).exists()


def test_read_in_same_process_while_exporting(tmp_path: Path) -> None:
    """In one process DuckDB refuses a read-only and a writable handle at once; both sides retry."""
    db = tmp_path / "same.duckdb"
    tp = TracerProvider()
    tp.add_span_processor(BatchSpanProcessor(DuckDBSpanExporter(db, lock_timeout_s=10.0),
                                             max_export_batch_size=10, schedule_delay_millis=5))
    tracer = tp.get_tracer("t")
    with tracer.start_as_current_span("first"):
        pass
    tp.force_flush()
    stop = threading.Event()
    seen: list[int] = []
    errors: list[str] = []

    def reader() -> None:
        while not stop.is_set():
            try:
                conn = connect(db, read_only=True, timeout_s=10.0)
            except StoreError as exc:
                errors.append(str(exc))
                return
            try:
                seen.append(conn.execute("SELECT count(*) FROM spans").fetchone()[0])
            finally:
                conn.close()
            stop.wait(0.02)  # a polling reader, not a busy loop that would starve the writer

    t = threading.Thread(target=reader)
    t.start()
    try:
        for _ in range(60):
            with tracer.start_as_current_span("chat m", attributes={A.GEN_AI_OPERATION_NAME: "chat"}):
                pass
        tp.force_flush()
    finally:
        stop.set()
        t.join(timeout=30)
        tp.shutdown()
    assert not errors
    assert seen and seen == sorted(seen)
    assert count(db) == 61
    assert not spool_path(db).exists()


def test_missing_directories_are_created(tmp_path: Path) -> None:
    db = tmp_path / "runs" / "r1" / "traces.duckdb"
    with provider(db) as (tracer, _, _):
        emit_episode(tracer, "t", [Step("llm")])
    assert count(db) == 2


def test_opentelemetry_instrument_auto_configuration(tmp_path: Path) -> None:
    """`OTEL_TRACES_EXPORTER=agentchaos_duckdb opentelemetry-instrument python agent.py` fills the store."""
    db = tmp_path / "auto.duckdb"
    agent = tmp_path / "agent.py"
    agent.write_text("from opentelemetry import trace\n"
                     "with trace.get_tracer('auto').start_as_current_span('chat m', attributes="
                     f"{{'{A.GEN_AI_OPERATION_NAME}': '{A.OP_CHAT}'}}):\n    pass\n")
    env = {**os.environ, "OTEL_TRACES_EXPORTER": "agentchaos_duckdb", "AGENTCHAOS_DB": str(db),
           "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none", "OTEL_SERVICE_NAME": "auto-svc"}
    instrument = Path(sys.executable).parent / "opentelemetry-instrument"
    r = subprocess.run([str(instrument), sys.executable, str(agent)], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    with open_store(db) as conn:
        got = conn.execute("SELECT l.name, s.service_name FROM llm_calls l "
                           "JOIN spans s USING (trace_id, span_id)").fetchall()
    assert got == [("chat m", "auto-svc")]

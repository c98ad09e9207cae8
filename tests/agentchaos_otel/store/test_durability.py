"""A killed process keeps every ended episode; a full disk loses nothing within the memory bound
(issue 8, item 8). Real subprocesses, real SIGKILL, a real tmpfs in a private mount namespace."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from agentchaos_otel.episode_scope import episode
from agentchaos_otel.store.durability.episode_flush import EpisodeFlushProcessor
from agentchaos_otel.store.durability.spool import Spool
from agentchaos_otel.store.exporter import DuckDBSpanExporter
from agentchaos_otel.store.read.summary import render_summary, summarize
from tests.support import REPO
from tests.support.store_child import STEPS

pytestmark = pytest.mark.reliability

ROOT = REPO


def child(*args: str, prefix: list[str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("AGENTCHAOS_PLAN", None)
    return subprocess.run([*(prefix or []), sys.executable, "-m", "tests.support.store_child", *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=timeout)


def ended(out: str) -> dict[str, int]:
    lines = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
    return {x["ended"]: x["spans"] for x in lines if "ended" in x}


def stored_per_trace(db: Path) -> dict[str, int]:
    with duckdb.connect(str(db), read_only=True) as conn:  # plain SQL, independent of our reader
        return dict(conn.execute("SELECT trace_id, count(*) FROM spans GROUP BY 1").fetchall())


@pytest.mark.parametrize("kill", ["between", "in_flight"])
def test_sigkill_loses_no_ended_episode(tmp_path: Path, kill: str) -> None:
    db = tmp_path / "t.duckdb"
    r = child(str(db), "5", "--kill", kill)
    assert r.returncode == -signal.SIGKILL, r.stderr
    produced = ended(r.stdout)
    assert len(produced) == 5
    stored = stored_per_trace(db)  # before: nothing at all (the batch processor held every span)
    assert {t: stored.get(t, 0) for t in produced} == produced
    assert sum(stored.values()) - sum(produced.values()) <= STEPS + 1  # at most the episode in flight


def test_episode_end_flushes_before_returning(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    tp = TracerProvider()
    bsp = BatchSpanProcessor(DuckDBSpanExporter(db), schedule_delay_millis=600_000)
    tp.add_span_processor(bsp)
    tp.add_span_processor(EpisodeFlushProcessor(bsp))
    tracer = tp.get_tracer("t")
    with tracer.start_as_current_span("outside"):
        pass
    assert not db.exists()  # spans outside episodes keep their batching
    with episode("t1", tracer_provider=tp):
        with tracer.start_as_current_span("step"):
            pass
    assert sum(stored_per_trace(db).values()) == 3  # on disk as the with-block returns
    tp.shutdown()


def test_a_shut_down_configure_on_the_users_provider_flushes_nothing_later(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The user's provider keeps our processors after ``Handle.shutdown``; they must go quiet."""
    import agentchaos_otel

    tp = TracerProvider()
    first = agentchaos_otel.configure(db=tmp_path / "a.duckdb", tracer_provider=tp, instrument=False,
                                      metrics=False)
    first.shutdown()
    second = agentchaos_otel.configure(db=tmp_path / "b.duckdb", tracer_provider=tp, instrument=False,
                                       metrics=False)
    with caplog.at_level("WARNING", logger="agentchaos_otel.store.durability.episode_flush"):
        with episode("t1", tracer_provider=tp):
            pass
    assert [r.getMessage() for r in caplog.records] == []
    assert sum(stored_per_trace(tmp_path / "b.duckdb").values()) == 1  # the live one still flushes
    second.shutdown()
    tp.shutdown()


def test_summary_says_how_many_spans_wait_in_the_spool(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    tp = TracerProvider()
    exp = DuckDBSpanExporter(db)
    tp.add_span_processor(BatchSpanProcessor(exp))
    with episode("t1", tracer_provider=tp):
        pass
    tp.shutdown()
    Spool(db).append([{**span_to_row_stub(i)} for i in range(7)])
    s = summarize(db)
    assert s["spans"] == 1 and s["spooled_spans"] == 7 and s["rejected_spans"] == 0
    assert "7 more spans wait in the spool" in render_summary(s)
    assert Spool(db).exists()  # a read-only summary does not load it


def span_to_row_stub(i: int) -> dict[str, object]:
    return {"trace_id": "ab" * 16, "span_id": f"{i + 1:016x}", "name": "spooled"}


def _can_unshare() -> str | None:
    if shutil.which("unshare") is None:
        return "unshare(1) is not installed"
    r = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt && echo ok"],
                       capture_output=True, text=True)
    return None if r.stdout.strip() == "ok" else f"no private mount namespace here: {r.stderr.strip()[:200]}"


def test_disk_full_holds_spans_in_memory_and_says_so_once(tmp_path: Path) -> None:
    reason = _can_unshare()
    if reason:
        pytest.skip(reason)
    mnt = tmp_path / "small"
    mnt.mkdir()
    script = (f"mount -t tmpfs -o size=8m tmpfs {mnt} && exec {sys.executable} -m tests.support.store_child "
              f"{mnt}/t.duckdb 9 --fill {mnt}")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run(["unshare", "-rm", "sh", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    produced = ended(r.stdout)
    final = [json.loads(x) for x in r.stdout.splitlines() if x.startswith('{"stored"')][0]
    assert len(produced) == 9
    assert {t: final["stored"].get(t, 0) for t in produced} == produced  # zero loss across the full disk
    held = [m for m in final["log"] if "holding spans in memory" in m]
    written = [m for m in final["log"] if "held in memory written to the" in m]
    spooling = [m for m in final["log"] if "spooling spans to" in m]
    # Said, and said once, not per batch. Where the spans waited depends on the machine's timing
    # (a failed insert can free enough for the small spool append; else they wait in memory), and
    # so does how many memory outages the batch timer makes: each is opened and closed by one
    # line, and the spool says so once per period (exporter.SpoolNotice).
    assert (held or spooling) and len(held) == len(written) and len(spooling) <= 1, final["log"]
    assert not any("could not load spool" in m for m in final["log"])
    assert not final["spool"]


def test_zero_code_roots_are_flushed_too(tmp_path: Path) -> None:
    """A root the episode processor marked (its trace reached a step) is flushed at its end."""
    from agentchaos_otel import attributes as A
    from agentchaos_otel.zero_code import add_episode_flushes

    db = tmp_path / "t.duckdb"
    tp = TracerProvider()
    tp.add_span_processor(BatchSpanProcessor(DuckDBSpanExporter(db), schedule_delay_millis=600_000))
    assert add_episode_flushes(tp) == 1  # what the configurator does after the SDK built its processors
    tracer = tp.get_tracer("app")
    with tracer.start_as_current_span("handle-task") as root:
        with tracer.start_as_current_span("POST"):
            pass
        root.set_attributes({A.EPISODE_ROOT: True, A.CONDITION: "plan-x"})
    assert sum(stored_per_trace(db).values()) == 2
    tp.shutdown()


def test_a_root_without_steps_is_no_episode_and_costs_no_write(tmp_path: Path) -> None:
    """A web request under zero-code: the episode processor never marks it, nothing is flushed."""
    from opentelemetry.sdk.trace.export import SpanExporter

    from agentchaos_otel.instrumentor import add_episode_processor
    from agentchaos_otel.plans import binding
    from agentchaos_otel.plans.binding import EpisodeState
    from agentchaos_otel.plans.plan import resolve_plan
    from agentchaos_otel.store.durability.episode_flush import add_episode_flush

    class Counting(SpanExporter):
        def __init__(self) -> None:
            self.calls = 0

        def export(self, spans: Any) -> Any:
            self.calls += 1
            from opentelemetry.sdk.trace.export import SpanExportResult

            return SpanExportResult.SUCCESS

    exporter = Counting()
    tp = TracerProvider()
    add_episode_processor(tp)
    batch = BatchSpanProcessor(exporter, schedule_delay_millis=600_000)
    tp.add_span_processor(batch)
    flush = add_episode_flush(tp, batch)
    binding.set_process_default(EpisodeState(task_id=None, plan=resolve_plan("llm_error_single"), seed=1))
    try:
        tracer = tp.get_tracer("web")
        for _ in range(5):
            with tracer.start_as_current_span("GET /health") as root:
                with tracer.start_as_current_span("SELECT"):
                    pass
            assert not root.attributes.get("agentchaos.episode.root")
        assert flush.flushes == 0 and exporter.calls == 0
        assert not binding._by_trace
    finally:
        binding.set_process_default(None)
        tp.shutdown()

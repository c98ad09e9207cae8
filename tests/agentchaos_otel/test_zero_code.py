"""Zero-code as the README writes it: ``opentelemetry-instrument python agent.py`` with only our variables.

The README's line is read from the README itself and run verbatim by a shell, in a subprocess
whose environment holds no ``OTEL_*`` or ``AGENTCHAOS_*`` variable beyond the line (only PATH,
HOME and the openai SDK's own ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` pointing at the
simulated server). The agent is an ordinary application: the reference agent's loop, one root
span per task and its tools traced as ``execute_tool`` spans, as an agent framework would; it
never calls ``episode()``. In this (CI) environment ``opentelemetry-distro`` and the GenAI
instrumentations of the dev extra are installed too, so the run also shows that our distro is
the one chosen and that four instrumentations of one call still count one call.
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from agentchaos_otel import attributes as A
from agentchaos_otel.instrumentor import AgentChaosInstrumentor
from agentchaos_otel.plans import binding
from agentchaos_otel.sim.reference_agent import ReferencePolicy
from agentchaos_otel.sim.server import SimulatedModelServer
from agentchaos_otel.zero_code import drop_missing_exporters
from agentchaos_otel.zero_code_launcher import select
from tests.support import REPO
from tests.support.apps import AGENT, source

README = REPO / "README.md"
TASKS = 2


def readme_line() -> str:
    """The one zero-code command line the README documents."""
    lines = [ln.strip() for ln in README.read_text().splitlines()
             if "opentelemetry-instrument python agent.py" in ln and ln.strip().startswith("AGENTCHAOS_")]
    assert len(lines) == 1, f"expected one zero-code line in the README, found {lines}"
    return lines[0]


@pytest.fixture(scope="module")
def server() -> Iterator[SimulatedModelServer]:
    with SimulatedModelServer(ReferencePolicy(), seed=2) as srv:
        yield srv


def _run(line: str, cwd: Path, server: SimulatedModelServer) -> subprocess.CompletedProcess[str]:
    (cwd / "agent.py").write_text(source(AGENT, TASKS), encoding="utf-8")
    env = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "HOME": os.environ.get("HOME", str(cwd)),
           "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-zero-code-test"}
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=180)


def _query(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_readme_line_verbatim(tmp_path: Path, server: SimulatedModelServer) -> None:
    line = readme_line()
    plan = re.search(r"AGENTCHAOS_PLAN=(\S+)", line).group(1)  # type: ignore[union-attr]
    db = tmp_path / re.search(r"AGENTCHAOS_DB=(\S+)", line).group(1)  # type: ignore[union-attr]
    result = _run(line, tmp_path, server)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.strip() == "", f"nothing to say on a good run: {result.stderr}"
    assert len(result.stdout.splitlines()) == TASKS, result.stdout
    assert db.exists()
    episodes = _query(db, "SELECT trace_id, condition, n_llm_calls, n_tool_calls FROM episodes")
    assert len(episodes) == TASKS, "one episode per application task (root span)"
    assert all(cond == plan and n_llm > 0 and n_tool > 0 for _, cond, n_llm, n_tool in episodes)
    agent_calls = sum(int(ln.split()[-1]) for ln in result.stdout.splitlines())
    assert _query(db, "SELECT count(*) FROM llm_calls") == [(agent_calls,)], "one row per call the agent made"
    for (trace_id, *_rest) in episodes:
        steps = [s for (s,) in _query(db, f"SELECT step FROM steps WHERE trace_id = '{trace_id}' ORDER BY step")]
        assert steps == list(range(len(steps))), "each episode numbers its own steps from 0"
    fired = _query(db, "SELECT trace_id, fault_type, changed FROM injected_faults")
    assert sorted(t for t, _, _ in fired) == sorted(t for t, *_ in episodes), "the planned fault fired once per episode"
    assert {(ft, ch) for _, ft, ch in fired} == {("error", True)}
    scopes = {s for (s,) in _query(db, "SELECT DISTINCT scope_name FROM spans")}
    assert "openinference.instrumentation.openai" in scopes, "the other instrumentations ran as well"


def test_bad_plan_is_one_line_and_the_application_runs(tmp_path: Path, server: SimulatedModelServer) -> None:
    line = readme_line().replace("AGENTCHAOS_PLAN=", "AGENTCHAOS_PLAN=llm_eror_single_")
    line = line.replace("opentelemetry-instrument", "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS=openai,anthropic "
                                                    "opentelemetry-instrument")
    db = tmp_path / re.search(r"AGENTCHAOS_DB=(\S+)", line).group(1)  # type: ignore[union-attr]
    result = _run(line, tmp_path, server)
    assert result.returncode == 0
    err = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(err) == 1 and "AGENTCHAOS_PLAN" in err[0] and "unknown fault" in err[0], result.stderr
    assert len(result.stdout.splitlines()) == TASKS, "the application still ran"
    assert _query(db, "SELECT count(*) FROM injected_faults") == [(0,)]
    ((first,),) = _query(db, "SELECT attributes FROM spans ORDER BY start_ns LIMIT 1")
    assert "unknown fault" in json.loads(first)[A.INJECTOR_REFUSED]
    assert _query(db, "SELECT count(*) FROM episodes") == [(TASKS,)]


def test_bad_seed_is_refused_once_and_recorded_on_the_first_span(monkeypatch: pytest.MonkeyPatch,
                                                                  caplog: pytest.LogCaptureFixture,
                                                                  memory_tracing: Any) -> None:
    provider, exporter = memory_tracing
    monkeypatch.setenv("AGENTCHAOS_PLAN", "llm_error_single")
    monkeypatch.setenv("AGENTCHAOS_SEED", "seven")
    inst = AgentChaosInstrumentor()
    with caplog.at_level(logging.ERROR):
        inst.instrument(tracer_provider=provider)
    try:
        assert binding.process_default() is not None and not binding.process_default().has_faults
        with provider.get_tracer("app").start_as_current_span("first"):
            pass
    finally:
        inst.uninstrument()
    (record,) = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert "AGENTCHAOS_SEED" in record.getMessage() and "\n" not in record.getMessage()
    (span,) = exporter.get_finished_spans()
    assert "seven" in span.attributes[A.INJECTOR_REFUSED]


def test_launcher_selects_our_distro_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    env: dict[str, str] = {"PATH": "/bin"}
    select(env)
    assert "OTEL_PYTHON_DISTRO" not in env, "a user of another distro who did not ask for us keeps theirs"
    env = {"AGENTCHAOS_PLAN": "llm_error_single"}
    select(env)
    assert env["OTEL_PYTHON_DISTRO"] == env["OTEL_PYTHON_CONFIGURATOR"] == "agentchaos"
    env = {"OTEL_TRACES_EXPORTER": "agentchaos_duckdb", "OTEL_PYTHON_DISTRO": "distro"}
    select(env)
    assert env["OTEL_PYTHON_DISTRO"] == "distro", "an explicit choice wins"


def test_exporters_that_are_not_installed_are_dropped_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    # An exporter that no installed package provides (zipkin), and an OTLP protocol the SDK has no
    # exporter for (http/json): each signal keeps what is installed and says so in one line.
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "agentchaos_duckdb,zipkin")
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "otlp")
    monkeypatch.setenv("OTEL_LOGS_EXPORTER", "none")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
    messages = drop_missing_exporters()
    assert os.environ["OTEL_TRACES_EXPORTER"] == "agentchaos_duckdb"
    assert os.environ["OTEL_METRICS_EXPORTER"] == "none"
    assert len(messages) == 2 and all("\n" not in m for m in messages)
    assert "zipkin" in messages[0] and "'http/json'" in messages[1]
    # opentelemetry-distro's defaults (OTLP over gRPC) are installed now: nothing is dropped.
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "agentchaos_duckdb,otlp")
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "otlp")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    assert drop_missing_exporters() == [] and os.environ["OTEL_TRACES_EXPORTER"] == "agentchaos_duckdb,otlp"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    assert drop_missing_exporters() == [] and os.environ["OTEL_METRICS_EXPORTER"] == "otlp"

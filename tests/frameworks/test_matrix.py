"""The framework matrix: five agent frameworks x four ways of running beside them, on a loopback model.

Each cell runs one framework's agent (``tests/support/framework_agents.py``) in a process of its
own (``tests/support/framework_case.py``) against the simulated model server (SIMULATED answers)
and holds the store to what really happened, counted independently of the code under test (the
server's request log, the tool's own run list, the task's own success check):

- ``llm_calls`` == requests the server received + the 429s injected before a request was sent;
- ``tool_calls`` == tool runs; steps unique and in start order per episode;
- the planned fault fired (``injected_faults``), every episode has a success and a condition;
- the rule diagnoser's verdict on each failed episode names the injected fault type and step.

A framework runs only where it is importable: ``tests/support/frameworks.py`` builds the
virtualenvs that hold them; elsewhere its cells are skipped saying so.
``AGENTCHAOS_FRAMEWORK`` (comma-separated names) restricts the run to those frameworks.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest

from agentchaos_otel.sim.server import SimulatedModelServer
from tests.support.framework_agents import FRAMEWORKS, IMPORT_NAME, ToolLoop
from tests.support.framework_case import TASKS, ZERO_CODE_PLAN

pytestmark = pytest.mark.frameworks

MODES = ("episode", "zero-code", "own-tracing", "early")


# The framework's own OTel instrumentor, which ``opentelemetry-instrument`` loads when installed.
# (The Agents SDK's traces reach OTel only through a trace processor; its agent here switches the
# SDK's tracing off unless asked, so under zero-code it writes no tool span.)
AUTO_INSTRUMENTOR = {"langgraph": "openinference.instrumentation.langchain"}


# Whose own tracing has a span per tool run. LiteLLM runs no tools (the agent's loop does) and its
# ``otel`` callback traces only model calls (and MCP tool calls, none here).
OWN_TOOL_SPANS = frozenset({"openai-agents", "pydantic-ai", "langgraph", "google-adk"})


def traces_tools(framework: str, mode: str) -> bool:
    """Whether anything in this cell writes tool spans: the framework's own tracing (ADK's is always
    on; under zero-code the launcher loads the framework's instrumentor when it is installed).
    Without it no span of a tool run exists, and ``tool_calls`` must be empty, not invented."""
    if framework not in OWN_TOOL_SPANS:
        return False
    if mode == "own-tracing" or framework == "google-adk":
        return True
    module = AUTO_INSTRUMENTOR.get(framework)
    return mode == "zero-code" and module is not None and importlib.util.find_spec(module) is not None
ROOT = Path(__file__).resolve().parents[2]


def _importable(framework: str) -> bool:
    try:
        return importlib.util.find_spec(IMPORT_NAME[framework]) is not None
    except ModuleNotFoundError:
        return False


def _selected(framework: str) -> str | None:
    """Why ``framework`` is skipped here, or None."""
    only = os.environ.get("AGENTCHAOS_FRAMEWORK")
    if only and framework not in only.split(","):
        return f"AGENTCHAOS_FRAMEWORK={only}"
    if not _importable(framework):
        return (f"{framework} is not importable in this environment; build its venv with "
                f"python tests/support/frameworks.py {framework}")
    return None


def _run_case(framework: str, mode: str, db: Path, base_url: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTCHAOS_"))}
    env.update({"LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": str(ROOT)})
    cmd = [sys.executable, "-m", "tests.support.framework_case", framework, mode, str(db), base_url]
    if mode == "zero-code":
        env.update({"OTEL_SERVICE_NAME": "matrix", "OTEL_TRACES_EXPORTER": "agentchaos_duckdb",
                    "AGENTCHAOS_DB": str(db), "AGENTCHAOS_PLAN": ZERO_CODE_PLAN, "AGENTCHAOS_SEED": "1"})
        cmd = [str(Path(sys.executable).parent / "opentelemetry-instrument"), *cmd]
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(db), read_only=True) as con:  # plain SQL over the views
        return con.execute(sql).fetchall()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_framework_matrix(framework: str, mode: str, tmp_path: Path) -> None:
    reason = _selected(framework)
    if reason:
        pytest.skip(reason)
    db = tmp_path / "matrix.duckdb"
    with SimulatedModelServer(ToolLoop(), seed=0) as server:
        out = _run_case(framework, mode, db, server.base_url)
        requests = server.request_count
    plans = {task: (ZERO_CODE_PLAN if mode == "zero-code" else plan) for task, plan in TASKS}
    injected_429s = sum(1 for p in plans.values() if p == "http_429")

    episodes = _rows(db, "SELECT trace_id, condition, success, n_llm_calls, n_tool_calls, n_faults "
                         "FROM episodes ORDER BY start_ns")
    assert len(episodes) == len(TASKS), episodes
    assert all(cond is not None and success is not None for _, cond, success, *_ in episodes), episodes
    assert [success for _, _, success, *_ in episodes] == [t["success"] for t in out["tasks"]]
    assert [cond for _, cond, *_ in episodes] == [plans[t["task"]] for t in out["tasks"]]

    (n_llm,) = _rows(db, "SELECT count(*) FROM llm_calls")[0]
    assert n_llm == requests + injected_429s, "one llm_calls row per HTTP attempt, injected 429s included"
    (n_tools,) = _rows(db, "SELECT count(*) FROM tool_calls")[0]
    ran = sum(t["tools"] for t in out["tasks"])
    assert ran > 0 and n_tools == (ran if traces_tools(framework, mode) else 0), "one tool row per tool run"
    for trace_id, *_ in episodes:
        steps = _rows(db, f"SELECT step, start_ns FROM steps WHERE trace_id = '{trace_id}' ORDER BY step")
        assert [s for s, _ in steps] == list(range(len(steps))), "steps unique and dense"
        assert [t for _, t in steps] == sorted(t for _, t in steps), "steps in start order"
    faults = _rows(db, "SELECT e.condition, f.fault_type, f.step, f.changed FROM injected_faults f "
                       "JOIN episodes e USING (trace_id) ORDER BY e.start_ns")
    fired = {cond for cond, *_ in faults}
    assert set(plans.values()) <= fired, f"every planned fault fired: {faults}"

    from agentchaos_otel.store.read.episodes import load_episodes
    from diagnosers.rules import RuleDiagnoser

    diagnoser = RuleDiagnoser()
    truth = {tid: (ftype, step) for tid, ftype, step in
             _rows(db, "SELECT trace_id, fault_type, step FROM injected_faults WHERE changed")}
    for ep in load_episodes(db):
        if ep.success is False:
            verdict = diagnoser.diagnose(ep.blind())
            assert (verdict.fault_type, verdict.step) == truth[ep.trace_id], (framework, mode, verdict)

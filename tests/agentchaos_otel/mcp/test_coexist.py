"""One step per MCP tool call, however the process is traced and whatever else instruments MCP.

An agent process (``tests/support/mcp_agent.py``, plain SDK code) is traced through ``configure()``,
``AgentChaosInstrumentor().instrument()`` or zero-code (``opentelemetry-instrument``), beside the SDK's
own spans (2.x ``MCP send ...``), OpenInference's MCP instrumentation and OpenLLMetry's (1.x only: it
cannot instrument 2.x), in either order; the store it wrote is then read through the views.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.support.mcp_harness import MAJOR

pytestmark = pytest.mark.coexist

SCRIPT = Path(__file__).resolve().parents[2] / "support" / "mcp_agent.py"
TOOLS = ["get_quote", "place_order", "echo", "get_quote"]


def _run(tmp_path: Path, *, setup: str = "configure", others: str = "agentchaos", transport: str = "stdio",
         url: str | None = None, plan: str | None = None, zero_code: bool = False) -> tuple[Path, list[Any]]:
    db = tmp_path / "agent.duckdb"
    env = dict(os.environ, AGENTCHAOS_TEST_SETUP=setup, AGENTCHAOS_TEST_OTHERS=others, AGENTCHAOS_TEST_DB=str(db),
               AGENTCHAOS_TEST_TRANSPORT=transport, AGENTCHAOS_TEST_URL=url or "", AGENTCHAOS_TEST_PLAN=plan or "",
               OTEL_SERVICE_NAME="mcp-agent")
    command = [sys.executable, str(SCRIPT)]
    if zero_code:
        env.update(OTEL_TRACES_EXPORTER="agentchaos_duckdb", OTEL_METRICS_EXPORTER="none", OTEL_LOGS_EXPORTER="none",
                   OTEL_PYTHON_DISABLED_INSTRUMENTATIONS="openai,openai_v2,anthropic",
                   AGENTCHAOS_DB=str(db), AGENTCHAOS_PLAN=plan or "none", AGENTCHAOS_SEED="3")
        command = [str(Path(sys.executable).with_name("opentelemetry-instrument")), *command]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    return db, json.loads(done.stdout.strip().splitlines()[-1])["shown"]


def _q(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _one_step_per_call(db: Path) -> None:
    steps = _q(db, "select step, kind, name, json_extract_string(attributes, '$.\"mcp.method.name\"') "
                   "from steps order by step")
    assert [(s[0], s[1], s[2], s[3]) for s in steps] == [
        (i, "tool", f"tools/call {t}", "tools/call") for i, t in enumerate(TOOLS)]
    assert _q(db, "select tool_name from tool_calls order by step") == [(t,) for t in TOOLS]
    assert _q(db, "select n_tool_calls from episodes") == [(len(TOOLS),)], "the agent's root span is the episode"


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_configure_traces_an_mcp_agent(transport: str, tmp_path: Path, http: tuple[str, Path]) -> None:
    db, shown = _run(tmp_path, transport=transport, url=http[0], plan="once_timeout")
    _one_step_per_call(db)
    [(fault, target, step)] = _q(db, "select fault_type, target, step from injected_faults")
    assert (fault, target) == ("timeout", "tool_result") and shown[step]["isError"] is True
    names = {n for (n,) in _q(db, "select name from spans")}
    if MAJOR == 2:  # the SDK's own client spans are stored beside ours, and are no steps
        assert {f"MCP send tools/call {t}" for t in TOOLS} <= names


@pytest.mark.skipif(MAJOR != 2, reason="mcp.Client on a server object is mcp 2.x")
def test_a_server_in_the_same_process_adds_no_steps(tmp_path: Path) -> None:
    db, shown = _run(tmp_path, transport="inprocess", plan="once_key_rename")
    _one_step_per_call(db)
    servers = _q(db, "select name from spans where kind = 'SERVER' and name like 'tools/call %' order by start_ns")
    assert servers == [(f"tools/call {t}",) for t in TOOLS], "the server's own spans are stored, and are no steps"
    assert _q(db, "select fault_type, target from injected_faults") == [("key_rename", "tool_result")]


@pytest.mark.parametrize("order", ["openinference,agentchaos", "agentchaos,openinference"])
def test_beside_openinference(order: str, tmp_path: Path) -> None:
    db, shown = _run(tmp_path, others=order)
    _one_step_per_call(db)
    assert all(not s["isError"] for s in shown)


@pytest.mark.skipif(MAJOR != 1, reason="opentelemetry-instrumentation-mcp instruments mcp 1.x only")
@pytest.mark.parametrize("order", ["openllmetry,agentchaos", "agentchaos,openllmetry"])
def test_beside_openllmetry(order: str, tmp_path: Path) -> None:
    db, _ = _run(tmp_path, others=order, plan="once_rate_limit")
    _one_step_per_call(db)
    names = {n for (n,) in _q(db, "select name from spans")}
    assert {f"{t}.tool" for t in TOOLS} <= names, "its spans are stored, and are no steps"
    assert _q(db, "select fault_type, span_name like 'tools/call %' from injected_faults") == [("rate_limit", True)]


def test_the_instrumentor_traces_an_mcp_agent(tmp_path: Path) -> None:
    db, _ = _run(tmp_path, setup="instrumentor", plan="once_empty")
    _one_step_per_call(db)
    assert _q(db, "select fault_type from injected_faults") == [("empty",)]


def test_zero_code_traces_an_mcp_agent(tmp_path: Path) -> None:
    db, shown = _run(tmp_path, setup="none", others="", plan="once_truncated", zero_code=True)
    _one_step_per_call(db)
    [(fault, step)] = _q(db, "select fault_type, step from injected_faults")
    assert fault == "truncated" and step in range(len(TOOLS))

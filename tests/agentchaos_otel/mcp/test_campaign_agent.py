"""``agentchaos campaign run --agent mcp``: the reference agent with its tools behind an MCP server.

Run through the command line (SIMULATED model), beside ``--agent reference`` on the same tasks,
conditions and seed: the tools are the same functions, so the tool faults must land on the same
steps with the same kinds, whether the tools come over MCP or through ``wrap_tools``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest

from agentchaos_otel.agents.mcp.server import annotations
from agentchaos_otel.mcp.idempotency import idempotent_from_annotations
from agentchaos_otel.sim.reference_tasks import REFERENCE_TOOLS

CONDITIONS = "none,once_timeout,once_wrong_value,bursty"


def _campaign(agent: str, db: Path, *extra: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "agentchaos_otel.cli", "campaign", "run", "--agent", agent,
                           "--tasks", "3", "--conditions", CONDITIONS, "--seeds", "0", "--workers", "2",
                           "--db", str(db), "--no-progress", *extra],
                          capture_output=True, text=True, timeout=600, cwd=db.parent)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _q(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_the_reference_tools_describe_themselves() -> None:
    repeatable = {name for name in REFERENCE_TOOLS if idempotent_from_annotations(annotations(name))}
    assert repeatable == set(REFERENCE_TOOLS) - {"book_flight"}


@pytest.mark.slow
def test_a_campaign_of_the_mcp_agent(tmp_path: Path) -> None:
    over_mcp, wrapped = tmp_path / "mcp.duckdb", tmp_path / "reference.duckdb"
    counts = _campaign("mcp", over_mcp, "--guard", "idempotency")
    assert counts["simulated"] is True and counts["crashed"] == 0 and counts["ran"] == 3 * 4 * 2
    _campaign("reference", wrapped)
    faults = ("select f.task_id, e.condition, f.step, f.fault_type from injected_faults f "
              "join episodes e using (trace_id) where e.condition not like '%+guarded' order by 1, 2, 3")
    got = _q(over_mcp, faults)
    assert got and got == _q(wrapped, faults), "the same faults on the same steps as through wrap_tools"
    assert {s for (s,) in _q(over_mcp, "select distinct span_name from injected_faults")} <= {
        f"tools/call {name}" for name in REFERENCE_TOOLS}
    assert _q(over_mcp, "select count(*) from tool_calls where json_extract_string(attributes, "
                        "'$.\"mcp.method.name\"') is null") == [(0,)], "every tool step is an MCP call"
    report = subprocess.run([sys.executable, "-m", "agentchaos_otel.cli", "report", str(over_mcp), "--json"],
                            capture_output=True, text=True, timeout=300)
    assert report.returncode == 0, report.stderr[-2000:]
    measures = json.loads(report.stdout)
    assert measures["simulated"] is True
    assert set(measures["conditions"]) >= set(CONDITIONS.split(","))

"""``agentchaos demo`` end to end: a trace file whose views are populated, and CLI error handling."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb

from agentchaos_otel.cli.demo import DEMO_CONDITIONS

CLI = [sys.executable, "-m", "agentchaos_otel.cli"]


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTCHAOS_"))}
    env["COLUMNS"] = "200"
    return subprocess.run([*CLI, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_demo_populates_every_view(tmp_path: Path) -> None:
    n = len(DEMO_CONDITIONS)
    result = _run("demo", "--episodes", str(n), "--workers", "8", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "SIMULATED" in result.stdout
    con = duckdb.connect(str(tmp_path / "traces.duckdb"), read_only=True)
    counts = {v: con.execute(f"select count(*) from {v}").fetchone()[0]
              for v in ("llm_calls", "tool_calls", "steps", "episodes", "injected_faults")}
    assert counts["episodes"] == n
    assert counts["steps"] == counts["llm_calls"] + counts["tool_calls"] and counts["tool_calls"] > 0
    assert counts["injected_faults"] > 0
    conditions = {r[0] for r in con.execute("select distinct condition from episodes").fetchall()}
    assert conditions == set(DEMO_CONDITIONS)
    assert con.execute("select count(*) from episodes where success is null").fetchone() == (0,)
    assert con.execute("select bool_and(simulated) from episodes").fetchone() == (True,)
    types = {r[0] for r in con.execute("select distinct fault_type from injected_faults").fetchall()}
    assert {"error", "timeout", "truncate", "rate_limit", "stream_cut"} <= types
    # every step numbering is 0..n-1 within its episode
    gaps = con.execute("""select count(*) from (select trace_id, count(*) n, max(step) m from steps
                          group by trace_id) where m != n - 1""").fetchone()[0]
    assert gaps == 0
    con.close()
    summary = _run("traces", "summary", "traces.duckdb", "--json", cwd=tmp_path)
    assert summary.returncode == 0, summary.stderr
    assert json.loads(summary.stdout)["episodes"] == n


def test_cli_bad_input_is_one_line_and_nonzero(tmp_path: Path) -> None:
    (tmp_path / "junk.duckdb").write_bytes(b"this is not a database" * 100)
    for args in (["faults", "show", "llm_eror_single"], ["traces", "summary", "missing.duckdb"],
                 ["traces", "summary", "junk.duckdb"], ["demo", "--episodes", "0"], ["nonsense"],
                 ["demo", "--base-url", "http://127.0.0.1:9/v1"]):
        result = _run(*args, cwd=tmp_path)
        assert result.returncode != 0, args
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and "error" in lines[0], (args, result.stderr)
        assert "Traceback" not in result.stderr


def test_faults_list_json_has_the_catalog(tmp_path: Path) -> None:
    result = _run("faults", "list", "--json", cwd=tmp_path)
    rows = json.loads(result.stdout)
    assert {"name", "type", "target", "strategy", "description"} <= set(rows[0])
    names = [r["name"] for r in rows]
    assert len([r for r in rows if r["family"] in ("agentchaos", "compound", "positional")]) == 65
    assert "http_429" in names and "stream_cut" in names

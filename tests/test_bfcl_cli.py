"""``agentchaos bfcl``: task listing, simulated runs into a trace store, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchmarks.bfcl import UNAVAILABLE_REASON, bfcl_available
from benchmarks.bfcl.cli import app

pytestmark = pytest.mark.skipif(not bfcl_available(), reason=UNAVAILABLE_REASON)

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]


def test_tasks_lists_all_200() -> None:
    res = runner.invoke(app, ["tasks", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output)
    assert len(rows) == 200 and rows[0]["id"] == "multi_turn_base_0"
    res = runner.invoke(app, ["tasks", "--tasks", "3-4"])
    assert res.exit_code == 0 and res.output.strip().endswith("2 tasks")


def test_run_on_the_simulated_model_prints_success_by_condition() -> None:
    res = runner.invoke(app, ["run", "--tasks", "1,4", "--perfect", "--conditions", "none,persistent",
                              "--seeds", "0", "--json", "--workers", "2"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["simulated"] is True
    assert out["summary"]["none"]["success_rate"] == 1.0
    assert {e["task_id"] for e in out["episodes"]} == {"multi_turn_base_1", "multi_turn_base_4"}
    assert len(out["episodes"]) == 4


@pytest.mark.parametrize(("args", "needle"), [
    (["run", "--conditions", "chaotic"], "unknown condition"),
    (["run", "--seeds", "one"], "seeds must be"),
    (["run", "--base-url", "http://127.0.0.1:9/v1"], "--model is required"),
    (["run", "--tasks", "multi_turn_base_999"], "unknown BFCL task"),
    (["tasks", "--tasks", "nope"], "unknown BFCL task"),
    (["run", "--db", "/no/such/dir/t.duckdb"], "directory does not exist"),
])
def test_bad_arguments_give_one_line_errors(args: list[str], needle: str) -> None:
    res = runner.invoke(app, args)
    assert res.exit_code == 1
    assert needle in res.output and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_run_writes_episodes_to_a_duckdb_store(tmp_path: Path) -> None:
    """In a child process: ``configure`` installs a process-wide tracer provider."""
    db = tmp_path / "bfcl.duckdb"
    code = ("import sys; from benchmarks.bfcl.cli import app; "
            "sys.argv=['bfcl','run','--tasks','1','--perfect','--conditions','none,independent',"
            f"'--seeds','3','--db',{str(db)!r}]; app()")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "(simulated model)" in proc.stdout
    from agentchaos_otel.store.episodes import load_episodes

    episodes = load_episodes(db, blind=False)
    assert sorted((e.task_id, e.condition, e.seed) for e in episodes) == [
        ("multi_turn_base_1", "independent", 3), ("multi_turn_base_1", "none", 3)]
    assert next(e for e in episodes if e.condition == "none").success is True
    assert all(e.success is not None for e in episodes)
    for e in episodes:
        assert e.llm_steps and e.tool_steps
        assert [s.step for s in e.steps] == list(range(len(e.steps)))

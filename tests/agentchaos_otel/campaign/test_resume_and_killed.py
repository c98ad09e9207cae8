"""Resumes count every finished episode once, and killed episodes do not inflate the report.

A campaign whose trace file was locked leaves finished episodes in the spool; a rerun must skip
them (the spool is loaded by the rerun's first write, so running them again would count them
twice). An episode killed mid-run leaves child spans without a root that ended: the report counts
it as crashed (or leaves it out and says so), never as an ordinary episode of its condition.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
from typer.testing import CliRunner

from agentchaos_otel.cli.main import app
from agentchaos_otel.store.durability.spool import Spool

runner = CliRunner()
ARGS = ["campaign", "run", "--agent", "reference", "--tasks", "3", "--conditions", "none,llm_error_single",
        "--seeds", "0", "--workers", "2", "--no-progress", "--no-logprobs"]


def _counts(result: object) -> dict[str, int]:
    return json.loads(result.stdout.strip().splitlines()[-1])  # type: ignore[attr-defined]


def _move_spans_to_the_spool(db: Path) -> int:
    """What a lock from mid-run to the end leaves: the episodes' rows in the spool, not the database."""
    con = duckdb.connect(str(db))
    cur = con.execute("SELECT * FROM spans")
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
    con.execute("DELETE FROM spans")
    con.close()
    Spool(db).append(rows)
    return len(rows)


def test_a_rerun_skips_episodes_whose_spans_wait_in_the_spool(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    first = runner.invoke(app, [*ARGS, "--db", str(db)])
    assert first.exit_code == 0, first.output
    assert _counts(first)["ran"] == 6
    assert _move_spans_to_the_spool(db) > 0

    again = runner.invoke(app, [*ARGS, "--db", str(db)])
    assert again.exit_code == 0, again.output
    counts = _counts(again)
    assert counts["skipped_finished"] == 6 and counts["ran"] == 0

    report = runner.invoke(app, ["report", str(db), "--json", "--resamples", "20"])
    assert report.exit_code == 0, report.output
    assert json.loads(report.stdout)["episodes"] == 6


def test_an_episode_killed_before_its_root_ended_is_left_out_and_said(tmp_path: Path) -> None:
    db = tmp_path / "t.duckdb"
    first = runner.invoke(app, [*ARGS, "--db", str(db)])
    assert first.exit_code == 0, first.output
    killed = subprocess.run([sys.executable, "-m", "tests.support.killed_episode", str(db)],
                            capture_output=True, text=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM episodes WHERE span_id IS NULL").fetchone() == (1,)
    con.close()

    report = runner.invoke(app, ["report", str(db), "--json", "--resamples", "20"])
    assert report.exit_code == 0, report.output
    data = json.loads(report.stdout)
    assert data["episodes"] == 6 and data["conditions"]["none"]["episodes"] == 3
    assert data["episodes_without_root"] == 1
    assert not any("mixes simulated" in w for w in data["warnings"])
    assert any("1 trace" in w and "no ended episode root" in w for w in data["warnings"])

    table = runner.invoke(app, ["report", str(db), "--resamples", "20"])
    assert table.exit_code == 0 and "no ended episode root" in table.stdout

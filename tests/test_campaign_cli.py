from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from agentchaos_otel.campaign.cli import app, parse_conditions, parse_seeds, report_app
from agentchaos_otel.campaign.runner import campaign_runs
from benchmarks.bfcl import bfcl_available

runner = CliRunner()


def mounted() -> typer.Typer:
    """The campaign and report apps as the ``agentchaos`` command mounts them."""
    parent = typer.Typer()
    parent.add_typer(app, name="campaign")
    parent.add_typer(report_app, name="report")
    return parent


def test_reference_campaign_then_report_end_to_end(tmp_path: Path) -> None:
    db = tmp_path / "traces.duckdb"
    args = ["campaign", "run", "--agent", "reference", "--tasks", "3", "--conditions",
            "none,llm_error_single",
            "--seeds", "0", "--workers", "2", "--db", str(db), "--no-progress"]
    first = runner.invoke(mounted(), args)
    assert first.exit_code == 0, first.output
    counts = json.loads(first.stdout.strip().splitlines()[-1])
    assert counts["simulated"] is True and counts["ran"] == 6 and counts["crashed"] == 0

    again = runner.invoke(mounted(), args)
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout.strip().splitlines()[-1])["skipped_finished"] == 6
    runs = campaign_runs(db)
    assert len(runs) == 2 and all(r["simulated"] for r in runs)

    rep = runner.invoke(mounted(), ["report", str(db), "--json", "--resamples", "50", "--html",
                                    str(tmp_path / "h")])
    assert rep.exit_code == 0, rep.output
    data = json.loads(rep.stdout)
    assert data["label"] == "SIMULATED" and data["episodes"] == 6
    assert set(data["conditions"]) == {"none", "llm_error_single"}
    assert data["paired"]["llm_error_single"]["pairs"] == 3
    assert data["conditions"]["llm_error_single"]["triggered"] >= 1
    assert "SIMULATED" in (tmp_path / "h" / "index.html").read_text()

    table = runner.invoke(mounted(), ["report", str(db), "--resamples", "50"])
    assert table.exit_code == 0 and "SIMULATED" in table.stdout


@pytest.mark.parametrize("args, message", [
    (["campaign", "run", "--agent", "nope"], "unknown agent 'nope'"),
    (["campaign", "run", "--seeds", "x"], "bad seed 'x'"),
    (["campaign", "run", "--seeds", "3-1"], "bad seed range"),
    (["campaign", "run", "--conditions", "none,llm_eror_single"], "did you mean llm_error_single"),
    (["campaign", "run", "--conditions", ","], "no conditions given"),
    (["campaign", "run", "--tasks", "zero"], "--tasks must be a positive number"),
    (["campaign", "run", "--base-url", "http://127.0.0.1:9/v1", "--tasks", "1"], "--model is required"),
    (["campaign", "run", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--tasks", "1",
      "--api-key-env", "AGENTCHAOS_TEST_UNSET_KEY"], "AGENTCHAOS_TEST_UNSET_KEY is not set"),
    (["campaign", "sanity", "--conditions", "bogus_fault"], "unknown fault"),
    (["campaign", "run", "--agent", "bfcl", "--conditions", "none,llm_error_single"], "tool conditions only"),
    (["campaign", "runs", "/nonexistent/traces.duckdb"], "no such file"),
    (["report", "/nonexistent/traces.duckdb"], "no such trace file"),
])
def test_bad_arguments_give_one_line_and_nonzero_exit(args: list[str], message: str, tmp_path: Path) -> None:
    if args[:2] == ["campaign", "run"]:
        args = [*args, "--db", str(tmp_path / "t.duckdb"), "--no-progress"]
    result = runner.invoke(mounted(), args)
    assert result.exit_code != 0
    assert message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.output
    assert not (tmp_path / "t.duckdb").exists()  # nothing was started


def test_report_on_foreign_and_empty_files(tmp_path: Path) -> None:
    junk = tmp_path / "junk.duckdb"
    junk.write_text("hello" * 100)
    result = runner.invoke(mounted(), ["report", str(junk)])
    assert result.exit_code == 1 and len(result.stderr.strip().splitlines()) == 1
    import duckdb

    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    result = runner.invoke(mounted(), ["report", str(empty)])
    assert result.exit_code == 1 and "error:" in result.stderr


def test_sanity_command_prints_each_check() -> None:
    result = runner.invoke(app, ["sanity", "--conditions", "none,bursty,llm_error_single"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert lines and all(line.startswith("PASS") for line in lines)
    assert any("rate 1 faults every step" in line for line in lines)


def test_seed_and_condition_parsing() -> None:
    assert parse_seeds("0,1") == [0, 1]
    assert parse_seeds("0-3,2") == [0, 1, 2, 3]
    conds = parse_conditions("catalog")
    assert conds[0] == "none" and len(conds) == 66
    assert parse_conditions("none, bursty,none") == ["none", "bursty"]


@pytest.mark.skipif(not bfcl_available(), reason="bfcl-eval is not installed")
def test_bfcl_campaign_records_its_episodes_once(tmp_path: Path) -> None:
    db = tmp_path / "bfcl.duckdb"
    args = ["campaign", "run", "--agent", "bfcl", "--tasks", "1", "--conditions", "none,bursty", "--seeds",
            "0",
            "--workers", "2", "--db", str(db), "--no-progress"]
    result = runner.invoke(mounted(), args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout.strip().splitlines()[-1])["ran"] == 2
    from agentchaos_otel.store.episodes import load_episodes

    eps = load_episodes(str(db), blind=False)
    assert sorted((e.task_id, e.condition) for e in eps) == [("multi_turn_base_0", "bursty"),
                                                             ("multi_turn_base_0", "none")]
    again = runner.invoke(mounted(), args)
    assert json.loads(again.stdout.strip().splitlines()[-1])["skipped_finished"] == 2

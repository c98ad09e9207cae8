from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from agentchaos_otel import attributes as A
from agentchaos_otel.agents.bfcl import bfcl_available
from agentchaos_otel.campaign.runner import campaign_runs
from agentchaos_otel.cli.campaign import app, parse_conditions, parse_seeds, parse_subtasks
from agentchaos_otel.faults.catalog import agentchaos_names
from agentchaos_otel.plans.schedule import ONCE_CONDITIONS

runner = CliRunner()


def mounted() -> typer.Typer:
    """The ``agentchaos`` command, which mounts the campaign app and the report command."""
    from agentchaos_otel.cli.main import app as agentchaos

    return agentchaos


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
    (["campaign", "run", "--conditions", "none,once_timout"], "did you mean"),
    (["campaign", "run", "--subtasks", "6-2"], "--subtasks must be MIN-MAX"),
    (["campaign", "run", "--subtasks", "x"], "--subtasks must be MIN-MAX"),
    (["campaign", "run", "--subtasks", "1-99", "--tasks", "1"], "max_subtasks"),
    (["campaign", "run", "--agent", "bfcl", "--subtasks", "2-3"], "--subtasks applies to --agent reference"),
    (["campaign", "run", "--perfect", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"],
     "--perfect applies to the simulated model only"),
    (["campaign", "runs", "/nonexistent/traces.duckdb"], "no such file"),
    (["report", "/nonexistent/traces.duckdb"], "no such file"),
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
    assert parse_conditions("once") == list(ONCE_CONDITIONS)
    # Aliases mix with names; none comes first with the catalog and nothing is listed twice.
    mixed = parse_conditions("once_timeout,catalog,once,llm_error_single")
    assert mixed[0] == "none" and len(mixed) == 66 + 7 and len(set(mixed)) == len(mixed)
    assert set(ONCE_CONDITIONS) <= set(mixed)
    explicit = parse_conditions(",".join(["none", *agentchaos_names(), *ONCE_CONDITIONS]))
    assert sorted(explicit) == sorted(mixed)
    assert parse_subtasks("12-18") == (12, 18) and parse_subtasks("4") == (4, 4)


def _episodes(db: Path) -> list[Any]:
    from agentchaos_otel.store.read.episodes import load_episodes

    return sorted(load_episodes(str(db), blind=False), key=lambda e: (e.condition, e.task_id))


def _has_entropy(ep: Any) -> bool:
    return any(s.get(A.LOGPROBS_ENTROPY_MEAN) is not None for s in ep.llm_steps)


def test_long_reference_episodes_with_logprobs_and_a_single_tool_fault(tmp_path: Path) -> None:
    db = tmp_path / "long.duckdb"
    args = ["campaign", "run", "--agent", "reference", "--tasks", "2", "--subtasks", "12-18", "--conditions",
            "none,once_timeout", "--seeds", "1", "--workers", "2", "--db", str(db), "--no-progress"]
    result = runner.invoke(mounted(), args)
    assert result.exit_code == 0, result.output
    eps = _episodes(db)
    assert [e.condition for e in eps] == ["none", "none", "once_timeout", "once_timeout"]
    clean = [e for e in eps if e.condition == "none"]
    # One model call per sub-query at least, plus the answer: long episodes, not the default 1-6.
    assert all(len(e.llm_steps) >= 13 and len(e.tool_steps) >= 12 for e in clean)
    assert all(_has_entropy(e) for e in eps)  # --logprobs is on by default
    for e in eps:
        fired = [(s.get(A.TOOL_CALL_INDEX), s.get(A.FAULT_TYPE)) for s in e.tool_steps if s.get(A.FAULT_INJECTED)]
        if e.condition == "once_timeout":
            assert len(fired) == 1 and fired[0][1] == "timeout" and 0 <= fired[0][0] <= 3
        else:
            assert fired == []
    assert {e.task_id for e in eps} == {"ref-1-0000-k12-18", "ref-1-0001-k12-18"}
    args_recorded = campaign_runs(db)[-1]["args"]["extra"]
    assert args_recorded["subtasks"] == "12-18" and args_recorded["logprobs"] is True
    # The default range into the same file: other tasks, so nothing is skipped as finished.
    short = runner.invoke(mounted(), [*args[:6], "--conditions", "none", *args[10:]])
    assert short.exit_code == 0, short.output
    assert json.loads(short.stdout.strip().splitlines()[-1])["skipped_finished"] == 0
    added = [e for e in _episodes(db) if e.task_id in ("ref-1-0000", "ref-1-0001")]
    assert len(added) == 2 and all(len(e.llm_steps) < len(clean[0].llm_steps) for e in added)


def test_no_logprobs_leaves_the_entropy_features_out(tmp_path: Path) -> None:
    db = tmp_path / "nolp.duckdb"
    result = runner.invoke(mounted(), ["campaign", "run", "--tasks", "2", "--conditions", "none", "--no-logprobs",
                                       "--db", str(db), "--no-progress", "--perfect"])
    assert result.exit_code == 0, result.output
    eps = _episodes(db)
    assert len(eps) == 2 and not any(_has_entropy(e) for e in eps)
    assert all(e.success for e in eps)  # --perfect: no planned mistakes, no faults


def test_step_cap_limits_the_reference_agent(tmp_path: Path) -> None:
    db = tmp_path / "cap.duckdb"
    result = runner.invoke(mounted(), ["campaign", "run", "--tasks", "1", "--subtasks", "6", "--conditions",
                                       "none", "--step-cap", "3", "--db", str(db), "--no-progress"])
    assert result.exit_code == 0, result.output
    [ep] = _episodes(db)
    assert len(ep.llm_steps) == 3 and ep.success is False


@pytest.mark.skipif(not bfcl_available(), reason="bfcl-eval is not installed")
def test_bfcl_campaign_with_catalog_faults_labels_episodes_by_plan(tmp_path: Path) -> None:
    """2 tasks x (clean + 2 catalog faults): each LLM-plan episode is stored under its plan's
    name, so the clean baseline holds only clean episodes and resuming skips all of them."""
    db = tmp_path / "bfcl_llm.duckdb"
    args = ["campaign", "run", "--agent", "bfcl", "--tasks", "2", "--conditions",
            "none,llm_error_single,llm_empty_single", "--perfect", "--step-cap", "8", "--workers", "2",
            "--db", str(db), "--no-progress"]
    result = runner.invoke(mounted(), args)
    assert result.exit_code == 0, result.output
    counts = json.loads(result.stdout.strip().splitlines()[-1])
    assert counts["ran"] == 6 and counts["crashed"] == 0
    eps = _episodes(db)
    assert [(e.condition, e.task_id) for e in eps] == [
        (c, f"multi_turn_base_{i}") for c in ("llm_empty_single", "llm_error_single", "none") for i in (0, 1)]
    for e in eps:
        llm_faults = [s.get(A.FAULT_TYPE) for s in e.llm_steps if s.get(A.FAULT_INJECTED)]
        assert len(llm_faults) == (0 if e.condition == "none" else 1), (e.condition, llm_faults)
        assert not any(s.get(A.FAULT_INJECTED) for s in e.tool_steps)
        assert _has_entropy(e)
        assert [s.step for s in e.steps] == list(range(len(e.steps)))
    assert all(e.success for e in eps if e.condition == "none")  # --perfect
    again = runner.invoke(mounted(), args)
    assert json.loads(again.stdout.strip().splitlines()[-1])["skipped_finished"] == 6


@pytest.mark.skipif(not bfcl_available(), reason="bfcl-eval is not installed")
def test_bfcl_campaign_records_its_episodes_once(tmp_path: Path) -> None:
    db = tmp_path / "bfcl.duckdb"
    args = ["campaign", "run", "--agent", "bfcl", "--tasks", "1", "--conditions", "none,bursty", "--seeds",
            "0",
            "--workers", "2", "--db", str(db), "--no-progress"]
    result = runner.invoke(mounted(), args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout.strip().splitlines()[-1])["ran"] == 2
    from agentchaos_otel.store.read.episodes import load_episodes

    eps = load_episodes(str(db), blind=False)
    assert sorted((e.task_id, e.condition) for e in eps) == [("multi_turn_base_0", "bursty"),
                                                             ("multi_turn_base_0", "none")]
    again = runner.invoke(mounted(), args)
    assert json.loads(again.stdout.strip().splitlines()[-1])["skipped_finished"] == 2

"""Diagnosis of traces written by the real pipeline: `agentchaos demo` (reference agent, fault-injecting
transport, tool-result injector, DuckDB exporter) against the bundled simulated model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from diagnosers.cli import app
from tests.diagnosers.test_store import _strip_ground_truth

runner = CliRunner()


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cwd = tmp_path_factory.mktemp("demo")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "AGENTCHAOS_"))}
    cmd = [sys.executable, "-m", "agentchaos_otel.cli", "demo", "--episodes", "52", "--workers", "8",
           "--seed", "1"]
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return cwd / "traces.duckdb"


def _diagnose(path: Path, *args: str) -> list[dict]:
    result = runner.invoke(app, [str(path), "--json", "--no-write", *args])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_rule_based_scores_on_real_pipeline_traces(demo_db: Path) -> None:
    result = runner.invoke(app, [str(demo_db), "--evaluate", "--json", "--bootstrap", "200"])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    rule = next(s for s in report["scores"] if s["method"] == "rule")
    text = next(s for s in report["scores"] if s["method"] == "text")
    assert rule["n"] >= 15
    assert rule["type_accuracy"]["value"] >= 0.8 and rule["step_accuracy"]["value"] >= 0.8
    assert text["type_accuracy"]["value"] < rule["type_accuracy"]["value"]


def test_stripping_ground_truth_changes_no_diagnosis(demo_db: Path, tmp_path: Path) -> None:
    copy = tmp_path / "stripped.duckdb"
    copy.write_bytes(demo_db.read_bytes())
    before = _diagnose(copy)
    assert before and any(d["fault_type"] != "none_found" for d in before)
    assert _strip_ground_truth(copy) > 0
    after = _diagnose(copy)
    key = ("trace_id", "fault_type", "target", "step", "span_id", "confidence", "evidence")
    assert sorted(tuple(d[k] for k in key) for d in after) == sorted(tuple(d[k] for k in key) for d in before)

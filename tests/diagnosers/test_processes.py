"""`diagnose` over local processes: the same diagnoses, in the same order, as in one process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentchaos_otel.parallel.processes import processes_per_core as default_workers
from agentchaos_otel.store.database.connect import open_store
from diagnosers.cli import app as diagnose_app
from diagnosers.driver import diagnose_store
from diagnosers.rules import RuleDiagnoser
from tests.support.scale import scale_store

pytestmark = pytest.mark.scale


def test_chunks_over_processes_equal_one_process(tmp_path: Path) -> None:
    store = scale_store(tmp_path / "traces.duckdb")
    alone = diagnose_store(store, RuleDiagnoser(), chunk_spans=100)
    spread = diagnose_store(store, RuleDiagnoser(), chunk_spans=100, workers=2)
    assert len(alone.diagnoses) > 20
    assert spread.diagnoses == alone.diagnoses
    assert (spread.episodes, spread.simulated) == (alone.episodes, alone.simulated)
    with open_store(store) as conn:
        task = conn.execute("SELECT min(task_id) FROM episodes WHERE success IS NOT TRUE").fetchone()[0]
    one = diagnose_store(store, RuleDiagnoser(), tasks=[task], chunk_spans=100)
    assert diagnose_store(store, RuleDiagnoser(), tasks=[task], chunk_spans=100, workers=2).diagnoses == one.diagnoses
    assert 0 < len(one.diagnoses) < len(alone.diagnoses)


def test_the_command_uses_processes_by_default_and_says_the_same(tmp_path: Path) -> None:
    store = scale_store(tmp_path / "traces.duckdb")
    runner = CliRunner()
    runs = {}
    for workers in ("1", "2"):
        r = runner.invoke(diagnose_app, [str(store), "--json", "--no-write", "--workers", workers])
        assert r.exit_code == 0, r.output
        runs[workers] = json.loads(r.output)
    assert runs["2"] == runs["1"] and len(runs["1"]) > 20
    assert default_workers() >= 1

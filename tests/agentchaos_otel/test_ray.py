"""Ray executors give what the local run gives: campaign episodes and diagnoses.

A local Ray instance on loopback with 2 CPUs (no dashboard, nothing downloaded) is started once
for the module; the commands join it. The campaign runs the reference agent against the bundled
SIMULATED model, which the driver serves on loopback and the Ray actors call.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentchaos_otel.cli.main import app as agentchaos_app
from agentchaos_otel.store.database.connect import open_store
from agentchaos_otel.store.read.episodes import load_episodes
from diagnosers.cli import app as diagnose_app
from tests.support.scale import scale_store

pytestmark = pytest.mark.scale

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _run(app: object, args: list[str]) -> str:
    result = CliRunner().invoke(app, args)  # type: ignore[arg-type]
    assert result.exit_code == 0, result.output
    return result.stdout


def _episodes(path: Path) -> list[tuple]:
    """What a run produced, independent of span ids and timing."""
    return sorted((e.task_id, e.condition, e.seed, e.success, tuple((s.kind, s.name, s.step) for s in e.steps),
                   tuple((f.step, f.fault_type, f.target) for f in e.faults()))
                  for e in load_episodes(path, blind=False))


CAMPAIGN = ["campaign", "run", "--tasks", "3", "--conditions", "none,bursty,persistent", "--seeds", "0",
            "--workers", "1", "--no-progress"]


def test_campaign_on_ray_equals_the_local_run_and_resumes(local_ray: None, tmp_path: Path) -> None:
    local, on_ray = tmp_path / "local.duckdb", tmp_path / "ray.duckdb"
    _run(agentchaos_app, [*CAMPAIGN, "--db", str(local)])
    out = json.loads(_run(agentchaos_app, [*CAMPAIGN, "--db", str(on_ray), "--executor", "ray",
                                           "--ray-workers", "2"]).strip().splitlines()[-1])
    assert out["ran"] == 9 and out["simulated"] is True
    expected = _episodes(local)
    assert len(expected) == 9 and any(faults for *_, faults in expected)
    assert _episodes(on_ray) == expected
    with open_store(local) as a, open_store(on_ray) as b:
        q = "SELECT name, kind, status_code, count(*) FROM spans GROUP BY ALL ORDER BY ALL"
        assert a.execute(q).fetchall() == b.execute(q).fetchall()
        args = json.loads(b.execute("SELECT args FROM campaign_runs").fetchone()[0])
        assert args["executor"] == "ray"
    again = json.loads(_run(agentchaos_app, [*CAMPAIGN, "--db", str(on_ray), "--executor", "ray",
                                             "--ray-workers", "2"]).strip().splitlines()[-1])
    assert (again["ran"], again["skipped_finished"]) == (0, 9)


def test_diagnose_on_ray_equals_the_local_run(local_ray: None, tmp_path: Path) -> None:
    store = scale_store(tmp_path / "traces.duckdb")
    local = json.loads(_run(diagnose_app, [str(store), "--json", "--no-write"]))
    on_ray = json.loads(_run(diagnose_app, [str(store), "--json", "--no-write", "--executor", "ray"]))
    assert len(local) > 20 and on_ray == local


def test_diagnose_chunks_spread_over_workers_keep_the_order(local_ray: None, tmp_path: Path) -> None:
    from diagnosers.driver import diagnose_store
    from diagnosers.rules import RuleDiagnoser

    store = scale_store(tmp_path / "traces.duckdb")
    local = diagnose_store(store, RuleDiagnoser())
    spread = diagnose_store(store, RuleDiagnoser(), executor="ray", chunk_spans=100)
    assert spread.diagnoses == local.diagnoses and spread.episodes == local.episodes

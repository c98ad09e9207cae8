"""Feature rows of a whole store (`agentchaos predict features`) and the predictors' projected load.

The rows must be those ``prefix_table`` gives on the fully loaded episodes, in the whole-store
order, whether one process or several made them; a predictor trained on the projected load the
``predict`` commands use must be the one trained on full steps.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from agentchaos_otel.store.database.connect import connect
from agentchaos_otel.store.read.episodes import load_episodes
from predictors.cli import app
from predictors.estimator import train
from predictors.extract import STEP_KEYS, store_features
from predictors.feature_file import write_store_features
from predictors.features import feature_names, prefix_table
from tests.predictors.test_cli import write_corpus
from tests.predictors.test_synth import synthetic_corpus
from tests.support.scale import scale_store

runner = CliRunner()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scale_store(tmp_path_factory.mktemp("extract") / "traces.duckdb")


def test_rows_equal_prefix_table_of_the_full_load_in_store_order(store: Path) -> None:
    episodes = load_episodes(store)  # full steps, blind, whole-store order
    names = feature_names("both")
    expected = prefix_table(episodes, names)
    got = store_features(store, "both", chunk_spans=100)
    assert got.episodes == len(episodes) > 20
    assert got.names == names
    assert np.array_equal(got.rows, expected.rows)
    assert got.step == expected.step
    assert got.trace_id == [episodes[i].trace_id for i in expected.episode]
    assert got.success == [episodes[i].success for i in expected.episode]
    # the twin-root trace: two episodes under one trace id, both kept
    assert len({(t, task) for t, task in zip(got.trace_id, got.task_id, strict=True) if task and "twin" in task}) == 2


def test_processes_give_the_same_rows_as_one(store: Path) -> None:
    alone = store_features(store, "external", chunk_spans=100)
    spread = store_features(store, "external", chunk_spans=100, workers=2)
    assert alone.frame().equals(spread.frame())
    assert alone.episodes == spread.episodes


def test_command_writes_parquet_labelled_simulated(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "f.parquet"
    result = runner.invoke(app, ["features", str(store), "--out", str(out), "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert "SIMULATED" in result.output
    frame = pl.read_parquet(out)
    assert frame.columns[:5] == ["trace_id", "task_id", "success", "step", "simulated"]
    assert tuple(frame.columns[5:]) == feature_names("both")
    assert frame["simulated"].any()
    assert frame.equals(store_features(store, "both").frame())


def test_command_errors_are_one_line(store: Path, tmp_path: Path) -> None:
    bad_set = runner.invoke(app, ["features", str(store), "--features", "nope"])
    assert bad_set.exit_code == 2 and "unknown feature set" in bad_set.output
    missing = runner.invoke(app, ["features", str(tmp_path / "none.duckdb")])
    assert missing.exit_code == 1 and "no such file" in missing.output
    junk = tmp_path / "junk.duckdb"
    junk.write_text("not a database")
    broken = runner.invoke(app, ["features", str(junk), "--out", str(tmp_path / "x.parquet")])
    assert broken.exit_code == 1 and "Traceback" not in broken.output
    assert not (tmp_path / "x.parquet").exists()


def test_predictor_from_projected_steps_equals_full_steps(tmp_path: Path) -> None:
    db = write_corpus(tmp_path / "traces.duckdb", synthetic_corpus(12, 1))
    full = load_episodes(db)
    projected = load_episodes(db, step_keys=STEP_KEYS)
    assert sum(len(s.attributes) for e in projected for s in e.steps) < sum(len(s.attributes) for e in full
                                                                              for s in e.steps)
    for features in ("external", "both"):
        a, _ = train(full, features, seed=3)
        b, _ = train(projected, features, seed=3)
        assert a.to_dict() == b.to_dict()


@pytest.mark.parametrize("workers", [1, 2])
def test_file_in_store_order_when_parts_come_out_of_order(store: Path, tmp_path: Path, workers: int) -> None:
    # The special traces start in 1970 but were stored between the others: with small chunks,
    # a part starts before the previous one ended, and the runs must be merged back in order.
    out = tmp_path / "f.parquet"
    written = write_store_features(store, out, "both", workers=workers, chunk_spans=100)
    assert written.runs > 1
    expected = store_features(store, "both", chunk_spans=100)
    assert (written.rows, written.episodes, written.simulated) == (len(expected.step), expected.episodes, True)
    assert pl.read_parquet(out).equals(expected.frame())


def test_file_in_store_order_when_parts_come_in_order(tmp_path: Path) -> None:
    db = write_corpus(tmp_path / "traces.duckdb", synthetic_corpus(12, 1))
    out = tmp_path / "f.parquet"
    written = write_store_features(db, out, "external", chunk_spans=100)
    assert written.runs == 1 and written.episodes == len(load_episodes(db)) > 1
    assert pl.read_parquet(out).equals(store_features(db, "external").frame())


def test_no_episodes_leave_the_output_as_it_was(tmp_path: Path) -> None:
    db = tmp_path / "traces.duckdb"
    connect(db, read_only=False).close()  # a store with no spans
    out = tmp_path / "f.parquet"
    out.write_bytes(b"earlier")
    assert write_store_features(db, out).episodes == 0
    assert out.read_bytes() == b"earlier"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".f.parquet")] == []
    result = runner.invoke(app, ["features", str(db), "--out", str(out)])
    assert result.exit_code == 1 and "no episodes stored" in result.output
    assert out.read_bytes() == b"earlier"

"""``agentchaos predict`` end to end on real DuckDB trace files written through the OTel SDK."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from agentchaos_otel.store.read.episodes import load_episodes
from predictors.cli import app
from predictors.model import FailurePredictor
from tests.predictors.test_live import Pipeline
from tests.predictors.test_synth import synthetic_corpus

runner = CliRunner()


def write_corpus(path: Path, episodes: list) -> Path:
    pipe = Pipeline(FailurePredictor.load(_null_model(path.parent)), db=path)
    try:
        for ep in episodes:
            pipe.replay(ep)
    finally:
        pipe.provider.shutdown()
    return path


def _null_model(folder: Path) -> Path:
    from tests.predictors.test_live import error_count_predictor

    return error_count_predictor().save(folder / "null-model.json")


@pytest.fixture(scope="module")
def corpus_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    return write_corpus(folder / "traces.duckdb", synthetic_corpus(30, 1))


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def test_corpus_round_trips_through_the_store(corpus_db: Path) -> None:
    eps = load_episodes(corpus_db)
    assert len(eps) == 90
    assert {e.success for e in eps} == {True, False}
    assert all(e.task_id and e.task_id.startswith("task") for e in eps)


def test_train_then_score_writes_predictions(corpus_db: Path, tmp_path: Path) -> None:
    model = tmp_path / "m.json"
    code, out, err = run("train", corpus_db, "--features", "both", "--out", model, "--seed", "1")
    assert code == 0, err
    assert "SIMULATED" in out and "threshold" in out and "AUROC" in out
    p = FailurePredictor.load(model)
    assert p.feature_set == "both" and p.meta["simulated"] is True
    code, out, err = run("score", corpus_db, "--model", model)
    assert code == 0, err
    with duckdb.connect(str(corpus_db), read_only=True) as conn:
        rows = conn.execute("SELECT count(*), count(DISTINCT trace_id), min(score) >= 0, max(score) <= 1 "
                            "FROM predictions").fetchone()
        steps = conn.execute("SELECT count(*) FROM steps").fetchone()[0]
        one = conn.execute("SELECT trace_id, step, score FROM predictions ORDER BY trace_id, step LIMIT 3"
                           ).fetchall()
    assert rows == (steps, 90, True, True)
    ep = next(e for e in load_episodes(corpus_db) if e.trace_id == one[0][0])
    assert [r[2] for r in one] == pytest.approx(p.score_prefixes(ep)[:3])
    # Scoring again replaces this model's rows instead of duplicating them.
    assert run("score", corpus_db, "--model", model)[0] == 0
    with duckdb.connect(str(corpus_db), read_only=True) as conn:
        assert conn.execute("SELECT count(*) FROM predictions").fetchone()[0] == steps


def test_evaluate_compares_three_sets_with_plots_and_json(corpus_db: Path, tmp_path: Path) -> None:
    code, out, err = run("evaluate", corpus_db, "--bootstrap", "30", "--plots", tmp_path / "plots",
                         "--json", tmp_path / "r.json")
    assert code == 0, err
    assert "SIMULATED" in out
    for name in ("external", "entropy", "both"):
        assert f"\n{name} " in out
    assert "0.846" in out and "0.751" in out and "0.851" in out and "coefficients (external" in out
    for png in ("roc.png", "lead_time.png"):
        data = (tmp_path / "plots" / png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    report = json.loads((tmp_path / "r.json").read_text())
    assert set(report["evaluations"]) == {"external", "entropy", "both"}
    assert report["simulated"] is True


def test_evaluate_a_saved_model(corpus_db: Path, tmp_path: Path) -> None:
    model = tmp_path / "m.json"
    assert run("train", corpus_db, "--out", model)[0] == 0
    code, out, err = run("evaluate", corpus_db, "--model", model, "--bootstrap", "20")
    assert code == 0, err
    held_out = FailurePredictor.load(model).meta["test_tasks"]
    n_test = sum(1 for e in load_episodes(corpus_db) if e.task_id in held_out)
    assert "held-out test tasks" in out and f"{n_test} episodes" in out and "SIMULATED" in out
    # On another file every episode counts.
    other = write_corpus(tmp_path / "other.duckdb", synthetic_corpus(4, 1))
    code, out, err = run("evaluate", other, "--model", model, "--bootstrap", "20")
    assert code == 0, err
    assert "12 episodes" in out and "held-out" not in out


@pytest.mark.parametrize("args", [
    ("train", "{missing}"),
    ("train", "{db}", "--features", "internal"),
    ("evaluate", "{db}", "--model", "{missing}"),
    ("score", "{db}", "--model", "{garbage}"),
    ("score", "{garbage}", "--model", "{garbage}"),
    ("evaluate", "{empty}"),
    ("train", "{db}", "--out", "{missing}/sub/m.json"),
])
def test_bad_arguments_give_one_line_and_non_zero_exit(corpus_db: Path, tmp_path: Path, args: tuple) -> None:
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"\x00not a model or a database" * 20)
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    subst = {"missing": tmp_path / "missing.duckdb", "db": corpus_db, "garbage": garbage, "empty": empty}
    code, out, err = run(*[a.format(**subst) for a in args])
    assert code != 0
    assert err.startswith("agentchaos: error: ") and err.count("\n") == 1 and "Traceback" not in err


def test_single_class_and_tiny_corpora_are_refused_clearly(tmp_path: Path) -> None:
    from dataclasses import replace

    all_ok = [replace(e, success=True) for e in synthetic_corpus(8, 1)]
    db = write_corpus(tmp_path / "ok.duckdb", all_ok)
    code, _, err = run("evaluate", db, "--bootstrap", "10")
    assert code == 1 and "0 failed" in err and err.count("\n") == 1
    tiny = write_corpus(tmp_path / "tiny.duckdb", synthetic_corpus(2, 1))
    code, _, err = run("train", tiny)
    assert code == 1 and "too small to split" in err


def test_mounted_under_agentchaos_predict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentchaos_otel.cli.errors import run_app
    from agentchaos_otel.cli.main import app as main_app

    assert run_app(main_app, "agentchaos", ["predict", "train", str(tmp_path / "none.duckdb")]) == 1
    err = capsys.readouterr().err
    assert "no such file" in err and err.count("\n") == 1

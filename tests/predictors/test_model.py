"""Training, threshold choice, persistence and degenerate inputs of the logistic predictor."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from predictors.estimator import train
from predictors.features import FEATURE_SETS, prefix_table
from predictors.model import (
    FailurePredictor,
    PredictorDataError,
    alarm_threshold,
    fit_predictor,
    split_by_task,
)
from tests.predictors.test_synth import episode, llm_step, synthetic_corpus, tool_step


@pytest.fixture(scope="module")
def corpus() -> list:
    return synthetic_corpus(40, 2)


def test_split_is_by_task_deterministic_and_complete(corpus: list) -> None:
    a = split_by_task(corpus, seed=3)
    b = split_by_task(corpus, seed=3)
    c = split_by_task(corpus, seed=4)
    parts = [{e.task_id for e in p} for p in (a.train, a.validation, a.test)]
    assert not (parts[0] & parts[1]) and not (parts[0] & parts[2]) and not (parts[1] & parts[2])
    assert len(a.train) + len(a.validation) + len(a.test) == len(corpus)
    assert [e.trace_id for e in a.test] == [e.trace_id for e in b.test]
    assert {e.task_id for e in a.test} != {e.task_id for e in c.test}
    assert a.summary()["test"]["tasks"] == 8 and a.summary()["validation"]["tasks"] == 8


def test_split_drops_unlabelled_and_empty_episodes(corpus: list) -> None:
    extra = [replace(corpus[0], trace_id="u", success=None), replace(corpus[1], trace_id="e", steps=())]
    split = split_by_task(corpus + extra, seed=0)
    assert split.dropped_unlabelled == 2
    assert "u" not in {e.trace_id for e in split.train + split.validation + split.test}


def test_too_few_tasks_is_a_clear_error() -> None:
    eps = [episode([llm_step(0)], success=s, task_id=t, trace_id=f"{t}{s}")
           for t in ("a", "b") for s in (True, False)]
    with pytest.raises(PredictorDataError, match="too small to split by task: 2 task"):
        split_by_task(eps)
    with pytest.raises(PredictorDataError, match="too small"):
        split_by_task([])


def test_single_class_corpus_is_a_clear_error(corpus: list) -> None:
    all_ok = [replace(e, success=True) for e in corpus]
    with pytest.raises(PredictorDataError, match="0 failed"):
        train(all_ok, "external")


def test_entropy_set_without_logprobs_is_a_clear_error() -> None:
    eps = synthetic_corpus(20, 1, logprobs=False)
    with pytest.raises(PredictorDataError, match="logprobs"):
        train(eps, "entropy")
    predictor, _ = train(eps, "external")
    assert predictor.meta["has_logprobs"] is False


def test_alarm_threshold_rule() -> None:
    scores = [i / 100 for i in range(100)]          # 100 normal episodes, maxima 0.00..0.99
    t = alarm_threshold(scores, 0.05)
    assert sum(s >= t for s in scores) == 5
    assert 0.94 < t <= 0.95
    few = [0.2, 0.4, 0.3]                            # fewer than 20: no alarm allowed at all
    assert sum(s >= alarm_threshold(few) for s in few) == 0
    tied = [0.5] * 10 + [0.1] * 90                   # ties are silenced together, never over target
    assert sum(s >= alarm_threshold(tied) for s in tied) == 0
    assert alarm_threshold([0.3], 0.0) > 0.3
    with pytest.raises(PredictorDataError):
        alarm_threshold([])
    with pytest.raises(PredictorDataError):
        alarm_threshold([0.1], 1.5)


def test_fit_matches_scikit_learn_and_predict_proba_shape(corpus: list) -> None:
    split = split_by_task(corpus, seed=0)
    p = fit_predictor(split.train, "both", seed=0)
    table = prefix_table(split.test, FEATURE_SETS["both"])
    X = np.asarray(table.rows)
    proba = p.predict_proba(X)
    assert proba.shape == (len(X), 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # The stored parameters reproduce a scikit-learn pipeline built from them.
    scaler = StandardScaler()
    scaler.mean_, scaler.scale_ = np.asarray(p.mean), np.asarray(p.scale)
    scaler.var_, scaler.n_features_in_ = np.asarray(p.scale) ** 2, len(p.names)
    clf = LogisticRegression()
    clf.coef_, clf.intercept_ = np.asarray([p.coef]), np.asarray([p.intercept])
    clf.classes_ = np.array([0, 1])
    np.testing.assert_allclose(proba, clf.predict_proba(scaler.transform(X)), rtol=1e-12, atol=1e-15)
    # The plain-Python path used live gives the same number.
    assert p.score_vector(table.rows[5]) == pytest.approx(proba[5, 1], rel=1e-12)
    with pytest.raises(ValueError, match="expected rows"):
        p.predict_proba(X[:, :3])


def test_errors_raise_the_failure_score_on_the_synthetic_corpus(corpus: list) -> None:
    p, _ = train(corpus, "external", seed=0)
    coef = dict(p.coefficients())
    assert coef["tool_errors"] > 0
    clean = episode([llm_step(0), tool_step(1, "mkdir", "a"), llm_step(2, tool_calls=0, content_length=9)])
    broken = episode([llm_step(0), tool_step(1, "mkdir", "a", error=True), llm_step(2),
                      tool_step(3, "mkdir", "a", error=True), llm_step(4),
                      tool_step(5, "mkdir", "a", error=True), llm_step(6, tool_calls=0, content_length=9)])
    assert max(p.score_prefixes(broken)) > max(p.score_prefixes(clean))


def test_threshold_meets_the_false_alarm_target_on_validation(corpus: list) -> None:
    p, split = train(corpus, "external", seed=0)
    normals = [e for e in split.validation if e.success]
    rate = sum(max(p.score_prefixes(e)) >= p.threshold for e in normals) / len(normals)
    assert rate <= 0.05
    assert p.meta["validation_false_alarm"] == rate
    assert p.meta["split"]["test"]["episodes"] == len(split.test)


def test_save_load_round_trip(tmp_path, corpus: list) -> None:
    p, split = train(corpus, "both", seed=1)
    path = p.save(tmp_path / "model.json")
    data = json.loads(path.read_text())
    assert data["feature_set"] == "both" and data["version"] == 1 and data["threshold"] == p.threshold
    assert data["meta"]["package_version"] and data["meta"]["test_tasks"]
    q = FailurePredictor.load(path)
    assert q == p
    e = split.test[0]
    assert q.score_prefixes(e) == p.score_prefixes(e)


@pytest.mark.parametrize(("content", "message"), [
    ("not json", "cannot read"),
    ('{"format": "other"}', "not a failure-predictor"),
    ('{"format": "agentchaos-failure-predictor", "version": 99}', "version 99"),
    ('{"format": "agentchaos-failure-predictor", "version": 1, "feature_set": "external"}', "malformed"),
])
def test_bad_model_files_give_clear_errors(tmp_path, content: str, message: str) -> None:
    path = tmp_path / "m.json"
    path.write_text(content)
    with pytest.raises(PredictorDataError, match=message):
        FailurePredictor.load(path)
    with pytest.raises(PredictorDataError, match="no such file"):
        FailurePredictor.load(tmp_path / "missing.json")


def test_model_file_with_other_features_is_refused(tmp_path, corpus: list) -> None:
    p, _ = train(corpus, "external", seed=0)
    data = p.to_dict()
    data["features"] = data["features"][:-1]
    (tmp_path / "m.json").write_text(json.dumps(data))
    with pytest.raises(PredictorDataError, match="retrain"):
        FailurePredictor.load(tmp_path / "m.json")


def test_validation_without_successful_episodes_is_a_clear_error(corpus: list) -> None:
    from predictors.model import calibrate

    split = split_by_task(corpus, seed=0)
    p = fit_predictor(split.train, "external")
    failed_only = [e for e in split.validation if not e.success]
    with pytest.raises(PredictorDataError, match="no successful episode"):
        calibrate(p, failed_only)


def test_constant_features_do_not_break_fitting() -> None:
    # Every episode looks the same from outside: the fit must still work and score them equally.
    eps = [episode([llm_step(0), tool_step(1, "mkdir")], success=(i // 6) % 2 == 0, task_id=f"t{i % 6}",
                   trace_id=str(i), simulated=False) for i in range(24)]
    p, split = train(eps, "external")
    scores = {round(max(p.score_prefixes(e)), 12) for e in split.test}
    assert len(scores) == 1
    scale = dict(zip(p.names, p.scale, strict=True))
    assert scale["tool_errors"] == 1.0 and scale["retries"] == 1.0     # zero variance: left unscaled


def test_non_finite_attribute_values_are_ignored() -> None:
    from agentchaos_otel import attributes as A

    weird = [llm_step(0, extra={A.GEN_AI_USAGE_INPUT_TOKENS: float("nan"),
                                A.LOGPROBS_ENTROPY_MEAN: float("inf")}), tool_step(1)]
    p = FailurePredictor("external", *_unit_params("external"))
    assert all(0.0 <= s <= 1.0 for s in p.score_prefixes(episode(weird)))


def _unit_params(feature_set: str) -> tuple:
    names = FEATURE_SETS[feature_set]
    n = len(names)
    return names, [0.0] * n, [1.0] * n, [0.1] * n, 0.0, 0.5

"""Episode-level measures, bootstrap intervals and the three-feature-set comparison."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from predictors.estimator import train
from predictors.evaluate import (
    ScoredEpisode,
    auroc,
    bootstrap_intervals,
    compare_feature_sets,
    compute_metrics,
    entropy_by_outcome,
    evaluate_predictor,
    is_simulated,
    render_text,
    roc_curve,
)
from predictors.model import PredictorDataError
from tests.predictors.test_synth import entropy_attrs, episode, llm_step, synthetic_corpus, tool_step


def scored(failed: bool, scores: list[float], llm: list[bool] | None = None) -> ScoredEpisode:
    return ScoredEpisode("t", "task", failed, tuple(scores), tuple(llm or [True] * len(scores)))


def test_auroc_matches_scikit_learn_with_ties() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    s = np.round(rng.random(300) + 0.3 * y, 1)        # rounding makes many ties
    assert auroc(y, s) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert auroc([1, 1], [0.2, 0.3]) is None
    assert auroc([0, 1], [0.5, 0.5]) == 0.5


def test_roc_curve_runs_from_origin_to_corner() -> None:
    fpr, tpr = roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    assert (fpr[0], tpr[0]) == (0.0, 0.0) and (fpr[-1], tpr[-1]) == (1.0, 1.0)
    assert fpr == sorted(fpr) and tpr == sorted(tpr)
    assert roc_curve([1, 1], [0.1, 0.2]) == ([], [])


def test_metrics_detection_false_alarm_and_lead() -> None:
    eps = [
        scored(True, [0.1, 0.6, 0.7, 0.9]),                    # first alarm at index 1 -> lead 2 steps
        scored(True, [0.1, 0.2, 0.3, 0.55, 0.2], [True, False, True, False, True]),  # idx 3 -> lead 1
        scored(True, [0.1, 0.2]),                              # never alarms
        scored(False, [0.1, 0.3]),
        scored(False, [0.1, 0.5]),                             # false alarm
    ]
    m = compute_metrics(eps, threshold=0.5)
    assert m.detection == pytest.approx(2 / 3)
    assert m.false_alarm == pytest.approx(1 / 2)
    assert m.median_lead_steps == 1.5
    assert m.median_lead_llm_calls == 1.5                      # 2 LLM calls after idx 1; 1 after idx 3
    assert m.auroc == pytest.approx(roc_auc_score([1, 1, 1, 0, 0], [0.9, 0.55, 0.2, 0.3, 0.5]))
    assert eps[0].lead_steps(0.95) is None


def test_single_outcome_test_set_reports_missing_auroc_with_reason() -> None:
    m = compute_metrics([scored(False, [0.1]), scored(False, [0.3])], 0.5)
    assert m.auroc is None and m.detection is None and m.false_alarm == 0.0
    assert "only one outcome" in m.notes[0]


def test_bootstrap_intervals_are_seeded_and_bracket_the_estimate() -> None:
    rng = np.random.default_rng(1)
    eps = [scored(bool(f), list(rng.random(4) * 0.6 + 0.3 * f)) for f in rng.integers(0, 2, 80)]
    a = bootstrap_intervals(eps, 0.6, n_boot=300, seed=5)
    b = bootstrap_intervals(eps, 0.6, n_boot=300, seed=5)
    assert a == b
    point = compute_metrics(eps, 0.6)
    lo, hi = a["auroc"]
    assert lo < point.auroc < hi
    lo, hi = a["detection"]
    assert lo <= point.detection <= hi
    assert bootstrap_intervals(eps, 0.6, n_boot=0)["auroc"] is None


@pytest.fixture(scope="module")
def corpus() -> list:
    return synthetic_corpus(60, 2)


def test_evaluate_predictor_on_held_out_tasks(corpus: list) -> None:
    p, split = train(corpus, "external", seed=0)
    ev = evaluate_predictor(p, split.test, n_boot=200, seed=0)
    assert ev.metrics.episodes == len(split.test)
    assert ev.metrics.auroc is not None and ev.metrics.auroc > 0.55     # the synthetic signal is real
    assert ev.coefficients[0][1] == max(ev.coefficients, key=lambda kv: abs(kv[1]))[1]
    assert len(ev.leads) == round(ev.metrics.detection * ev.metrics.failures)
    with pytest.raises(PredictorDataError, match="no episode"):
        evaluate_predictor(p, [])


def test_comparison_of_three_feature_sets(corpus: list) -> None:
    cmp = compare_feature_sets(corpus, seed=0, n_boot=30)
    assert set(cmp.evaluations) == {"external", "entropy", "both"}
    assert cmp.simulated
    test_ids = {e.trace_id for e in cmp.split.test}
    for ev in cmp.evaluations.values():
        assert ev.metrics.episodes == len(test_ids)
    text = render_text(cmp)
    assert "SIMULATED" in text
    for figure in ("0.846", "0.751", "0.851", "0.63"):
        assert figure in text
    d = cmp.to_dict()
    assert d["published"]["external"]["auroc"] == 0.846
    assert d["evaluations"]["entropy"]["metrics"]["auroc"] == cmp.evaluations["entropy"].metrics.auroc


def test_comparison_without_logprobs_skips_entropy_and_says_so() -> None:
    eps = synthetic_corpus(30, 1, logprobs=False)
    cmp = compare_feature_sets(eps, seed=0, n_boot=50)
    assert "entropy" not in cmp.evaluations and "logprobs" in cmp.skipped["entropy"]
    assert "both" in cmp.evaluations and "constant" in cmp.notes["both"]
    text = render_text(cmp)
    assert "entropy   skipped" in text
    assert cmp.entropy_by_outcome == {"entropy_success": None, "entropy_failure": None, "top_mass": None}


def test_entropy_by_outcome_and_simulated_flag() -> None:
    ok = episode([llm_step(0, entropy=entropy_attrs(0.04, mass=0.9999))], success=True)
    bad = episode([llm_step(0, entropy=entropy_attrs(0.08, mass=0.9997))], success=False, simulated=False)
    e = entropy_by_outcome([ok, bad])
    assert e["entropy_success"] == pytest.approx(0.04) and e["entropy_failure"] == pytest.approx(0.08)
    assert e["top_mass"] == pytest.approx(0.9998)
    assert is_simulated([bad, ok]) and not is_simulated([bad])


def test_real_corpus_is_not_labelled_simulated() -> None:
    eps = [episode([llm_step(0), tool_step(1, error=(i % 3 == 0))], success=i % 2 == 0,
                   task_id=f"t{i % 9}", trace_id=str(i), simulated=False) for i in range(60)]
    cmp = compare_feature_sets(eps, seed=0, n_boot=20, feature_sets=("external",))
    assert not cmp.simulated and "SIMULATED" not in render_text(cmp)
    assert "not requested" in render_text(cmp)

"""The shared statistics agree with scipy and scikit-learn references."""

from __future__ import annotations

import random

import numpy as np
import pytest
from scipy import stats as sps

from agentchaos_otel import stats


def test_batched_bootstrap_interval_matches_scipy_percentile_bootstrap() -> None:
    data = np.random.default_rng(5).binomial(1, 0.3, size=400).astype(float)
    ours = stats.percentile_interval(stats.resampled_means(data, np.random.default_rng(1), 4000))
    ref = sps.bootstrap((data,), np.mean, n_resamples=4000, method="percentile", random_state=2,
                        confidence_level=0.95).confidence_interval
    assert ours[0] == pytest.approx(ref.low, abs=0.01)
    assert ours[1] == pytest.approx(ref.high, abs=0.01)


def test_block_size_does_not_change_what_a_block_holds() -> None:
    data = np.arange(10, dtype=float)
    a = stats.resampled_means(data, np.random.default_rng(3), 100, rows=100)
    b = stats.resampled_means(data, np.random.default_rng(3), 100, rows=100)
    assert a.shape == (100,) and np.array_equal(a, b)
    two = stats.resampled_means(np.c_[data, 2 * data], np.random.default_rng(3), 50)
    assert two.shape == (50, 2) and np.allclose(two[:, 1], 2 * two[:, 0])


def test_auroc_counts_ties_half_and_needs_both_classes() -> None:
    assert stats.auroc([0, 1, 0, 1], [0.1, 0.9, 0.5, 0.5]) == pytest.approx(0.875)
    assert stats.auroc([1, 1], [0.2, 0.3]) is None
    fpr, tpr = stats.roc_curve([0, 1, 0, 1], [0.1, 0.9, 0.5, 0.5])
    assert fpr[0] == 0.0 and tpr[0] == 0.0 and fpr[-1] == 1.0 and tpr[-1] == 1.0


def test_sigmoid_is_stable_at_the_extremes() -> None:
    out = stats.sigmoid(np.array([-1000.0, 0.0, 1000.0]))
    assert out.tolist() == [0.0, 0.5, 1.0]


def test_resample_counts_are_the_resample_indices_counted() -> None:
    blocks = list(stats.resample_counts(7, 25, np.random.default_rng(4), rows=10))
    indices = list(stats.resample_indices(7, 25, np.random.default_rng(4), rows=10))
    assert [len(b) for b in blocks] == [10, 10, 5]
    for counts, idx in zip(blocks, indices, strict=True):
        assert counts.sum(axis=1).tolist() == [7.0] * len(idx)
        assert np.array_equal(counts, np.array([np.bincount(row, minlength=7) for row in idx], dtype=float))


def test_estimate_bootstrap_is_the_shared_percentile_bootstrap() -> None:
    values = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0]
    est = stats.Estimate.bootstrap(values, seed=3, labels=("mean", "x"), resamples=300)
    assert (est.value, est.low, est.high) == stats.bootstrap_interval(values, seed=3, labels=("mean", "x"),
                                                                      resamples=300)
    assert est.n == 6 and est.low <= est.value <= est.high
    assert stats.Estimate.bootstrap([], seed=3, labels=("mean", "x"), resamples=300) == stats.Estimate(None)


def test_case_weights_fit_like_repeated_rows() -> None:
    # A bootstrap resample fitted with case counts as weights is the fit on the repeated rows.
    rng = np.random.default_rng(8)
    x = rng.normal(size=(30, 2))
    y = (x[:, 0] + rng.normal(size=30) > 0).astype(float)
    counts = next(stats.resample_counts(30, 4, np.random.default_rng(2), rows=4))
    batched = stats.fit_logistic(x, y, weights=counts)
    for row, beta in zip(counts.astype(int), batched, strict=True):
        repeated = stats.fit_logistic(np.repeat(x, row, axis=0), np.repeat(y, row))
        assert np.allclose(beta, repeated, atol=1e-6)


def test_effects_at_mean_is_the_probability_change_of_one_more_unit() -> None:
    beta = np.array([0.2, -0.8, 0.5])
    x_mean = np.array([0.5, 1.0])
    eta = 0.2 - 0.8 * 0.5 + 0.5 * 1.0
    expected = stats.sigmoid(eta - 0.8) - stats.sigmoid(eta)
    assert stats.effects_at_mean(beta, x_mean, 1)[0, 0] == pytest.approx(float(expected))


def test_rate_has_a_wilson_interval_and_flags_small_totals() -> None:
    r = stats.Rate(3, 8)
    assert r.value == 0.375 and r.interval == stats.wilson(3, 8) and r.small
    assert stats.Rate(0, 0).value is None and stats.Rate(0, 0).interval == (None, None)


def test_group_split_keeps_groups_whole_seeded_and_order_free() -> None:
    groups = [f"task-{i % 13}" for i in range(60)]
    parts = stats.group_split(groups, [3, 2], seed=5)
    assert sorted(i for p in parts for i in p) == list(range(60))
    assert all(p == sorted(p) for p in parts)
    sides = [{groups[i] for i in p} for p in parts]
    assert [len(s) for s in sides] == [8, 3, 2]
    assert not (sides[0] & sides[1]) and not (sides[0] & sides[2]) and not (sides[1] & sides[2])
    assert stats.group_split(groups, [3, 2], seed=5) == parts
    assert stats.group_split(groups, [3, 2], seed=6) != parts
    # The same groups listed in another order land on the same sides.
    order = list(reversed(range(60)))
    again = stats.group_split([groups[i] for i in order], [3, 2], seed=5)
    assert [{groups[order[i]] for i in p} for p in again] == sides
    # The documented rule: sorted groups, shuffled by random.Random(seed), cut in order.
    distinct = sorted(set(groups))
    random.Random(5).shuffle(distinct)
    assert sides == [set(distinct[:8]), set(distinct[8:11]), set(distinct[11:])]
    assert stats.group_split(groups, [0], seed=1) == [list(range(60)), []]
    with pytest.raises(ValueError, match="keep one"):
        stats.group_split(groups, [13], seed=1)
    with pytest.raises(ValueError, match="keep one"):
        stats.group_split(groups, [-1], seed=1)


def test_diagnosers_and_predictors_split_tasks_by_the_same_rule() -> None:
    from benchmarks.corpora import synthetic
    from diagnosers.learned import split_by_task as diagnoser_split
    from predictors.model import split_by_task as predictor_split

    corpus = synthetic.make_corpus(10, 1)
    tasks = [e.task_id for e in corpus]
    train, test = diagnoser_split(corpus, 0.3, seed=4)
    idx = stats.group_split(tasks, [3], seed=4)
    assert [e.trace_id for e in train] == [corpus[i].trace_id for i in idx[0]]
    assert [e.trace_id for e in test] == [corpus[i].trace_id for i in idx[1]]
    usable = [e for e in corpus if e.success is not None and e.steps]
    split = predictor_split(corpus, seed=4)
    parts = stats.group_split([e.task_id for e in usable], [2, 2], seed=4)
    assert [[e.trace_id for e in p] for p in (split.train, split.validation, split.test)] == [
        [usable[i].trace_id for i in p] for p in parts]

"""The shared statistics agree with scipy and scikit-learn references."""

from __future__ import annotations

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

"""Interval estimates shared by every table of the report, in one place.

Proportions of counted events (retry, abandonment, double application, success of one arm) get
Wilson score intervals (``scipy.stats.binomtest``): unlike the percentile bootstrap they do not
collapse to ``[v, v]`` at n=1 or at 0/n. Means and paired differences get a seeded percentile
bootstrap. Anything estimated from fewer than ``SMALL_N`` units is flagged wherever it is
printed, and a paired interval of zero width (every pair equal) carries a caveat: it says the
sample had no variation, not that the effect is known exactly.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
from scipy.stats import binomtest

CI_LEVEL = 0.95
SMALL_N = 10
SMALL_N_MARK = "small n"
ZERO_WIDTH_CAVEAT = "zero-width interval: every pair had the same difference; the sample shows no variation"


def rng(seed: int, *labels: str) -> np.random.Generator:
    """A generator per (seed, measure, group) so adding a group never shifts another's draws."""
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, *(zlib.crc32(s.encode()) for s in labels)])


def percentiles(samples: np.ndarray, level: float = CI_LEVEL) -> tuple[float | None, float | None]:
    samples = samples[np.isfinite(samples)]
    if samples.size == 0:
        return None, None
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(samples, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


# Resamples are drawn in blocks of about this many cells, so a large corpus or a large
# --resamples bounds memory instead of materialising one (resamples x n) matrix.
_BLOCK_CELLS = 2_000_000


def blocks(resamples: int, n: int) -> list[int]:
    size = max(1, _BLOCK_CELLS // max(1, n))
    return [min(size, resamples - start) for start in range(0, resamples, size)]


def resampled_means(values: np.ndarray, generator: np.random.Generator, resamples: int) -> np.ndarray:
    """Means of ``resamples`` bootstrap resamples of ``values`` (drawn with replacement)."""
    out = [values[generator.integers(0, values.size, size=(k, values.size))].mean(axis=1)
           for k in blocks(resamples, values.size)]
    return np.concatenate(out) if out else np.empty(0)


def bootstrap_interval(values: Sequence[float], *, seed: int, labels: Sequence[str],
                       resamples: int) -> tuple[float | None, float | None, float | None]:
    """(mean, low, high) of ``values`` by the percentile bootstrap; Nones when empty."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return None, None, None
    lo, hi = percentiles(resampled_means(arr, rng(seed, *labels), resamples))
    return float(arr.mean()), lo, hi


def wilson(hits: int, total: int, level: float = CI_LEVEL) -> tuple[float | None, float | None]:
    """Wilson score interval of hits/total; (None, None) when total is 0."""
    if total <= 0:
        return None, None
    ci = binomtest(int(hits), int(total)).proportion_ci(confidence_level=level, method="wilson")
    return float(ci.low), float(ci.high)


def is_small(n: int) -> bool:
    return 0 < n < SMALL_N


def small_mark(n: int) -> str:
    """The visible flag printed beside an estimate from fewer than SMALL_N units ('' otherwise)."""
    return f" ({SMALL_N_MARK}={n})" if is_small(n) else ""


def zero_width(low: float | None, high: float | None, n: int) -> bool:
    return n > 0 and low is not None and high is not None and high - low == 0.0

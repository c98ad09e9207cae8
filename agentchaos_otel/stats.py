"""The statistics every analysis shares: seeded generators, bootstrap, Wilson, ROC, sigmoid.

One home for them so the report, the diagnosers' evaluation and the predictors' evaluation
compute intervals the same way. Means and paired differences get a batched percentile
bootstrap (a resample is an index matrix, drawn in blocks so memory stays bounded on large
corpora), tested against ``scipy.stats.bootstrap`` with the percentile method. Proportions of
counted events (retry, abandonment, double application, success of one arm) get Wilson score
intervals (``scipy.stats.binomtest``): unlike the percentile bootstrap they do not collapse to
``[v, v]`` at n=1 or at 0/n. Anything estimated from fewer than ``SMALL_N`` units is flagged
wherever it is printed, and a paired interval of zero width (every pair equal) carries a
caveat: it says the sample had no variation, not that the effect is known exactly. ROC and
AUROC come from scikit-learn. ``Estimate`` and ``Rate`` are the two kinds of result the reports
print; ``fit_logistic`` fits many case-weighted logistic regressions at once, which is how a
bootstrap of a regression (``resample_counts``) stays a few batched solves. ``group_split``
is the one split by group (task id) that the diagnosers' and the predictors' train/test
splits both use.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

# scipy and scikit-learn are imported where used: together they take over a second to import,
# and commands such as ``diagnose`` import this module without needing them.

CI_LEVEL = 0.95
SMALL_N = 10
SMALL_N_MARK = "small n"
ZERO_WIDTH_CAVEAT = "zero-width interval: every pair had the same difference; the sample shows no variation"
# Resamples are drawn in blocks of about this many cells, so a large corpus or many resamples
# bound memory instead of materialising one (resamples x n) matrix.
BLOCK_CELLS = 2_000_000


def rng_for(seed: int, *labels: str) -> np.random.Generator:
    """A generator per (seed, measure, group): adding a group never shifts another's draws."""
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, *(zlib.crc32(s.encode()) for s in labels)])


def blocks(resamples: int, n: int, cells: int = BLOCK_CELLS) -> list[int]:
    """Block sizes that add up to ``resamples``, each holding about ``cells`` index cells."""
    size = max(1, cells // max(1, n))
    return [min(size, resamples - start) for start in range(0, resamples, size)]


def resample_indices(n: int, resamples: int, rng: np.random.Generator, *,
                     rows: int | None = None) -> Iterator[np.ndarray]:
    """(k, n) blocks of bootstrap indices (drawn with replacement), ``resamples`` rows in all.

    Blocks hold about ``BLOCK_CELLS`` indices, or ``rows`` rows when given; the block size is
    part of the draw (numpy may discard a buffered half-word between calls), so a measure keeps
    its block size to keep its intervals.
    """
    sizes = blocks(resamples, n) if rows is None else [min(rows, resamples - s) for s in range(0, resamples, rows)]
    for k in sizes:
        yield rng.integers(0, n, size=(k, n))


def resampled_means(values: np.ndarray, rng: np.random.Generator, resamples: int, *,
                    rows: int | None = None) -> np.ndarray:
    """Means over axis 0 of ``resamples`` bootstrap resamples of ``values`` (1-D or rows x columns)."""
    out = [values[idx].mean(axis=1) for idx in resample_indices(len(values), resamples, rng, rows=rows)]
    if not out:
        return np.empty((0, *values.shape[1:]))
    return np.concatenate(out)


def percentile_interval(samples: np.ndarray, level: float = CI_LEVEL) -> tuple[float | None, float | None]:
    """The central ``level`` percentile interval of the finite samples; (None, None) if there are none."""
    samples = np.asarray(samples, dtype=float)
    samples = samples[np.isfinite(samples)]
    if samples.size == 0:
        return None, None
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(samples, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def sigmoid(z: np.ndarray | float) -> np.ndarray:
    """The logistic function, stable for large ``|z|``."""
    from scipy.special import expit

    return np.asarray(expit(np.asarray(z, dtype=float)))


def auroc(labels: Sequence[int] | np.ndarray, scores: Sequence[float] | np.ndarray) -> float | None:
    """Area under the ROC curve (tied scores count half); None unless both classes are present."""
    y = np.asarray(labels, dtype=int)
    if y.size == 0 or y.min() == y.max():
        return None
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y, np.asarray(scores, dtype=float)))


def roc_curve(labels: Sequence[int], scores: Sequence[float]) -> tuple[list[float], list[float]]:
    """False and true positive rates at every distinct threshold, from (0, 0) to (1, 1)."""
    y = np.asarray(labels, dtype=int)
    if y.size == 0 or y.min() == y.max():
        return [], []
    from sklearn.metrics import roc_curve

    fpr, tpr, _ = roc_curve(y, np.asarray(scores, dtype=float), drop_intermediate=False)
    return [float(v) for v in fpr], [float(v) for v in tpr]


def bootstrap_interval(values: Sequence[float], *, seed: int, labels: Sequence[str],
                       resamples: int) -> tuple[float | None, float | None, float | None]:
    """(mean, low, high) of ``values`` by the percentile bootstrap; Nones when empty."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return None, None, None
    lo, hi = percentile_interval(resampled_means(arr, rng_for(seed, *labels), resamples))
    return float(arr.mean()), lo, hi


def wilson(hits: int, total: int, level: float = CI_LEVEL) -> tuple[float | None, float | None]:
    """Wilson score interval of hits/total; (None, None) when total is 0."""
    if total <= 0:
        return None, None
    from scipy.stats import binomtest

    ci = binomtest(int(hits), int(total)).proportion_ci(confidence_level=level, method="wilson")
    return float(ci.low), float(ci.high)


def is_small(n: int) -> bool:
    return 0 < n < SMALL_N


def small_mark(n: int) -> str:
    """The visible flag printed beside an estimate from fewer than SMALL_N units ('' otherwise)."""
    return f" ({SMALL_N_MARK}={n})" if is_small(n) else ""


def zero_width(low: float | None, high: float | None, n: int) -> bool:
    return n > 0 and low is not None and high is not None and high - low == 0.0


@dataclass(frozen=True)
class Estimate:
    """A proportion, mean or difference (as a fraction, not percent) with a bootstrap interval."""

    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0

    @classmethod
    def bootstrap(cls, values: Sequence[float], *, seed: int, labels: Sequence[str],
                  resamples: int) -> Estimate:
        """The mean of ``values`` with its percentile-bootstrap interval (``bootstrap_interval``)."""
        value, low, high = bootstrap_interval(values, seed=seed, labels=labels, resamples=resamples)
        return cls(value, low, high, len(values))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Rate:
    """A share of counted events, hits out of total, with its Wilson interval."""

    hits: int
    total: int

    @property
    def value(self) -> float | None:
        return self.hits / self.total if self.total else None

    @property
    def interval(self) -> tuple[float | None, float | None]:
        """Wilson score interval (``wilson``)."""
        return wilson(self.hits, self.total)

    @property
    def small(self) -> bool:
        return is_small(self.total)

    def as_dict(self) -> dict[str, Any]:
        low, high = self.interval
        return {"hits": self.hits, "total": self.total, "value": self.value, "low": low, "high": high,
                "interval": "wilson", "small_n": self.small}


def resample_counts(n: int, resamples: int, rng: np.random.Generator, *, rows: int) -> Iterator[np.ndarray]:
    """(k, n) blocks of bootstrap case counts: how often each of ``n`` units is drawn per resample.

    A resample of a fitted model is the fit with these counts as case weights. The draws are
    those of ``resample_indices`` with the same ``rows``.
    """
    for idx in resample_indices(n, resamples, rng, rows=rows):
        k = len(idx)
        flat = idx + (np.arange(k) * n)[:, None]
        yield np.bincount(flat.ravel(), minlength=k * n).reshape(k, n).astype(float)


def fit_logistic(x: np.ndarray, y: np.ndarray, *, l2: float = 1e-3, max_iter: int = 100,
                 weights: np.ndarray | None = None, start: np.ndarray | None = None) -> np.ndarray:
    """Intercept and coefficients of a logistic regression by Newton-Raphson.

    ``weights`` may be one row of case weights or a (B, n) matrix of them, in which case B fits
    run at once and a (B, k + 1) array comes back: a bootstrap resample is exactly a fit with
    multinomial case counts as weights, so thousands of resamples cost a few batched solves
    instead of thousands of separate fits. The weak L2 penalty (intercept unpenalised) keeps a
    fit finite when a resample separates the classes (a type seen only in failures) and leaves
    well-identified coefficients where they are. ``start`` (the full-sample fit, for resamples)
    makes Newton converge in a few steps instead of a dozen.
    """
    design = np.column_stack([np.ones(len(x)), x])
    w = np.ones((1, len(x))) if weights is None else np.atleast_2d(np.asarray(weights, dtype=float))
    k = design.shape[1]
    ridge = np.full(k, l2)
    ridge[0] = 0.0
    beta = np.zeros((w.shape[0], k)) if start is None else np.tile(np.asarray(start, dtype=float),
                                                                   (w.shape[0], 1))
    active = np.ones(w.shape[0], dtype=bool)
    # Each case's outer product, flattened: every Hessian of the batch is then one matrix product.
    outer = np.einsum("ni,nj->nij", design, design).reshape(len(design), k * k)
    for _ in range(max_iter):
        b, wa = beta[active], w[active]
        p = sigmoid(b @ design.T)
        grad = (wa * (y - p)) @ design - ridge * b
        curv = wa * p * (1 - p)
        hess = (curv @ outer).reshape(-1, k, k) + np.diag(ridge + 1e-9)
        step = np.linalg.solve(hess, grad[..., None])[..., 0]
        beta[active] = b + step
        done = np.max(np.abs(step), axis=1) < 1e-7
        idx = np.flatnonzero(active)
        active[idx[done]] = False
        if not active.any():
            break
    return beta[0] if weights is None or np.ndim(weights) == 1 else beta


def effects_at_mean(beta: np.ndarray, x_mean: np.ndarray, n_effects: int) -> np.ndarray:
    """Per fit, the change in probability from one more unit of each of the first ``n_effects``
    covariates at the mean covariates: sigma(eta_bar + b_k) - sigma(eta_bar)."""
    beta = np.atleast_2d(beta)
    eta_bar = beta[:, 0] + beta[:, 1:] @ x_mean
    return sigmoid(eta_bar[:, None] + beta[:, 1:1 + n_effects]) - sigmoid(eta_bar)[:, None]


def group_split(groups: Sequence[object], held_out: Sequence[int], seed: int) -> list[list[int]]:
    """Indices of the items in each part of a split where a group never straddles two parts.

    ``held_out[k]`` is the number of groups that go to part ``k + 1``; part 0 gets the rest. The
    rule, fixed so that splits (and every figure computed on them) stay the same from release to
    release: the distinct groups (as strings) are sorted, shuffled by ``random.Random(seed)``,
    and cut in order into part 0, part 1, ... So the same seed and the same set of groups give
    the same parts whatever the order of the items; indices keep the items' order in each part.
    (scikit-learn's ``GroupShuffleSplit`` draws another permutation for the same seed, which
    would move the held-out sets that the published predictor figures were measured on.)
    """
    labels = [str(g) for g in groups]
    distinct = sorted(set(labels))
    total = sum(held_out)
    if any(k < 0 for k in held_out) or (total > 0 and total >= len(distinct)):
        raise ValueError(f"cannot hold out {list(held_out)} of {len(distinct)} group(s) and keep one for part 0")
    random.Random(seed).shuffle(distinct)
    part_of: dict[str, int] = {}
    start = len(distinct) - total
    for g in distinct[:start]:
        part_of[g] = 0
    for k, n in enumerate(held_out, start=1):
        for g in distinct[start:start + n]:
            part_of[g] = k
        start += n
    parts: list[list[int]] = [[] for _ in range(len(held_out) + 1)]
    for i, g in enumerate(labels):
        parts[part_of[g]].append(i)
    return parts

"""Scoring diagnosers against ground truth, with bootstrap intervals.

Definitions follow DESIGN 6: over failed, fault-triggered episodes, the true fault is the first
injected fault that changed what the agent saw (type and step); type accuracy compares the
predicted type, step accuracy the predicted step, joint both. Intervals resample episodes.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentchaos_otel.diagnosers.base import Diagnoser, Diagnosis, diagnose_episodes
from agentchaos_otel.diagnosers.published import PUBLISHED, TRUNCATION_FOUND
from agentchaos_otel.diagnosers.taxonomy import NONE_FOUND
from agentchaos_otel.stats import resampled_means
from agentchaos_otel.store.model import EpisodeTrace, FaultLabel


def ground_truth(episode: EpisodeTrace) -> FaultLabel | None:
    """First changed fault of an unblinded episode."""
    faults = episode.faults()
    return min(faults, key=lambda f: f.step) if faults else None


def evaluation_set(episodes: Sequence[EpisodeTrace]) -> list[EpisodeTrace]:
    """Failed episodes in which at least one fault changed what the agent saw."""
    return [ep for ep in episodes if ep.success is False and ground_truth(ep) is not None]


@dataclass(frozen=True)
class Interval:
    value: float
    low: float
    high: float

    def to_dict(self) -> dict[str, float]:
        return {"value": round(self.value, 4), "low": round(self.low, 4), "high": round(self.high, 4)}


@dataclass
class Scores:
    method: str
    n: int
    type_accuracy: Interval
    step_accuracy: Interval
    joint_accuracy: Interval
    per_type: dict[str, dict[str, float]] = field(default_factory=dict)
    confusion: dict[str, dict[str, int]] = field(default_factory=dict)
    truncation_found: float | None = None
    none_found: int = 0

    def to_dict(self) -> dict[str, Any]:
        pub = PUBLISHED.get(self.method)
        return {
            "method": self.method, "n": self.n,
            "type_accuracy": self.type_accuracy.to_dict(), "step_accuracy": self.step_accuracy.to_dict(),
            "joint_accuracy": self.joint_accuracy.to_dict(), "per_type": self.per_type,
            "confusion": self.confusion, "truncation_found": self.truncation_found,
            "none_found": self.none_found,
            "published": ({"type_accuracy": pub.type_accuracy / 100, "step_accuracy": pub.step_accuracy / 100,
                           "n": pub.n, "truncation_found": TRUNCATION_FOUND / 100} if pub else None),
        }


def _bootstrap(flags: Sequence[tuple[bool, bool, bool]], n_boot: int, seed: int) -> list[Interval]:
    """Point estimates and percentile intervals from resampling episodes with replacement."""
    n = len(flags)
    if n == 0:
        return [Interval(0.0, 0.0, 0.0)] * 3
    arr = np.asarray(flags, dtype=float)
    point = arr.mean(axis=0)
    if n_boot <= 0:
        return [Interval(float(p), float(p), float(p)) for p in point]
    means = resampled_means(arr, np.random.default_rng(seed), n_boot, rows=250)
    lo, hi = np.percentile(means, [2.5, 97.5], axis=0)
    return [Interval(float(point[i]), float(lo[i]), float(hi[i])) for i in range(3)]


def score(method: str, truths: Mapping[str, FaultLabel], diagnoses: Sequence[Diagnosis], *,
          n_boot: int = 2000, seed: int = 0) -> Scores:
    """Scores of one method's diagnoses against the truth of the same episodes (by trace id)."""
    flags: list[tuple[bool, bool, bool]] = []
    confusion: dict[str, Counter[str]] = defaultdict(Counter)
    by_type: dict[str, list[bool]] = defaultdict(list)
    none = 0
    for d in diagnoses:
        truth = truths.get(d.trace_id)
        if truth is None:
            continue
        t_ok = d.fault_type == truth.fault_type
        s_ok = d.step is not None and d.step == truth.step
        flags.append((t_ok, s_ok, t_ok and s_ok))
        confusion[truth.fault_type][d.fault_type] += 1
        by_type[truth.fault_type].append(t_ok)
        none += d.fault_type == NONE_FOUND
    type_i, step_i, joint_i = _bootstrap(flags, n_boot, seed)
    per_type = {t: {"n": len(v), "accuracy": round(sum(v) / len(v), 4)} for t, v in sorted(by_type.items())}
    trunc = by_type.get("truncate")
    return Scores(method, len(flags), type_i, step_i, joint_i, per_type,
                  {t: dict(c) for t, c in sorted(confusion.items())},
                  round(sum(trunc) / len(trunc), 4) if trunc else None, none)


def evaluate(episodes: Sequence[EpisodeTrace], diagnosers: Sequence[Diagnoser], *, n_boot: int = 2000,
             seed: int = 0) -> tuple[list[Scores], dict[str, list[Diagnosis]]]:
    """Score each diagnoser on the failed, fault-triggered episodes among ``episodes``."""
    evald = evaluation_set(episodes)
    truths = {ep.trace_id: t for ep in evald if (t := ground_truth(ep)) is not None}
    scores, all_diag = [], {}
    for d in diagnosers:
        diag = diagnose_episodes(d, evald)
        all_diag[d.name] = diag
        scores.append(score(d.name, truths, diag, n_boot=n_boot, seed=seed))
    return scores, all_diag

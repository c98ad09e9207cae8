"""Scoring diagnosers against ground truth, with bootstrap intervals.

Definitions follow DESIGN 6: over failed, fault-triggered episodes, the true fault is the first
injected fault that changed what the agent saw (type and step); type accuracy compares the
predicted type, step accuracy the predicted step, joint both. Intervals resample episodes.
Ground truth comes from the trace (``agentchaos.fault.*``) or from the user's label file
(``diagnosers.truth``). Beside accuracy: the false-blame rate (a fault named on an episode known
to be clean) on clean successful episodes and on untriggered ones (a fault was planned but none
changed anything), and a reliability table (confidence bins of the raw verdicts vs accuracy),
which is what the abstention threshold ``base.CONFIDENCE_MIN`` is read from.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentchaos_otel.published import DIAGNOSIS as PUBLISHED
from agentchaos_otel.published import TRUNCATION_FOUND
from agentchaos_otel.records import EpisodeTrace, FaultLabel
from agentchaos_otel.stats import percentile_interval, resampled_means
from diagnosers.base import CONFIDENCE_MIN, Diagnoser, Diagnosis, abstain, diagnose_episodes
from diagnosers.taxonomy import NONE_FOUND


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
    per_target: dict[str, dict[str, float]] = field(default_factory=dict)
    false_blame_success: Interval | None = None
    n_clean_success: int = 0
    false_blame_untriggered: Interval | None = None
    n_untriggered: int = 0
    reliability: list[dict[str, float]] = field(default_factory=list)
    min_confidence: float = CONFIDENCE_MIN

    def to_dict(self) -> dict[str, Any]:
        pub = PUBLISHED.get(self.method)
        return {
            "method": self.method, "n": self.n,
            "type_accuracy": self.type_accuracy.to_dict(), "step_accuracy": self.step_accuracy.to_dict(),
            "joint_accuracy": self.joint_accuracy.to_dict(), "per_type": self.per_type,
            "confusion": self.confusion, "truncation_found": self.truncation_found,
            "none_found": self.none_found, "per_target": self.per_target,
            "false_blame_success": self.false_blame_success.to_dict() if self.false_blame_success else None,
            "n_clean_success": self.n_clean_success,
            "false_blame_untriggered": (self.false_blame_untriggered.to_dict()
                                        if self.false_blame_untriggered else None),
            "n_untriggered": self.n_untriggered, "reliability": self.reliability,
            "min_confidence": self.min_confidence,
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
    bounds = [percentile_interval(means[:, i]) for i in range(3)]
    return [Interval(float(point[i]), float(lo), float(hi)) for i, (lo, hi) in enumerate(bounds)]


def score(method: str, truths: Mapping[str, FaultLabel], diagnoses: Sequence[Diagnosis], *,
          n_boot: int = 2000, seed: int = 0) -> Scores:
    """Scores of one method's diagnoses against the truth of the same episodes (by trace id)."""
    flags: list[tuple[bool, bool, bool]] = []
    confusion: dict[str, Counter[str]] = defaultdict(Counter)
    by_type: dict[str, list[bool]] = defaultdict(list)
    by_target: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
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
        by_target[truth.target or "-"].append((t_ok, s_ok))
        none += d.fault_type == NONE_FOUND
    type_i, step_i, joint_i = _bootstrap(flags, n_boot, seed)
    per_type = {t: {"n": len(v), "accuracy": round(sum(v) / len(v), 4)} for t, v in sorted(by_type.items())}
    trunc = by_type.get("truncate")
    per_target = {t: {"n": len(v), "type_accuracy": round(sum(a for a, _ in v) / len(v), 4),
                      "step_accuracy": round(sum(b for _, b in v) / len(v), 4)}
                  for t, v in sorted(by_target.items())}
    return Scores(method, len(flags), type_i, step_i, joint_i, per_type,
                  {t: dict(c) for t, c in sorted(confusion.items())},
                  round(sum(trunc) / len(trunc), 4) if trunc else None, none, per_target)


def rate(flags: Sequence[bool], n_boot: int, seed: int) -> Interval:
    """A proportion with a percentile bootstrap interval."""
    return _bootstrap([(f, f, f) for f in flags], n_boot, seed)[0]


RELIABILITY_BINS = (0.0, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0001)


def reliability(truths: Mapping[str, FaultLabel], raw: Sequence[Diagnosis]) -> list[dict[str, float]]:
    """Per confidence bin of the raw verdicts (before abstaining): how many, and how often the
    named type (and type and step) was right. A calibrated diagnoser's accuracy tracks its bin."""
    out = []
    for lo, hi in zip(RELIABILITY_BINS, RELIABILITY_BINS[1:], strict=False):
        hits = [(d.fault_type == t.fault_type, d.fault_type == t.fault_type and d.step == t.step)
                for d in raw if d.found and (t := truths.get(d.trace_id)) is not None and lo <= d.confidence < hi]
        if hits:
            out.append({"low": lo, "high": min(hi, 1.0), "n": len(hits),
                        "type_accuracy": round(sum(a for a, _ in hits) / len(hits), 4),
                        "joint_accuracy": round(sum(b for _, b in hits) / len(hits), 4)})
    return out


def _planned_faults(ep: EpisodeTrace) -> bool:
    return ep.condition not in (None, "", "none")


def clean_sets(episodes: Sequence[EpisodeTrace], truths: Mapping[str, FaultLabel | None] | None
               ) -> tuple[list[EpisodeTrace], list[EpisodeTrace]]:
    """(clean successful, untriggered): episodes no fault changed, that succeeded; and failed or
    fault-planned episodes in which none changed anything (a label file's clean failures)."""
    if truths is None:
        clean = [ep for ep in episodes if ground_truth(ep) is None]
    else:
        clean = [ep for ep in episodes if ep.trace_id in truths and truths[ep.trace_id] is None]
    success = [ep for ep in clean if ep.success is True]
    untriggered = [ep for ep in clean if ep.success is not True or (truths is None and _planned_faults(ep))]
    return success, untriggered


def evaluate(episodes: Sequence[EpisodeTrace], diagnosers: Sequence[Diagnoser], *, n_boot: int = 2000,
             seed: int = 0, truths: Mapping[str, FaultLabel | None] | None = None,
             min_confidence: float = CONFIDENCE_MIN) -> tuple[list[Scores], dict[str, list[Diagnosis]]]:
    """Score each diagnoser on the failed, fault-triggered episodes among ``episodes``, against
    the trace's ground truth or ``truths`` (trace id -> label, None for a labelled clean episode)."""
    if truths is None:
        evald = evaluation_set(episodes)
        found = {ep.trace_id: t for ep in evald if (t := ground_truth(ep)) is not None}
    else:
        evald = [ep for ep in episodes if ep.success is False and truths.get(ep.trace_id) is not None]
        found = {ep.trace_id: t for ep in evald if (t := truths[ep.trace_id]) is not None}
    success, untriggered = clean_sets(episodes, truths)
    scores, all_diag = [], {}
    for d in diagnosers:
        raw = diagnose_episodes(d, evald, min_confidence=0)
        diag = [abstain(x, min_confidence) for x in raw]
        all_diag[d.name] = diag
        s = score(d.name, found, diag, n_boot=n_boot, seed=seed)
        s.reliability = reliability(found, raw)
        s.min_confidence = min_confidence
        for eps, attr in ((success, "success"), (untriggered, "untriggered")):
            if eps:
                blamed = [x.found for x in diagnose_episodes(d, eps, min_confidence=min_confidence)]
                setattr(s, f"false_blame_{attr}", rate(blamed, n_boot, seed))
                setattr(s, "n_clean_success" if attr == "success" else "n_untriggered", len(eps))
        scores.append(s)
    return scores, all_diag

"""Scoring diagnosers against ground truth, with bootstrap intervals.

Definitions follow docs/design.md 6: over failed episodes with a root cause, the true fault is the first
injected fault that changed what the agent saw and was not absorbed (an SDK retry or a repeated
tool call that then answered: ``diagnosers.injected``, docs/taxonomy.md); type accuracy compares the
predicted type, step accuracy the predicted step, joint both. Intervals resample episodes.
Ground truth comes from the trace (``agentchaos.fault.*``) or from the user's label file
(``diagnosers.truth``). Every episode has a category (docs/taxonomy.md): ``faulted_failure``,
``clean_success``, ``benign_success`` (succeeded although errors happened on the way) or
``unfaulted_failure`` (failed with no fault of the API or tools, or only with faults that were
absorbed), from the label file's ``category`` column or, for injected corpora, from the outcome,
whether a fault changed what the agent saw and whether one of them is a root cause. False
blame (a fault named where there is none) is reported per category; for successes also with
the outcome hidden from the diagnoser, which shows what the evidence alone says (a diagnoser
that knows an episode succeeded names no root cause). The reliability table (confidence bins
of the raw verdicts vs accuracy) and the threshold sweep (accuracy, coverage and false blame at
each abstention threshold) are what ``base.CONFIDENCE_MIN`` is chosen from.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from agentchaos_otel.published import DIAGNOSIS as PUBLISHED
from agentchaos_otel.published import TRUNCATION_FOUND
from agentchaos_otel.records import EpisodeTrace, FaultLabel
from agentchaos_otel.stats import percentile_interval, resampled_means
from diagnosers.base import CONFIDENCE_MIN, Diagnoser, Diagnosis, abstain, diagnose_episodes
from diagnosers.injected import ground_truth
from diagnosers.taxonomy import BENIGN_SUCCESS, CLEAN_SUCCESS, FAULTED, NONE_FOUND, UNFAULTED


def evaluation_set(episodes: Sequence[EpisodeTrace]) -> list[EpisodeTrace]:
    """Failed episodes with a root cause: a fault that changed what the agent saw and was not absorbed."""
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
    false_blame: dict[str, Interval] = field(default_factory=dict)  # per category (BLAME_CATEGORIES)
    false_blame_hidden: dict[str, Interval] = field(default_factory=dict)  # successes, outcome hidden
    n_by_category: dict[str, int] = field(default_factory=dict)
    reliability: list[dict[str, float]] = field(default_factory=list)
    thresholds: list[dict[str, float]] = field(default_factory=list)
    per_form: dict[str, dict[str, float]] = field(default_factory=dict)
    min_confidence: float = CONFIDENCE_MIN

    def to_dict(self) -> dict[str, Any]:
        pub = PUBLISHED.get(self.method)
        return {
            "method": self.method, "n": self.n,
            "type_accuracy": self.type_accuracy.to_dict(), "step_accuracy": self.step_accuracy.to_dict(),
            "joint_accuracy": self.joint_accuracy.to_dict(), "per_type": self.per_type,
            "confusion": self.confusion, "truncation_found": self.truncation_found,
            "none_found": self.none_found, "per_target": self.per_target,
            "false_blame": {k: v.to_dict() for k, v in self.false_blame.items()},
            "false_blame_outcome_hidden": {k: v.to_dict() for k, v in self.false_blame_hidden.items()},
            "n_by_category": self.n_by_category, "reliability": self.reliability,
            "thresholds": self.thresholds, "per_form": self.per_form,
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
    by_form: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for d in diagnoses:
        truth = truths.get(d.trace_id)
        if truth is None:
            continue
        if truth.experiment:
            by_form[truth.experiment].append((d.fault_type == truth.fault_type,
                                              d.step is not None and d.step == truth.step))
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
    out = Scores(method, len(flags), type_i, step_i, joint_i, per_type,
                 {t: dict(c) for t, c in sorted(confusion.items())},
                 round(sum(trunc) / len(trunc), 4) if trunc else None, none, per_target)
    out.per_form = {f: {"n": len(v), "type_accuracy": round(sum(a for a, _ in v) / len(v), 4),
                        "step_accuracy": round(sum(b for _, b in v) / len(v), 4)} for f, v in sorted(by_form.items())}
    return out


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


BLAME_CATEGORIES: tuple[str, ...] = (CLEAN_SUCCESS, BENIGN_SUCCESS, UNFAULTED)
THRESHOLDS: tuple[float, ...] = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def derive_category(ep: EpisodeTrace, label: FaultLabel | None, *, from_labels: bool) -> str | None:
    """An episode's category when no label file gives one: from its outcome and its truth (a
    fault that changed what the agent saw, or a labelled root cause). None: outcome unknown."""
    if ep.success is None:
        return None
    fault = label is not None if from_labels else ep.triggered
    if ep.success:
        return BENIGN_SUCCESS if fault else CLEAN_SUCCESS
    return FAULTED if label is not None else UNFAULTED


def episode_categories(episodes: Sequence[EpisodeTrace], truths: Mapping[str, FaultLabel | None] | None,
                       given: Mapping[str, str] | None = None) -> dict[str, str]:
    """trace id -> category: the label file's ``category`` where it gives one, else derived."""
    out: dict[str, str] = {}
    for ep in episodes:
        if given and ep.trace_id in given:
            out[ep.trace_id] = given[ep.trace_id]
            continue
        if truths is None:
            cat = derive_category(ep, ground_truth(ep), from_labels=False)
        elif ep.trace_id in truths:
            cat = derive_category(ep, truths[ep.trace_id], from_labels=True)
        else:
            cat = None
        if cat is not None:
            out[ep.trace_id] = cat
    return out


def outcome_hidden(ep: EpisodeTrace) -> EpisodeTrace:
    """The episode with its outcome unknown, so a diagnosis rests on the evidence alone."""
    return replace(ep, success=None)


def _blame_rates(raw: Sequence[Diagnosis], threshold: float) -> list[bool]:
    return [d.found and d.confidence >= threshold for d in raw]


def threshold_sweep(truths: Mapping[str, FaultLabel], raw: Sequence[Diagnosis],
                    blame_raw: Mapping[str, Sequence[Diagnosis]]) -> list[dict[str, float]]:
    """At each abstention threshold: type and joint accuracy over the scored episodes (an
    abstention counts as wrong), the share answered, and the false blame each category buys."""
    out = []
    scored = [(d, t) for d in raw if (t := truths.get(d.trace_id)) is not None]
    for th in THRESHOLDS:
        kept = [(d, t) for d, t in scored if d.found and d.confidence >= th]
        row: dict[str, float] = {
            "threshold": th, "n": len(scored),
            "answered": round(len(kept) / len(scored), 4) if scored else 0.0,
            "type_accuracy": round(sum(d.fault_type == t.fault_type for d, t in kept) / len(scored), 4)
            if scored else 0.0,
            "joint_accuracy": round(sum(d.fault_type == t.fault_type and d.step == t.step for d, t in kept)
                                    / len(scored), 4) if scored else 0.0,
        }
        for cat, diags in blame_raw.items():
            flags = _blame_rates(diags, th)
            row[f"false_blame_{cat}"] = round(sum(flags) / len(flags), 4) if flags else float("nan")
        out.append(row)
    return out


def evaluate(episodes: Sequence[EpisodeTrace], diagnosers: Sequence[Diagnoser], *, n_boot: int = 2000,
             seed: int = 0, truths: Mapping[str, FaultLabel | None] | None = None,
             categories: Mapping[str, str] | None = None,
             min_confidence: float = CONFIDENCE_MIN) -> tuple[list[Scores], dict[str, list[Diagnosis]]]:
    """Score each diagnoser on the failed, fault-triggered episodes among ``episodes``, against
    the trace's ground truth or ``truths`` (trace id -> label, None for a labelled clean episode),
    and its false blame on every other category (``categories``: a label file's, else derived)."""
    if truths is None:
        evald = evaluation_set(episodes)
        found = {ep.trace_id: t for ep in evald if (t := ground_truth(ep)) is not None}
    else:
        evald = [ep for ep in episodes if ep.success is False and truths.get(ep.trace_id) is not None]
        found = {ep.trace_id: t for ep in evald if (t := truths[ep.trace_id]) is not None}
    cats = episode_categories(episodes, truths, categories)
    if categories:  # a labelled category decides which episodes are scored for accuracy
        evald = [ep for ep in evald if cats.get(ep.trace_id, FAULTED) == FAULTED]
        found = {k: v for k, v in found.items() if cats.get(k, FAULTED) == FAULTED}
    by_cat = {c: [ep for ep in episodes if cats.get(ep.trace_id) == c] for c in BLAME_CATEGORIES}
    scores, all_diag = [], {}
    for d in diagnosers:
        raw = diagnose_episodes(d, evald, min_confidence=0)
        diag = [abstain(x, min_confidence) for x in raw]
        all_diag[d.name] = diag
        s = score(d.name, found, diag, n_boot=n_boot, seed=seed)
        s.reliability = reliability(found, raw)
        s.min_confidence = min_confidence
        blame_raw: dict[str, list[Diagnosis]] = {}
        for cat, eps in by_cat.items():
            s.n_by_category[cat] = len(eps)
            if not eps:
                continue
            got = diagnose_episodes(d, eps, min_confidence=0)
            s.false_blame[cat] = rate(_blame_rates(got, min_confidence), n_boot, seed)
            blame_raw[cat] = got
            if cat in (CLEAN_SUCCESS, BENIGN_SUCCESS):
                hidden = diagnose_episodes(d, [outcome_hidden(ep) for ep in eps], min_confidence=0)
                s.false_blame_hidden[cat] = rate(_blame_rates(hidden, min_confidence), n_boot, seed)
                blame_raw[f"{cat}_outcome_hidden"] = hidden
        s.thresholds = threshold_sweep(found, raw, blame_raw)
        scores.append(s)
    return scores, all_diag

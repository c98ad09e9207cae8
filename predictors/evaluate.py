"""Episode-level evaluation of failure predictors and the three-feature-set comparison.

Measures follow docs/design.md section 6: every step prefix is scored; an episode's score is its
highest prefix score (it alarms when any prefix reaches the threshold); AUROC is computed over
those episode scores with failure as the positive class; detection is the share of failed test
episodes that alarm at the threshold chosen on validation; lead is counted from the first alarm
to the episode's end. Intervals are percentile bootstraps over test episodes with a fixed seed.

Where a measure has no meaning on the data (one outcome only, no alarms, no logprobs) it is
reported as missing with the reason, never as a number.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentchaos_otel import published
from agentchaos_otel.records import EpisodeTrace
from agentchaos_otel.stats import auroc, percentile_interval, resample_indices, roc_curve
from predictors.estimator import train
from predictors.extract import episode_simulated
from predictors.features import FEATURE_SETS, has_logprobs, prefix_features
from predictors.model import (
    DEFAULT_FALSE_ALARM,
    DEFAULT_FRACTIONS,
    FailurePredictor,
    PredictorDataError,
    Split,
    labelled,
    split_by_task,
)

DEFAULT_BOOTSTRAP = 2000


@dataclass(frozen=True)
class ScoredEpisode:
    trace_id: str
    task_id: str | None
    failed: bool
    scores: tuple[float, ...]
    is_llm: tuple[bool, ...]

    @property
    def max_score(self) -> float:
        return max(self.scores)

    def first_alarm(self, threshold: float) -> int | None:
        return next((i for i, s in enumerate(self.scores) if s >= threshold), None)

    def lead_steps(self, threshold: float) -> int | None:
        """Steps after the first alarming one (0 when it fires on the last step)."""
        i = self.first_alarm(threshold)
        return None if i is None else len(self.scores) - 1 - i

    def lead_llm_calls(self, threshold: float) -> int | None:
        i = self.first_alarm(threshold)
        return None if i is None else sum(self.is_llm[i + 1:])


def score_episodes(predictor: FailurePredictor, episodes: Sequence[EpisodeTrace]) -> list[ScoredEpisode]:
    out = []
    for e in labelled(episodes):
        steps = sorted(e.steps, key=lambda s: s.step)
        out.append(ScoredEpisode(e.trace_id, e.task_id, e.success is False,
                                 tuple(predictor.score_prefixes(e)), tuple(s.kind == "llm" for s in steps)))
    return out


@dataclass
class Metrics:
    episodes: int
    failures: int
    auroc: float | None
    detection: float | None
    false_alarm: float | None
    median_lead_steps: float | None
    median_lead_llm_calls: float | None
    notes: list[str] = field(default_factory=list)


def _median(values: list[int]) -> float | None:
    return float(statistics.median(values)) if values else None


def compute_metrics(scored: Sequence[ScoredEpisode], threshold: float) -> Metrics:
    failed = [e for e in scored if e.failed]
    normal = [e for e in scored if not e.failed]
    notes = []
    area = auroc([int(e.failed) for e in scored], [e.max_score for e in scored])
    if area is None:
        notes.append("AUROC undefined: the episodes have only one outcome "
                     f"({len(failed)} failed, {len(normal)} successful)")
    detected = [e for e in failed if e.first_alarm(threshold) is not None]
    leads = [e.lead_steps(threshold) for e in detected]
    leads_llm = [e.lead_llm_calls(threshold) for e in detected]
    return Metrics(
        episodes=len(scored), failures=len(failed), auroc=area,
        detection=len(detected) / len(failed) if failed else None,
        false_alarm=(sum(e.first_alarm(threshold) is not None for e in normal) / len(normal)
                     if normal else None),
        median_lead_steps=_median([v for v in leads if v is not None]),
        median_lead_llm_calls=_median([v for v in leads_llm if v is not None]),
        notes=notes,
    )


def bootstrap_intervals(scored: Sequence[ScoredEpisode], threshold: float, n_boot: int = DEFAULT_BOOTSTRAP,
                        seed: int = 0, level: float = 0.95) -> dict[str, tuple[float, float] | None]:
    """Percentile intervals over episode resamples; resamples where a measure is undefined are skipped."""
    keys = ("auroc", "detection", "false_alarm", "median_lead_steps")
    if n_boot <= 0 or not scored:
        return dict.fromkeys(keys)
    y = np.asarray([int(e.failed) for e in scored])
    s = np.asarray([e.max_score for e in scored])
    alarm = np.asarray([e.first_alarm(threshold) is not None for e in scored])
    lead = np.asarray([-1 if (v := e.lead_steps(threshold)) is None else v for e in scored])
    samples: dict[str, list[float]] = {k: [] for k in keys}
    rng = np.random.default_rng(seed)
    # One resample per block: AUROC and medians are not batched means.
    for block in resample_indices(len(scored), n_boot, rng, rows=1):
        idx = block[0]
        yb, sb, ab, lb = y[idx], s[idx], alarm[idx], lead[idx]
        area = auroc(yb, sb)
        if area is not None:
            samples["auroc"].append(area)
        pos = yb == 1
        if pos.any():
            samples["detection"].append(float(ab[pos].mean()))
            hits = lb[pos & ab]
            if len(hits):
                samples["median_lead_steps"].append(float(np.median(hits)))
        if (~pos).any():
            samples["false_alarm"].append(float(ab[~pos].mean()))
    out: dict[str, tuple[float, float] | None] = dict.fromkeys(keys)
    for k, v in samples.items():
        lo, hi = percentile_interval(np.asarray(v), level) if len(v) >= 10 else (None, None)
        out[k] = (lo, hi) if lo is not None and hi is not None else None
    return out


@dataclass
class Evaluation:
    feature_set: str
    threshold: float
    metrics: Metrics
    intervals: dict[str, tuple[float, float] | None]
    coefficients: list[tuple[str, float]]
    roc: tuple[list[float], list[float]]
    leads: list[int]
    validation_false_alarm: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"feature_set": self.feature_set, "threshold": self.threshold,
                "metrics": self.metrics.__dict__, "intervals": self.intervals,
                "coefficients": dict(self.coefficients), "leads": self.leads,
                "validation_false_alarm": self.validation_false_alarm}


def evaluate_predictor(predictor: FailurePredictor, episodes: Sequence[EpisodeTrace], *,
                       n_boot: int = DEFAULT_BOOTSTRAP, seed: int = 0) -> Evaluation:
    scored = score_episodes(predictor, episodes)
    if not scored:
        raise PredictorDataError("no episode with a known outcome and at least one step to evaluate on")
    metrics = compute_metrics(scored, predictor.threshold)
    labels = [int(e.failed) for e in scored]
    maxima = [e.max_score for e in scored]
    leads = [v for e in scored if e.failed and (v := e.lead_steps(predictor.threshold)) is not None]
    return Evaluation(predictor.feature_set, predictor.threshold, metrics,
                      bootstrap_intervals(scored, predictor.threshold, n_boot, seed),
                      predictor.coefficients(), roc_curve(labels, maxima), leads,
                      predictor.meta.get("validation_false_alarm"))


@dataclass
class Comparison:
    """All three feature sets trained on one split and evaluated on the same test episodes."""

    split: Split
    evaluations: dict[str, Evaluation]
    skipped: dict[str, str]
    notes: dict[str, str]
    simulated: bool
    entropy_by_outcome: dict[str, float | None]
    false_alarm_target: float

    def to_dict(self) -> dict[str, Any]:
        return {"simulated": self.simulated, "split": self.split.summary(),
                "false_alarm_target": self.false_alarm_target,
                "evaluations": {k: v.to_dict() for k, v in self.evaluations.items()},
                "skipped": self.skipped, "notes": self.notes, "entropy_by_outcome": self.entropy_by_outcome,
                "published": {k: v.__dict__ for k, v in published.PREDICTOR.items()},
                "published_source": published.PREDICTOR_SOURCE}


def is_simulated(episodes: Sequence[EpisodeTrace]) -> bool:
    """True when any episode or step says it came from the simulated model."""
    return any(map(episode_simulated, episodes))


def entropy_by_outcome(episodes: Sequence[EpisodeTrace]) -> dict[str, float | None]:
    """Mean token entropy of successful vs failed episodes and the mean covered mass, as the study reports."""
    by: dict[str, list[float]] = {"success": [], "failure": [], "mass": []}
    for e in labelled(episodes):
        final = prefix_features(e)[-1]
        if final["logprob_coverage"] > 0:
            by["success" if e.success else "failure"].append(final["entropy_mean"])
            by["mass"].append(final["top_mass_mean"])
    return {"entropy_success": statistics.fmean(by["success"]) if by["success"] else None,
            "entropy_failure": statistics.fmean(by["failure"]) if by["failure"] else None,
            "top_mass": statistics.fmean(by["mass"]) if by["mass"] else None}


def compare_feature_sets(episodes: Sequence[EpisodeTrace], *, seed: int = 0, n_boot: int = DEFAULT_BOOTSTRAP,
                         false_alarm: float = DEFAULT_FALSE_ALARM,
                         fractions: tuple[float, float, float] = DEFAULT_FRACTIONS,
                         feature_sets: Sequence[str] = tuple(FEATURE_SETS)) -> Comparison:
    split = split_by_task(episodes, seed, fractions)
    evaluations: dict[str, Evaluation] = {}
    skipped: dict[str, str] = {}
    notes: dict[str, str] = {}
    if not has_logprobs(split.train):
        if "entropy" in feature_sets:
            skipped["entropy"] = ("no LLM span carries logprobs; entropy features need a model called with "
                                  "logprobs=true, top_logprobs=20")
        if "both" in feature_sets:
            notes["both"] = "no logprobs: entropy columns are constant, so this equals the external set"
    for name in feature_sets:
        if name in skipped:
            continue
        predictor, _ = train(episodes, name, seed=seed, false_alarm=false_alarm, split=split)
        evaluations[name] = evaluate_predictor(predictor, split.test, n_boot=n_boot, seed=seed)
    return Comparison(split, evaluations, skipped, notes, is_simulated(episodes),
                      entropy_by_outcome(split.test), false_alarm)


def _fmt(v: float | None, digits: int = 3) -> str:
    return "n/a" if v is None else f"{v:.{digits}f}"


def _fmt_ci(ci: tuple[float, float] | None, digits: int = 3) -> str:
    return "" if ci is None else f" ({ci[0]:.{digits}f}..{ci[1]:.{digits}f})"


def render_text(cmp: Comparison, top_coefficients: int = 6) -> str:
    """Plain-text report: measured figures beside the published ones, then coefficients."""
    lines = []
    label = "SIMULATED corpus (simulated model; not evidence about any real model)" if cmp.simulated \
        else "corpus"
    s = cmp.split.summary()
    lines.append(f"Failure prediction on {label}")
    lines.append(f"split by task (seed {s['seed']}): train {s['train']['episodes']} episodes / "
                 f"{s['train']['tasks']} tasks, validation {s['validation']['episodes']} / "
                 f"{s['validation']['tasks']}, test {s['test']['episodes']} / {s['test']['tasks']} "
                 f"({s['test']['failures']} failed); threshold at {cmp.false_alarm_target:.0%} "
                 f"false alarms on validation")
    if s["dropped_unlabelled"]:
        lines.append(f"{s['dropped_unlabelled']} episodes without a known outcome or steps were left out")
    lines.append("")
    header = (f"{'features':<9} {'AUROC (95% CI)':<24} {'published':>9}  {'detection (95% CI)':<24} "
              f"{'published':>9}  {'false alarm':>11}  {'lead steps':>10} {'lead LLM':>8} {'published':>9}")
    lines.append(header)
    for name in FEATURE_SETS:
        pub = published.PREDICTOR[name]
        ev = cmp.evaluations.get(name)
        if ev is None:
            lines.append(f"{name:<9} skipped: {cmp.skipped.get(name, 'not requested')}"
                         f"   (published AUROC {pub.auroc:.3f})")
            continue
        m = ev.metrics
        lines.append(
            f"{name:<9} {_fmt(m.auroc) + _fmt_ci(ev.intervals.get('auroc')):<24} {pub.auroc:>9.3f}  "
            f"{_fmt(m.detection, 2) + _fmt_ci(ev.intervals.get('detection'), 2):<24} "
            f"{_fmt(pub.detection, 2):>9}  {_fmt(m.false_alarm, 2):>11}  {_fmt(m.median_lead_steps, 1):>10} "
            f"{_fmt(m.median_lead_llm_calls, 1):>8} {_fmt(pub.median_lead, 0):>9}")
        for note in m.notes:
            lines.append(f"          note: {note}")
        if name in cmp.notes:
            lines.append(f"          note: {cmp.notes[name]}")
    e = cmp.entropy_by_outcome
    lines.append("")
    lines.append(f"mean token entropy (nat): success {_fmt(e['entropy_success'])}, failure "
                 f"{_fmt(e['entropy_failure'])} (published {published.ENTROPY_SUCCESS} / "
                 f"{published.ENTROPY_FAILURE}); mean covered top-20 mass {_fmt(e['top_mass'], 6)} "
                 f"(published {published.TOP20_MASS})")
    for name, ev in cmp.evaluations.items():
        coefs = ", ".join(f"{k} {v:+.2f}" for k, v in ev.coefficients[:top_coefficients])
        lines.append(f"coefficients ({name}, standardised, largest first): {coefs}")
    lines.append(f"published: {published.PREDICTOR_SOURCE}; its 'steps' are agent turns, closest to our LLM-call lead")
    return "\n".join(lines)

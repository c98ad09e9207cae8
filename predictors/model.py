"""Logistic failure predictor: training, alarm threshold, one-file save/load.

The fitted model is stored as JSON (feature set, feature names, scaler and logistic parameters,
threshold, version) rather than a pickle: loading it cannot execute code, it diffs and reviews
like any text file, and scoring it needs only a dot product, which keeps the live processor
cheap. ``predict_proba`` reproduces scikit-learn's output from those parameters exactly.

Training rules:

- Episodes are split into train / validation / test by task id, so no task is seen in two parts.
- Every step prefix is a row labelled with its episode's outcome (1 = failure); rows are weighted
  so that each episode counts once and both outcomes weigh the same, otherwise long failing
  episodes would dominate the fit.
- The alarm threshold is chosen on the validation part: the lowest threshold at which at most
  ``false_alarm`` of the successful episodes raise an alarm, an episode alarming when any of its
  prefix scores reaches the threshold.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agentchaos_otel import __version__
from agentchaos_otel.errors import no_such_file
from agentchaos_otel.records import EpisodeTrace
from agentchaos_otel.stats import group_split, sigmoid
from predictors.features import FeatureState, feature_names, has_logprobs, prefix_features, prefix_table

FORMAT = "agentchaos-failure-predictor"
FORMAT_VERSION = 1
DEFAULT_FALSE_ALARM = 0.05
DEFAULT_FRACTIONS = (0.6, 0.2, 0.2)
MIN_TRAIN_EPISODES_PER_CLASS = 2
MIN_VALIDATION_NORMALS = 1


class PredictorDataError(ValueError):
    """The data cannot support what was asked (too small, one class, no logprobs); one-line message."""


@dataclass(frozen=True)
class Split:
    train: list[EpisodeTrace]
    validation: list[EpisodeTrace]
    test: list[EpisodeTrace]
    seed: int
    dropped_unlabelled: int = 0

    def summary(self) -> dict[str, Any]:
        def part(eps: list[EpisodeTrace]) -> dict[str, int]:
            return {"episodes": len(eps), "failures": sum(1 for e in eps if e.success is False),
                    "tasks": len({e.task_id for e in eps})}
        return {"seed": self.seed, "train": part(self.train), "validation": part(self.validation),
                "test": part(self.test), "dropped_unlabelled": self.dropped_unlabelled}


def labelled(episodes: Sequence[EpisodeTrace]) -> list[EpisodeTrace]:
    """Episodes with a known outcome and at least one step; only those can train or score."""
    return [e for e in episodes if e.success is not None and e.steps]


def split_by_task(episodes: Sequence[EpisodeTrace], seed: int = 0,
                  fractions: tuple[float, float, float] = DEFAULT_FRACTIONS) -> Split:
    """Deterministic task-level split; every part gets at least one task when there are 3+ tasks."""
    if len(fractions) != 3 or any(f < 0 for f in fractions) or sum(fractions) <= 0:
        raise PredictorDataError(f"split fractions must be three non-negative numbers, got {fractions}")
    usable = labelled(episodes)
    dropped = len(episodes) - len(usable)
    tasks = sorted({str(e.task_id) for e in usable})
    if len(tasks) < 3:
        raise PredictorDataError(
            f"corpus too small to split by task: {len(tasks)} task(s) with a known outcome "
            f"({len(usable)} episodes); need at least 3 tasks for train/validation/test")
    total = sum(fractions)
    n = len(tasks)
    n_val = max(1, round(n * fractions[1] / total))
    n_test = max(1, round(n * fractions[2] / total))
    n_train = n - n_val - n_test
    if n_train < 1:
        raise PredictorDataError(f"corpus too small to split by task: {n} tasks leave none for training")
    parts = group_split([str(e.task_id) for e in usable], [n_val, n_test], seed)
    train, validation, test = ([usable[i] for i in idx] for idx in parts)
    return Split(train, validation, test, seed, dropped)


def alarm_threshold(normal_max_scores: Sequence[float], false_alarm: float = DEFAULT_FALSE_ALARM) -> float:
    """Lowest threshold at which at most ``false_alarm`` of normal episodes alarm (score >= t)."""
    if not normal_max_scores:
        raise PredictorDataError("no successful validation episodes to set the alarm threshold on")
    if not 0.0 <= false_alarm < 1.0:
        raise PredictorDataError(f"false-alarm rate must be in [0, 1), got {false_alarm}")
    ranked = sorted(normal_max_scores, reverse=True)
    allowed = math.floor(false_alarm * len(ranked) + 1e-9)
    # Raising the threshold just above the (allowed+1)-th highest normal score silences it and
    # everything below it; ties with it are silenced too, so the rate never exceeds the target.
    return float(np.nextafter(ranked[allowed], math.inf))


@dataclass
class FailurePredictor:
    """A fitted scaler + logistic regression over one feature set, with its alarm threshold."""

    feature_set: str
    names: tuple[str, ...]
    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float
    threshold: float = 1.0
    meta: dict[str, Any] = field(default_factory=dict)

    # --- scoring ------------------------------------------------------------------------------
    def decision(self, X: np.ndarray | Sequence[Sequence[float]]) -> np.ndarray:
        x = np.asarray(X, dtype=float)
        if x.ndim != 2 or x.shape[1] != len(self.names):
            raise ValueError(f"expected rows of {len(self.names)} features, got shape {x.shape}")
        z = (x - np.asarray(self.mean)) / np.asarray(self.scale)
        return z @ np.asarray(self.coef) + self.intercept

    def predict_proba(self, X: np.ndarray | Sequence[Sequence[float]]) -> np.ndarray:
        """Columns: P(success), P(failure), like scikit-learn's for classes [0, 1]."""
        p = sigmoid(self.decision(X))
        return np.column_stack([1.0 - p, p])

    def __post_init__(self) -> None:
        # Per-feature weight on the centred value; folding the mean in too would lose precision.
        self._w = [c / s for c, s in zip(self.coef, self.scale, strict=True)]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FailurePredictor) and self.to_dict() == other.to_dict()

    def score_vector(self, values: Sequence[float]) -> float:
        """Failure probability of one prefix in plain Python: the one path both live and offline
        scoring take, so their scores are bit-identical."""
        if len(values) != len(self._w):
            raise ValueError(f"expected {len(self._w)} features, got {len(values)}")
        z = self.intercept + sum((v - m) * w for v, m, w in zip(values, self.mean, self._w, strict=True))
        return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))

    def score_state(self, state: FeatureState) -> float:
        return self.score_vector(state.vector(self.names))

    def score_prefixes(self, episode: EpisodeTrace) -> list[float]:
        return [self.score_vector([vals[n] for n in self.names]) for vals in prefix_features(episode)]

    def alarms(self, score: float) -> bool:
        return score >= self.threshold

    def coefficients(self) -> list[tuple[str, float]]:
        """Coefficients on standardised features, largest magnitude first."""
        return sorted(zip(self.names, self.coef, strict=True), key=lambda kv: -abs(kv[1]))

    # --- persistence --------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": FORMAT_VERSION, "feature_set": self.feature_set,
                "features": list(self.names), "scaler_mean": self.mean, "scaler_scale": self.scale,
                "coef": self.coef, "intercept": self.intercept, "threshold": self.threshold,
                "meta": self.meta}

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(json.dumps(self.to_dict(), indent=1, sort_keys=True))
        return path

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FailurePredictor:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise PredictorDataError("not a failure-predictor file")
        if data.get("version") != FORMAT_VERSION:
            raise PredictorDataError(f"predictor file version {data.get('version')} is not supported "
                                     f"(this build reads version {FORMAT_VERSION})")
        names = tuple(data["features"])
        expected = feature_names(data["feature_set"])
        if names != expected:
            raise PredictorDataError(f"predictor file features do not match feature set "
                                     f"{data['feature_set']!r} of this build; retrain it")
        n = len(names)
        if not (len(data["scaler_mean"]) == len(data["scaler_scale"]) == len(data["coef"]) == n):
            raise PredictorDataError("predictor file is inconsistent: parameter lengths differ")
        return cls(data["feature_set"], names, [float(v) for v in data["scaler_mean"]],
                   [float(v) for v in data["scaler_scale"]], [float(v) for v in data["coef"]],
                   float(data["intercept"]), float(data["threshold"]), dict(data.get("meta") or {}))

    @classmethod
    def load(cls, path: str | Path) -> FailurePredictor:
        path = Path(path)
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            raise PredictorDataError(no_such_file(path)) from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise PredictorDataError(f"cannot read predictor file {path}: {exc}") from None
        try:
            return cls.from_dict(data)
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, PredictorDataError):
                raise
            raise PredictorDataError(f"predictor file {path} is malformed: {exc}") from None


def _episode_weights(episodes: Sequence[EpisodeTrace], ep_index: Sequence[int], y: np.ndarray) -> np.ndarray:
    lengths = np.bincount(np.asarray(ep_index), minlength=len(episodes)).astype(float)
    w = 1.0 / lengths[np.asarray(ep_index)]
    n_fail = sum(1 for e in episodes if e.success is False)
    n_ok = len(episodes) - n_fail
    w *= np.where(y == 1, len(episodes) / (2.0 * n_fail), len(episodes) / (2.0 * n_ok))
    return w


def fit_predictor(train: Sequence[EpisodeTrace], feature_set: str, *, seed: int = 0, C: float = 1.0
                  ) -> FailurePredictor:
    """Fit scaler + logistic regression on every step prefix of the training episodes."""
    # Imported here: scoring (and so the live processor) never needs scikit-learn.
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    names = feature_names(feature_set)
    train = labelled(train)
    n_fail = sum(1 for e in train if e.success is False)
    n_ok = len(train) - n_fail
    if min(n_fail, n_ok) < MIN_TRAIN_EPISODES_PER_CLASS:
        raise PredictorDataError(
            f"training part needs at least {MIN_TRAIN_EPISODES_PER_CLASS} successful and "
            f"{MIN_TRAIN_EPISODES_PER_CLASS} failed episodes, has {n_ok} successful and {n_fail} failed")
    if feature_set == "entropy" and not has_logprobs(train):
        raise PredictorDataError("no LLM span in the training episodes carries logprobs; the 'entropy' "
                                 "feature set needs a model called with logprobs=true, top_logprobs=20")
    table = prefix_table(train, names)
    X = np.asarray(table.rows, dtype=float)
    y = np.asarray([0 if train[i].success else 1 for i in table.episode])
    w = _episode_weights(train, table.episode, y)
    scaler = StandardScaler().fit(X)
    clf = LogisticRegression(C=C, max_iter=2000, random_state=seed)
    clf.fit(scaler.transform(X), y, sample_weight=w)
    return FailurePredictor(
        feature_set=feature_set, names=names, mean=[float(v) for v in scaler.mean_],
        scale=[float(v) for v in scaler.scale_], coef=[float(v) for v in clf.coef_[0]],
        intercept=float(clf.intercept_[0]),
        meta={"package_version": __version__,
              "train_episodes": len(train), "train_failures": n_fail, "train_prefixes": len(y), "C": C,
              "seed": seed, "has_logprobs": has_logprobs(train)},
    )


def calibrate(predictor: FailurePredictor, validation: Sequence[EpisodeTrace],
              false_alarm: float = DEFAULT_FALSE_ALARM) -> FailurePredictor:
    """Set the alarm threshold on the successful validation episodes."""
    normals = [e for e in labelled(validation) if e.success]
    if len(normals) < MIN_VALIDATION_NORMALS:
        raise PredictorDataError("validation part has no successful episode to set the alarm threshold on; "
                                 "use more tasks or a different split seed")
    maxima = [max(predictor.score_prefixes(e)) for e in normals]
    predictor.threshold = alarm_threshold(maxima, false_alarm)
    predictor.meta.update({"false_alarm_target": false_alarm, "validation_normals": len(normals),
                           "validation_false_alarm": sum(m >= predictor.threshold for m in maxima)
                           / len(maxima)})
    return predictor

"""The failure predictor as a scikit-learn estimator over episodes.

``FailurePredictorEstimator`` takes its parameters in ``__init__``, learns in ``fit`` and keeps
what it learned in attributes ending in ``_``, so ``clone``, ``get_params``, grid search and a
``Pipeline`` (e.g. after a step that blinds or filters episodes) work as for any estimator. Its
samples are whole episodes (``EpisodeTrace``): ``predict_proba`` gives, per episode, the highest
failure probability over its step prefixes, the quantity the alarm threshold is set on, and
``predict`` says whether that alarm fires (1) or not (0).

``fit`` sets the threshold on the successful episodes it was given unless ``validation`` episodes
are passed; ``train`` fits it on the task-level train / validation / test split the evaluation
reports, which is how ``agentchaos predict train`` and ``evaluate`` train. The fitted
``predictor_`` is the light ``FailurePredictor`` the live span processor loads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from agentchaos_otel.records import EpisodeTrace
from predictors.model import (
    DEFAULT_FALSE_ALARM,
    DEFAULT_FRACTIONS,
    FailurePredictor,
    PredictorDataError,
    Split,
    calibrate,
    fit_predictor,
    labelled,
    split_by_task,
)


class FailurePredictorEstimator(ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """Logistic failure predictor over one feature set (``external`` or ``entropy``)."""

    def __init__(self, feature_set: str = "external", *, C: float = 1.0,
                 false_alarm: float = DEFAULT_FALSE_ALARM, seed: int = 0) -> None:
        self.feature_set = feature_set
        self.C = C
        self.false_alarm = false_alarm
        self.seed = seed

    def fit(self, X: Sequence[EpisodeTrace], y: Sequence[int] | None = None, *,
            validation: Sequence[EpisodeTrace] | None = None) -> FailurePredictorEstimator:
        """Fit on episodes; ``y`` (1 = failed), when given, must agree with their recorded outcomes."""
        episodes = list(X)
        if y is not None:
            y_arr = np.asarray(list(y), dtype=int)
            recorded = np.asarray([int(e.success is False) for e in episodes])
            if y_arr.shape != recorded.shape or not np.array_equal(y_arr, recorded):
                raise PredictorDataError("y must be the episodes' recorded outcomes (1 = failed); "
                                         "the predictor learns from the outcome stored with each episode")
        predictor = fit_predictor(episodes, self.feature_set, seed=self.seed, C=self.C)
        self.predictor_: FailurePredictor = calibrate(predictor, list(validation or episodes), self.false_alarm)
        self.threshold_: float = self.predictor_.threshold
        self.classes_ = np.array([0, 1])
        self.feature_names_: tuple[str, ...] = self.predictor_.names
        return self

    def _max_scores(self, X: Sequence[EpisodeTrace]) -> np.ndarray:
        check_is_fitted(self, "predictor_")
        return np.asarray([max(self.predictor_.score_prefixes(e), default=0.0) for e in X], dtype=float)

    def predict_proba(self, X: Sequence[EpisodeTrace]) -> np.ndarray:
        """Columns P(no failure), P(failure) of each episode's highest-scoring prefix."""
        p = self._max_scores(X)
        return np.column_stack([1.0 - p, p])

    def decision_function(self, X: Sequence[EpisodeTrace]) -> np.ndarray:
        return self._max_scores(X)

    def predict(self, X: Sequence[EpisodeTrace]) -> np.ndarray:
        """1 where the alarm fires on some prefix of the episode, else 0."""
        return (self._max_scores(X) >= self.threshold_).astype(int)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False  # samples are episodes, not rows of numbers
        return tags


def failed(episodes: Sequence[EpisodeTrace]) -> list[int]:
    """The labels ``fit`` takes: 1 for a failed episode, 0 for a successful one."""
    return [int(e.success is False) for e in episodes]


def train(episodes: Sequence[EpisodeTrace], feature_set: str = "external", *, seed: int = 0,
          fractions: tuple[float, float, float] = DEFAULT_FRACTIONS,
          false_alarm: float = DEFAULT_FALSE_ALARM, split: Split | None = None
          ) -> tuple[FailurePredictor, Split]:
    """Split by task, fit the estimator on train with the threshold set on validation; the test part
    stays unseen."""
    split = split or split_by_task(episodes, seed, fractions)
    fit_on = labelled(split.train)
    estimator = FailurePredictorEstimator(feature_set, false_alarm=false_alarm, seed=seed)
    predictor = estimator.fit(fit_on, failed(fit_on), validation=split.validation).predictor_
    predictor.meta["split"] = split.summary()
    # Kept so a later evaluation on the same file can stay on tasks the model never saw.
    predictor.meta["test_tasks"] = sorted({str(e.task_id) for e in split.test})
    return predictor, split

"""The diagnosers as scikit-learn estimators over episodes.

Parameters in ``__init__``, learning in ``fit``, what was learned in attributes ending in ``_``:
``clone``, ``get_params``, grid search and ``Pipeline`` work as for any estimator. Samples are
whole episodes (``EpisodeTrace``); every episode is diagnosed through its blind view, so ground
truth on the input never reaches a verdict. ``predict`` gives the fault type per episode (or
``none_found``), ``diagnose`` the full ``Diagnosis`` (step, span, confidence, evidence).

The rule diagnoser learns nothing: ``fit`` only records the taxonomy it can name. The learned
diagnoser fits its per-step forest on labelled episodes in ``fit``; the fitted
``diagnoser_`` is the object ``diagnose train`` saves and ``diagnose run --method learned`` loads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from agentchaos_otel.records import EpisodeTrace
from diagnosers.base import Diagnosis, diagnose_episodes
from diagnosers.learned import NONE_LABEL, LearnedDiagnoser, train
from diagnosers.rules import RULES, Rule, RuleDiagnoser
from diagnosers.taxonomy import FAULT_TYPES, NONE_FOUND, split_class_label


class _EpisodeDiagnoser(ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """Shared prediction over episodes; subclasses set ``diagnoser_`` in ``fit``."""

    def diagnose(self, X: Sequence[EpisodeTrace]) -> list[Diagnosis]:
        check_is_fitted(self, "diagnoser_")
        return diagnose_episodes(self.diagnoser_, list(X))

    def predict(self, X: Sequence[EpisodeTrace]) -> np.ndarray:
        """The fault type named for each episode (``none_found`` when it abstains)."""
        return np.asarray([d.fault_type for d in self.diagnose(X)], dtype=object)

    def score(self, X: Sequence[EpisodeTrace], y: Sequence[str] | None = None,
              sample_weight: Any = None) -> float:
        """Type accuracy against ``y``, or against the episodes' own ground truth when y is None."""
        episodes = list(X)
        truth = list(y) if y is not None else [_root_type(e) for e in episodes]
        return float(np.mean(self.predict(episodes) == np.asarray(truth, dtype=object))) if episodes else 0.0

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False  # samples are episodes, not rows of numbers
        return tags


def _root_type(episode: EpisodeTrace) -> str:
    faults = episode.faults()
    return faults[0].fault_type if faults else NONE_FOUND


class RuleEstimator(_EpisodeDiagnoser):
    """The ordered rules: earliest strong anomaly wins (see ``diagnosers/rules.py``)."""

    def __init__(self, rules: tuple[Rule, ...] = RULES) -> None:
        self.rules = rules

    def fit(self, X: Sequence[EpisodeTrace] | None = None, y: Any = None) -> RuleEstimator:
        self.diagnoser_ = RuleDiagnoser(self.rules)
        self.classes_ = np.asarray([*FAULT_TYPES, NONE_FOUND], dtype=object)
        return self


class LearnedEstimator(_EpisodeDiagnoser):
    """A per-step random forest over observation features, trained on labelled episodes."""

    def __init__(self, n_estimators: int = 150, seed: int = 0) -> None:
        self.n_estimators = n_estimators
        self.seed = seed

    def fit(self, X: Sequence[EpisodeTrace], y: Any = None) -> LearnedEstimator:
        """Fit on episodes that carry ground truth (labels are read from it, features from the blind view)."""
        model, report = train(list(X), seed=self.seed, n_estimators=self.n_estimators)
        self.diagnoser_: LearnedDiagnoser = model
        self.step_classes_ = np.asarray(report.classes, dtype=object)
        named = {NONE_FOUND if c == NONE_LABEL else split_class_label(c)[0] for c in report.classes}
        self.classes_ = np.asarray(sorted(named), dtype=object)
        self.n_training_steps_ = report.steps
        return self

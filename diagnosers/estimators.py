"""The diagnosers as scikit-learn estimators over episodes.

Parameters in ``__init__``, learning in ``fit``, what was learned in attributes ending in ``_``:
``clone``, ``get_params``, grid search and ``Pipeline`` work as for any estimator. Samples are
whole episodes (``EpisodeTrace``); every episode is diagnosed through its blind view, so ground
truth on the input never reaches a verdict. ``predict`` gives the fault type per episode (or
``none_found``), ``diagnose`` the full ``Diagnosis`` (step, span, confidence, evidence).

The rule diagnoser learns no labels: ``fit`` records the taxonomy it can name and what each tool
answers across the episodes given (the norm a tool's first answer is read against). The learned
diagnoser fits its per-step forest in ``fit``: ``y`` gives each episode's root cause (a
``FaultLabel``, or None for an episode known to be clean), as a label file does; without ``y``
the labels are the episodes' recorded ground truth. ``diagnose train`` trains through it, and the
fitted ``diagnoser_`` is what it saves and ``diagnose run --method learned`` loads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from agentchaos_otel.records import EpisodeTrace, FaultLabel
from diagnosers.base import Diagnosis, diagnose_episodes
from diagnosers.injected import ground_truth
from diagnosers.learned import NONE_LABEL, LearnedDiagnoser, fit_forest, training_rows
from diagnosers.norms import ToolNorms
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
    root = ground_truth(episode)
    return root.fault_type if root is not None else NONE_FOUND


class RuleEstimator(_EpisodeDiagnoser):
    """The ordered rules: earliest strong anomaly wins (see ``diagnosers/rules.py``). ``fit``
    reads what each tool answers across the episodes given (``diagnosers/norms.py``), as
    ``diagnose`` reads it from the store; ``y`` is not used."""

    def __init__(self, rules: tuple[Rule, ...] = RULES, store_norms: bool = True) -> None:
        self.rules = rules
        self.store_norms = store_norms

    def fit(self, X: Sequence[EpisodeTrace] | None = None, y: Any = None) -> RuleEstimator:
        norms = ToolNorms.from_episodes(X) if self.store_norms and X is not None else None
        self.diagnoser_ = RuleDiagnoser(self.rules, norms=norms)
        self.classes_ = np.asarray([*FAULT_TYPES, NONE_FOUND], dtype=object)
        return self


class LearnedEstimator(_EpisodeDiagnoser):
    """A per-step random forest over observation features, trained on labelled episodes."""

    def __init__(self, n_estimators: int = 150, seed: int = 0) -> None:
        self.n_estimators = n_estimators
        self.seed = seed

    def fit(self, X: Sequence[EpisodeTrace], y: Sequence[FaultLabel | None] | None = None) -> LearnedEstimator:
        """Fit on episodes and their root causes ``y`` (None in ``y``: clean); without ``y``, on the
        episodes' own ground truth. Features always come from the blind view."""
        episodes = list(X)
        truths: list[FaultLabel | None | bool] = [False] * len(episodes) if y is None else list(y)
        if len(truths) != len(episodes):
            raise ValueError(f"y has {len(truths)} labels for {len(episodes)} episodes")
        rows, labels = training_rows(episodes, truths)
        self.diagnoser_: LearnedDiagnoser = fit_forest(rows, labels, seed=self.seed, n_estimators=self.n_estimators)
        self.step_classes_ = np.asarray(sorted(set(labels)), dtype=object)
        named = {NONE_FOUND if c == NONE_LABEL else split_class_label(c)[0] for c in self.step_classes_}
        self.classes_ = np.asarray(sorted(named), dtype=object)
        self.n_training_steps_ = len(labels)
        self.n_faulted_steps_ = sum(1 for v in labels if v != NONE_LABEL)
        return self

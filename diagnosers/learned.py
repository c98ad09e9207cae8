"""Learned diagnoser: a per-step classifier over observed features, trained on labelled traces.

Each step is labelled with the (type, side) of the changed fault it carries, or ``none``; the
root cause of an episode is the earliest step the model thinks is faulted (probability >= 0.5),
or the most likely one when none reaches that. Training is ``diagnosers.estimators.LearnedEstimator``
(scikit-learn's shape: labels in ``y``); this module holds what it fits and how it is kept.

The model is saved with skops (``.skops``), not pickle: loading checks every type in the file
against the few a forest needs, so a model file from elsewhere cannot run code. It carries its
feature names and versions, and refuses to load against a different feature layout.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from agentchaos_otel.errors import no_such_file
from agentchaos_otel.records import EpisodeTrace, FaultLabel
from agentchaos_otel.stats import group_split
from diagnosers.base import Diagnosis, none_found
from diagnosers.features import FEATURE_NAMES, FEATURE_VERSION, episode_features
from diagnosers.injected import root_faults
from diagnosers.taxonomy import class_label, split_class_label
from diagnosers.view import EpisodeView

MODEL_FORMAT = "agentchaos-diagnoser"
MODEL_VERSION = 2  # 2: skops instead of joblib
NONE_LABEL = "none"
MIN_FAULT_PROBABILITY = 0.05
# The types a saved forest holds beyond those skops trusts by default.
_FOREST_TYPES = frozenset({"sklearn.tree._tree.Tree"})


class ModelFileError(ValueError):
    """A model file that cannot be used; the message is one readable line."""


def step_labels(episode: EpisodeTrace, truth: FaultLabel | None | bool = False) -> list[str]:
    """Per-step training labels from an unblinded episode's changed faults that were not absorbed
    (``diagnosers.injected``), or from the one labelled root cause ``truth`` of a label file
    (None: a labelled clean episode)."""
    if truth is False:
        by_step = {f.step: class_label(f.fault_type, f.target) for f in root_faults(episode)}
    elif isinstance(truth, FaultLabel):
        by_step = {truth.step: class_label(truth.fault_type, truth.target)}
    else:
        by_step = {}
    return [by_step.get(s.step, NONE_LABEL) for s in episode.steps]


def split_by_task(episodes: Sequence[EpisodeTrace], test_fraction: float = 0.3, seed: int = 0
                  ) -> tuple[list[EpisodeTrace], list[EpisodeTrace]]:
    """Train/test split where all episodes of one task id land on the same side.

    ``round(test_fraction x task ids)`` task ids (all but one at most) go to the test side, drawn
    by ``stats.group_split`` with ``seed``, the split the predictors use too.
    """
    n_tasks = len({str(ep.task_id) for ep in episodes})
    n_test = min(round(n_tasks * test_fraction), n_tasks - 1) if n_tasks > 1 else 0
    train_idx, test_idx = group_split([ep.task_id for ep in episodes], [n_test], seed)
    return [episodes[i] for i in train_idx], [episodes[i] for i in test_idx]


def fit_forest(rows: Sequence[Sequence[float]], labels: Sequence[str], *, seed: int = 0,
               n_estimators: int = 150) -> LearnedDiagnoser:
    """The per-step forest on feature rows and their step labels (``step_labels``)."""
    if not rows:
        raise ValueError("no steps to train on")
    if len(set(labels)) < 2:
        raise ValueError("training data needs faulted and clean steps (only one class found)")
    # A forest: robust to unscaled, mostly binary features and quick to fit on tens of thousands
    # of steps; the fixed seed makes the saved model reproducible.
    from sklearn.ensemble import RandomForestClassifier  # imported when training, not to diagnose

    clf = RandomForestClassifier(n_estimators=n_estimators, min_samples_leaf=1, random_state=seed, n_jobs=1)
    clf.fit(np.asarray(rows, dtype=float), np.asarray(labels))
    return LearnedDiagnoser(clf, list(FEATURE_NAMES))


def training_rows(episodes: Sequence[EpisodeTrace], truths: Sequence[FaultLabel | None | bool]
                  ) -> tuple[list[list[float]], list[str]]:
    """Feature rows from each episode's blind view, labelled from its truth (False: its ground truth)."""
    rows: list[list[float]] = []
    labels: list[str] = []
    for ep, truth in zip(episodes, truths, strict=True):
        rows += episode_features(EpisodeView(ep.blind()))
        labels += step_labels(ep, truth)
    return rows, labels


class LearnedDiagnoser:
    name = "learned"

    def __init__(self, model: Any, features: list[str], meta: dict[str, Any] | None = None):
        if list(features) != list(FEATURE_NAMES):
            raise ModelFileError("model was trained on a different feature layout; "
                                 "retrain with `diagnose train`")
        self.model = model
        self.features = list(features)
        self.meta = meta or {}
        self.classes = [str(c) for c in model.classes_]

    def diagnose(self, episode: EpisodeTrace) -> Diagnosis:
        return self.diagnose_many([episode])[0]

    def diagnose_many(self, episodes: Sequence[EpisodeTrace]) -> list[Diagnosis]:
        """One predict call for all steps of all episodes: a forest's per-call overhead dominates."""
        views = [EpisodeView(ep) for ep in episodes]
        rows = [episode_features(v) for v in views]
        flat = [r for rs in rows for r in rs]
        proba_all = self.model.predict_proba(np.asarray(flat, dtype=float)) if flat else np.zeros((0, 1))
        out, at = [], 0
        for ep, view, rs in zip(episodes, views, rows, strict=True):
            out.append(self._pick(ep, view, proba_all[at:at + len(rs)]))
            at += len(rs)
        return out

    def _pick(self, episode: EpisodeTrace, view: EpisodeView, proba: np.ndarray) -> Diagnosis:
        if not len(proba):
            return none_found(episode, self.name, "episode has no steps")
        none_col = self.classes.index(NONE_LABEL) if NONE_LABEL in self.classes else None
        p_fault = 1.0 - proba[:, none_col] if none_col is not None else proba.max(axis=1)
        hits = np.flatnonzero(p_fault >= 0.5)
        i = int(hits[0]) if len(hits) else int(np.argmax(p_fault))
        if p_fault[i] < MIN_FAULT_PROBABILITY:
            return none_found(episode, self.name,
                              f"no step above {MIN_FAULT_PROBABILITY:.0%} fault probability")
        row = proba[i].copy()
        if none_col is not None:
            row[none_col] = -1.0
        label = self.classes[int(np.argmax(row))]
        ftype, target = split_class_label(label)
        o = view.obs[i]
        if target == "tool_calls" and o.kind == "tool":
            # Seen at the tool that rejected the call; the fault is in the model reply that made it.
            prev = view.previous_llm(o)
            o = prev if prev is not None else o
        evidence = (f"step {o.step} `{o.name}`: fault probability {p_fault[i]:.2f}, "
                    f"most likely {label} ({row.max():.2f})")
        return Diagnosis(episode.trace_id, episode.task_id, self.name, ftype, target, o.step, o.span_id,
                         float(min(1.0, row.max())), evidence, "model")

    # -- persistence ---------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str], **meta: Any) -> None:
        import sklearn
        import skops.io

        skops.io.dump({"format": MODEL_FORMAT, "version": MODEL_VERSION, "feature_version": FEATURE_VERSION,
                       "features": self.features, "classes": self.classes, "sklearn": sklearn.__version__,
                       "model": self.model, "meta": {**self.meta, **meta}}, path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> LearnedDiagnoser:
        if not os.path.exists(path):
            raise ModelFileError(no_such_file(path))
        import skops.io

        try:
            unexpected = set(skops.io.get_untrusted_types(file=path)) - _FOREST_TYPES
            if unexpected:
                raise ModelFileError(f"{path}: refusing a model file with unexpected types "
                                     f"({', '.join(sorted(unexpected))})")
            blob = skops.io.load(path, trusted=sorted(_FOREST_TYPES))
        except ModelFileError:
            raise
        except Exception as exc:  # a corrupt, foreign or pickled file must become one readable line
            raise ModelFileError(f"{path}: not a diagnoser model ({type(exc).__name__}); models are .skops files "
                                 "written by `diagnose train`") from None
        if not isinstance(blob, dict) or blob.get("format") != MODEL_FORMAT:
            raise ModelFileError(f"{path}: not a diagnoser model file")
        if blob.get("version") != MODEL_VERSION or blob.get("feature_version") != FEATURE_VERSION:
            raise ModelFileError(f"{path}: model format {blob.get('version')}/{blob.get('feature_version')} "
                                 f"!= {MODEL_VERSION}/{FEATURE_VERSION}; retrain with `diagnose train`")
        return cls(blob["model"], blob.get("features", []), blob.get("meta"))

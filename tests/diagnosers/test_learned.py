"""Learned diagnoser: training on labelled traces, task-id splits, one-file persistence."""

from __future__ import annotations

from pathlib import Path

import pytest
import skops.io

from benchmarks.corpora import synthetic
from benchmarks.corpora.synthetic import episode_of, fault_attrs, llm_record, tool_record
from diagnosers.base import diagnose_episodes
from diagnosers.estimators import LearnedEstimator
from diagnosers.evaluate import evaluate
from diagnosers.features import FEATURE_NAMES, episode_features
from diagnosers.learned import LearnedDiagnoser, ModelFileError, split_by_task, step_labels
from diagnosers.view import EpisodeView


@pytest.fixture(scope="module")
def corpus() -> list:
    return synthetic.make_corpus(6, 1)


@pytest.fixture(scope="module")
def split(corpus: list) -> tuple[list, list]:
    return split_by_task(corpus, 0.34, seed=0)


@pytest.fixture(scope="module")
def model(split: tuple[list, list]) -> LearnedDiagnoser:
    est = LearnedEstimator(n_estimators=60, seed=0).fit(split[0])
    assert est.n_faulted_steps_ > 0 and "none" in est.step_classes_
    return est.diagnoser_


def test_split_keeps_tasks_on_one_side(corpus: list, split: tuple[list, list]) -> None:
    train_eps, test_eps = split
    assert train_eps and test_eps and len(train_eps) + len(test_eps) == len(corpus)
    assert not {e.task_id for e in train_eps} & {e.task_id for e in test_eps}
    assert split_by_task(corpus, 0.34, seed=0) == split


def test_features_have_the_declared_layout_and_no_ground_truth(corpus: list) -> None:
    ep = next(e for e in corpus if e.triggered)
    rows = episode_features(EpisodeView(ep.blind()))
    assert len(rows) == len(ep.steps) and all(len(r) == len(FEATURE_NAMES) for r in rows)
    assert rows == episode_features(EpisodeView(ep))  # ground truth attributes are never read


def test_step_labels_keep_sides_apart() -> None:
    ep = episode_of([llm_record(0, content="[TIMEOUT]", fault=fault_attrs("timeout", "content")),
                     tool_record(1, "get_weather", {"error": "timeout"},
                                 fault=fault_attrs("timeout", "tool_result")),
                     llm_record(2)])
    assert step_labels(ep) == ["llm:timeout", "tool:timeout", "none"]


def test_learned_accuracy_on_held_out_tasks(model: LearnedDiagnoser, split: tuple[list, list]) -> None:
    (s,), _ = evaluate(split[1], [model], n_boot=200)
    assert s.n >= 40
    assert s.type_accuracy.value >= 0.8
    assert s.step_accuracy.value >= 0.8


def test_save_and_load_round_trip(model: LearnedDiagnoser, split: tuple[list, list], tmp_path: Path) -> None:
    path = tmp_path / "m.skops"
    model.save(path, note="test")
    loaded = LearnedDiagnoser.load(path)
    assert loaded.features == list(FEATURE_NAMES) and loaded.meta["note"] == "test"
    eps = [e for e in split[1] if e.success is False][:15]
    assert diagnose_episodes(loaded, eps) == diagnose_episodes(model, eps)


def test_training_is_reproducible(split: tuple[list, list]) -> None:
    small = split[0][:80]
    a = LearnedEstimator(n_estimators=10, seed=3).fit(small).diagnoser_
    b = LearnedEstimator(n_estimators=10, seed=3).fit(small).diagnoser_
    eps = [e for e in split[1] if e.success is False][:10]
    assert diagnose_episodes(a, eps) == diagnose_episodes(b, eps)


def test_bad_model_files_are_refused(model: LearnedDiagnoser, tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match="no such file"):
        LearnedDiagnoser.load(tmp_path / "none.skops")
    junk = tmp_path / "junk.skops"
    junk.write_bytes(b"\x00not a model")
    with pytest.raises(ModelFileError, match="not a diagnoser model"):
        LearnedDiagnoser.load(junk)
    other = tmp_path / "other.skops"
    skops.io.dump({"format": "something-else"}, other)
    with pytest.raises(ModelFileError, match="not a diagnoser model file"):
        LearnedDiagnoser.load(other)
    old = tmp_path / "old.skops"
    model.save(old)
    blob = skops.io.load(old, trusted=["sklearn.tree._tree.Tree"])
    blob["features"] = blob["features"][:-1]
    skops.io.dump(blob, old)
    with pytest.raises(ModelFileError, match="different feature layout"):
        LearnedDiagnoser.load(old)


def test_training_needs_faults() -> None:
    clean = [synthetic.make_episode(f"t{i}", 0, "none") for i in range(3)]
    with pytest.raises(ValueError, match="only one class"):
        LearnedEstimator().fit(clean)


def test_a_pickled_model_is_refused_without_being_loaded(tmp_path: Path) -> None:
    import pickle

    class Boom:
        def __reduce__(self) -> tuple:
            return (open, (str(tmp_path / "ran"), "w"))

    evil = tmp_path / "evil.skops"
    evil.write_bytes(pickle.dumps({"format": "agentchaos-diagnoser", "model": Boom()}))
    with pytest.raises(ModelFileError, match="not a diagnoser model"):
        LearnedDiagnoser.load(evil)
    assert not (tmp_path / "ran").exists()

"""The diagnosers behave as scikit-learn estimators: params, clone, Pipeline, same verdicts."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from benchmarks.corpora import synthetic
from diagnosers.base import diagnose_episodes
from diagnosers.estimators import LearnedEstimator, RuleEstimator
from diagnosers.evaluate import ground_truth
from diagnosers.learned import split_by_task
from diagnosers.norms import ToolNorms
from diagnosers.rules import RuleDiagnoser


@pytest.fixture(scope="module")
def corpus() -> list:
    return synthetic.make_corpus(6, 1)


def test_rule_estimator_gives_the_rule_diagnosers_verdicts(corpus: list) -> None:
    est = RuleEstimator()
    with pytest.raises(NotFittedError):
        est.predict(corpus)
    est.fit(corpus)
    assert est.get_params()["store_norms"] is True
    expected = [d.fault_type for d in diagnose_episodes(RuleDiagnoser(norms=ToolNorms.from_episodes(corpus)),
                                                        corpus)]
    assert est.predict(corpus).tolist() == expected
    assert "none_found" in est.classes_ and set(expected) <= set(est.classes_)
    assert 0.0 <= est.score(corpus) <= 1.0
    alone = RuleEstimator(store_norms=False).fit(corpus)
    assert alone.predict(corpus).tolist() == [d.fault_type for d in diagnose_episodes(RuleDiagnoser(), corpus)]


def test_learned_estimator_learns_from_y_and_clones(corpus: list) -> None:
    train_eps, test_eps = split_by_task(corpus, 0.34, seed=0)
    est = LearnedEstimator(n_estimators=40, seed=1)
    assert est.get_params() == {"n_estimators": 40, "seed": 1}
    fresh = clone(est)
    assert not hasattr(fresh, "diagnoser_")
    # On episodes with at most one fault, labels given in y (their root causes) are the labels the
    # recorded ground truth gives: the same model.
    single = [e for e in train_eps if len(e.faults()) <= 1]
    est.fit(single)
    ref = clone(est).fit(single, [ground_truth(e) for e in single])
    assert est.predict(test_eps).tolist() == ref.predict(test_eps).tolist()
    assert est.n_training_steps_ > 0 and "none_found" in est.classes_
    # y is what is learned: every episode labelled clean leaves nothing but one class.
    with pytest.raises(ValueError, match="only one class"):
        clone(est).fit(train_eps, [None] * len(train_eps))
    with pytest.raises(ValueError, match="labels for"):
        clone(est).fit(train_eps, [None])


def test_in_a_pipeline_that_filters_failed_episodes(corpus: list) -> None:
    only_failed = FunctionTransformer(lambda eps: [e for e in eps if e.success is False])
    pipe = Pipeline([("failed", only_failed), ("diagnose", RuleEstimator())]).fit(corpus)
    out = pipe.predict(corpus)
    assert isinstance(out, np.ndarray) and len(out) == sum(e.success is False for e in corpus)

"""The failure predictor behaves as a scikit-learn estimator: clone, params, Pipeline, fitted attrs."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from predictors.estimator import FailurePredictorEstimator
from predictors.model import PredictorDataError, calibrate, fit_predictor, labelled
from tests.predictors.test_synth import synthetic_corpus


@pytest.fixture(scope="module")
def corpus() -> list:
    return labelled(synthetic_corpus(30, 2))


def test_params_clone_and_fitted_attributes(corpus: list) -> None:
    est = FailurePredictorEstimator("external", C=0.5, false_alarm=0.1, seed=3)
    assert est.get_params() == {"feature_set": "external", "C": 0.5, "false_alarm": 0.1, "seed": 3}
    copy = clone(est)
    assert copy.get_params() == est.get_params() and not hasattr(copy, "predictor_")
    with pytest.raises(NotFittedError):
        copy.predict(corpus[:2])
    est.fit(corpus)
    assert est.threshold_ == est.predictor_.threshold and list(est.classes_) == [0, 1]


def test_same_model_as_the_functional_path(corpus: list) -> None:
    est = FailurePredictorEstimator(seed=0).fit(corpus)
    ref = calibrate(fit_predictor(corpus, "external", seed=0), corpus)
    assert est.predictor_.coef == ref.coef and est.threshold_ == ref.threshold
    proba = est.predict_proba(corpus)
    assert proba.shape == (len(corpus), 2) and np.allclose(proba.sum(axis=1), 1.0)
    expected = [int(max(ref.score_prefixes(e)) >= ref.threshold) for e in corpus]
    assert est.predict(corpus).tolist() == expected


def test_usable_in_a_pipeline_and_y_must_match_outcomes(corpus: list) -> None:
    blind = FunctionTransformer(lambda eps: [e.blind() for e in eps])
    pipe = Pipeline([("blind", blind), ("predict", FailurePredictorEstimator())])
    y = [int(e.success is False) for e in corpus]
    pipe.fit(corpus, y)
    assert pipe.predict(corpus).shape == (len(corpus),)
    assert 0.0 <= pipe.score(corpus, y) <= 1.0
    with pytest.raises(PredictorDataError, match="recorded outcomes"):
        FailurePredictorEstimator().fit(corpus, [1 - v for v in y])

"""Defaults a user can trust: KOS-ELM with its default parameters, in a StandardScaler pipeline, within a few points
of scikit-learn's default peer (SVR / KernelRidge(rbf) for regression, SVC for classification) on every bundled data
set of its task (3-fold CV; sets above 2000 rows subsampled to 2000). OS-ELM's defaults are the core ELM's (it is the
same model, learnt online): its scores equal the batch ELM's with default parameters on every set."""
import warnings

import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR

from kelm_nb.core import ELMClassifier, ELMRegressor
from kelm_nb.datasets import list_datasets, load_dataset
from kelm_nb.kos_elm import KOSELMClassifier, KOSELMRegressor, OSELMClassifier, OSELMRegressor

REGRESSION = [d['name'] for d in list_datasets() if d['task'] == 'regression']
CLASSIFICATION = [d['name'] for d in list_datasets() if d['task'] != 'regression']
TOLERANCE = 0.05     # "within a few points": R^2 or accuracy no more than 5 points below the best default peer


def _load(name):
    X, y = load_dataset(name)
    X, y = np.asarray(X, float), np.asarray(y)
    if len(X) > 2000:
        keep = np.random.default_rng(0).choice(len(X), 2000, replace=False)
        X, y = X[keep], y[keep]
    return X, y


def _score(est, X, y, classification):
    cv = (StratifiedKFold if classification else KFold)(3, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return cross_val_score(make_pipeline(StandardScaler(), est), X, y, cv=cv).mean()


@pytest.mark.parametrize('name', REGRESSION)
def test_default_regressors(name):
    X, y = _load(name)
    y = y.astype(float)
    peer = max(_score(SVR(), X, y, False), _score(KernelRidge(kernel='rbf'), X, y, False))
    score = _score(KOSELMRegressor(), X, y, False)
    assert np.isfinite(score) and score > peer - TOLERANCE, (score, peer)
    np.testing.assert_allclose(_score(OSELMRegressor(random_state=0), X, y, False),
                               _score(ELMRegressor(random_state=0), X, y, False), rtol=1e-6)


@pytest.mark.parametrize('name', CLASSIFICATION)
def test_default_classifiers(name):
    X, y = _load(name)
    peer = _score(SVC(), X, y, True)
    score = _score(KOSELMClassifier(), X, y, True)
    assert score > peer - TOLERANCE, (score, peer)
    assert _score(OSELMClassifier(random_state=0), X, y, True) == _score(ELMClassifier(random_state=0), X, y, True)

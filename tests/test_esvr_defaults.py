"""Defaults are part of correctness: `ESVR()` and `LSSVR()` with their default parameters, in a StandardScaler pipeline,
must be within a few R² points of scikit-learn's default peers on every bundled regression set (issue 11)."""
import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Ridge
from sklearn.metrics import r2_score
from sklearn.model_selection import ShuffleSplit
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR

from kelm_nb.datasets import list_datasets, load_dataset
from kelm_nb.esvr import ESVR, ESVRCV, LSSVR

REGRESSION_SETS = [d['name'] for d in list_datasets('regression')]
ESTIMATORS = {'ESVR': ESVR(random_state=0), 'ESVRCV': ESVRCV(random_state=0), 'LSSVR': LSSVR(), 'Ridge': Ridge(),
              'KernelRidge_rbf': KernelRidge(kernel='rbf'), 'SVR': SVR()}
TOLERANCE = 0.05   # "within a few points" of R²


def _mean_r2(name, max_rows=1500, n_splits=5):
    X, y = load_dataset(name)
    if len(y) > max_rows:
        keep = np.random.default_rng(0).permutation(len(y))[:max_rows]
        X, y = X[keep], y[keep]
    scores = {k: [] for k in ESTIMATORS}
    for train, test in ShuffleSplit(n_splits, test_size=1 / 3, random_state=0).split(X):
        for k, est in ESTIMATORS.items():
            model = make_pipeline(StandardScaler(), est).fit(X[train], y[train])
            prediction = model.predict(X[test])
            assert np.all(np.isfinite(prediction)), (name, k)
            scores[k].append(r2_score(y[test], prediction))
    return {k: float(np.mean(v)) for k, v in scores.items()}


@pytest.mark.parametrize('name', REGRESSION_SETS)
def test_defaults_within_a_few_points_of_sklearn(name):
    r = _mean_r2(name)
    assert r['ESVR'] >= max(r['Ridge'], r['KernelRidge_rbf'], r['SVR']) - TOLERANCE, r
    assert r['ESVRCV'] >= max(r['Ridge'], r['KernelRidge_rbf'], r['SVR']) - TOLERANCE, r
    assert r['LSSVR'] >= max(r['KernelRidge_rbf'], r['SVR']) - TOLERANCE, r     # the kernel peers


def test_default_esvr_is_not_degenerate():
    "The default model is not a constant: it explains a smooth target almost fully."
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 5))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2]
    model = make_pipeline(StandardScaler(), ESVR(random_state=0)).fit(X[:400], y[:400])
    assert r2_score(y[400:], model.predict(X[400:])) > 0.8

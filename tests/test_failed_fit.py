"""A failed `fit` must leave an already fitted estimator exactly as it was — including `n_features_in_`, which
scikit-learn's validation resets before the fit can fail (here: on a bad hyper-parameter, with wider X)."""
import numpy as np
import pytest
from sklearn.datasets import make_moons

from kelm_nb.core import ELMClassifier, ELMRegressor, KernelELMClassifier, KernelELMRegressor, RandomHiddenLayer
from kelm_nb.esvr import ESVR, LSSVR
from kelm_nb.kernels import ELMKernelSVR
from kelm_nb.kos_elm import KOSELMClassifier, KOSELMRegressor, OSELMClassifier, OSELMRegressor
from kelm_nb.mkl import MKLELMClassifier, MKLELMRegressor
from kelm_nb.nu_oelm import NuOELMClassifier, OELMClassifier

rng = np.random.default_rng(0)
X = rng.normal(size=(60, 3))
Y_CLASS, Y_REG = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int), np.sin(X[:, 0]) + X[:, 1]

CASES = [  # (estimator, the hyper-parameter to spoil, whether it is a classifier)
    (ELMRegressor(20, C=10.0, random_state=0), 'C', False), (ELMClassifier(20, C=10.0, random_state=0), 'C', True),
    (KernelELMRegressor(), 'C', False), (KernelELMClassifier(), 'C', True),
    (ELMKernelSVR(), 'C', False), (ESVR(20, random_state=0), 'nu', False), (LSSVR(), 'gamma_reg', False),
    (NuOELMClassifier(n_hidden=50, random_state=0), 'nu', True),
    (OELMClassifier(n_hidden=50, random_state=0), 'C', True),
    (MKLELMClassifier(), 'C', True), (MKLELMRegressor(), 'C', False),
    (OSELMRegressor(20, random_state=0), 'C', False), (OSELMClassifier(20, random_state=0), 'C', True),
    (KOSELMRegressor(), 'C', False), (KOSELMClassifier(), 'C', True),
]


@pytest.mark.parametrize('estimator,param,is_classifier', CASES, ids=[type(c[0]).__name__ for c in CASES])
def test_failed_fit_leaves_fitted_model_untouched(estimator, param, is_classifier):
    y = Y_CLASS if is_classifier else Y_REG
    before = estimator.fit(X, y).predict(X)
    good = estimator.get_params()[param]
    with pytest.raises(ValueError, match=param):
        estimator.set_params(**{param: -1.0}).fit(rng.normal(size=(60, 5)), y)
    estimator.set_params(**{param: good})
    assert estimator.n_features_in_ == 3
    np.testing.assert_array_equal(estimator.predict(X), before)


@pytest.mark.parametrize('est', [RandomHiddenLayer(10, random_state=0), ELMKernelSVR()])
def test_failed_fit_keeps_n_features_in(est):
    X, y = make_moons(60, random_state=0)
    est.fit(X, y.astype(float))
    with pytest.raises(ValueError):
        est.fit(np.c_[X, np.full(60, np.nan)], y.astype(float))   # a different width that fails validation
    assert est.n_features_in_ == 2
    (est.transform if hasattr(est, 'transform') else est.predict)(X)

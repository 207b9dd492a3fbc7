"Estimator checks, bad input and the jitted kernels of `kelm_nb.core`, called through the installed package."

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from kelm_nb.core import (ACTIVATIONS, ELMClassifier, ELMRegressor, KernelELMClassifier, KernelELMRegressor,
                          RandomHiddenLayer, _activate_inplace, compute_kernel, kernel_ridge_solve,
                          ridge_solve)


@parametrize_with_checks([RandomHiddenLayer(20, random_state=0), ELMRegressor(30, random_state=0),
                          ELMRegressor(30, C=10.0, random_state=0), ELMClassifier(30, C=10.0, random_state=0),
                          KernelELMRegressor(), KernelELMClassifier(C=10.0),
                          # the default constructors and the precomputed and Nystroem variants (issue 11)
                          ELMRegressor(), ELMClassifier(), KernelELMClassifier(),
                          KernelELMRegressor(kernel='precomputed'), KernelELMClassifier(kernel='precomputed'),
                          KernelELMRegressor(solver='nystrom', n_components=20, random_state=0),
                          KernelELMClassifier(solver='nystrom', n_components=20, random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize('dtype', [np.float64, np.float32])
@pytest.mark.parametrize('activation', [a for a in ACTIVATIONS if a != 'rbf'])
def test_activate_inplace(dtype, activation):
    rng = np.random.default_rng(0)
    H = rng.normal(size=(40, 7)).astype(dtype)
    b = rng.normal(size=7).astype(dtype)
    expected = H.astype(np.float64) + b
    _activate_inplace(H, b, ACTIVATIONS[activation])
    layer = RandomHiddenLayer(7, activation)
    ref = {'sigmoid': lambda z: 1 / (1 + np.exp(-z)), 'tanh': np.tanh, 'sin': np.sin,
           'hardlim': lambda z: (z >= 0) * 1.0, 'tribas': lambda z: np.maximum(1 - abs(z), 0),
           'exp': lambda z: np.exp(-z), 'erf': __import__('scipy.special').special.erf,
           'relu': lambda z: np.maximum(z, 0), 'linear': lambda z: z}[layer.activation]
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(H, ref(expected), rtol=tol, atol=tol)
    assert H.dtype == dtype


@pytest.mark.parametrize('dtype', [np.float64, np.float32])
def test_rbf_nodes(dtype):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 4)).astype(dtype)
    layer = RandomHiddenLayer(9, 'rbf', random_state=0).fit(X)
    H = layer.transform(X)
    d2 = ((X[:, None, :].astype(float) - layer.weights_.T[None]) ** 2).sum(-1)
    np.testing.assert_allclose(H, np.exp(-abs(layer.biases_) * d2), rtol=1e-4 if dtype == np.float32 else 1e-10,
                               atol=1e-6)
    assert H.dtype == dtype


def test_block_accumulation_matches_direct_solve(monkeypatch):
    "Tall problems accumulate H'H by blocks; the result must equal the one-shot ridge solution on the whole H."
    import kelm_nb.core as core
    from kelm_nb.core import ridge_solve
    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(1000, 5)), rng.normal(size=1000)
    monkeypatch.setattr(core, 'block_rows', lambda width, max_bytes=0: 128)   # 8 blocks
    est = ELMRegressor(40, C=5.0, fit_intercept=False, random_state=0).fit(X, y)
    direct = ridge_solve(est.hidden_layer_.transform(X), y, 5.0)
    np.testing.assert_allclose(est.coef_, direct, rtol=1e-9, atol=1e-12)


def test_multi_output_regression():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3))
    Y = np.c_[np.sin(X[:, 0]), X[:, 1] ** 2]
    for est in (ELMRegressor(30, C=100.0, random_state=0), KernelELMRegressor(C=100.0)):
        both = est.fit(X, Y).predict(X)
        assert both.shape == (60, 2)
        np.testing.assert_allclose(both[:, 1], est.fit(X, Y[:, 1]).predict(X), rtol=1e-9, atol=1e-9)


def test_ridge_solve_dual_equals_primal_float32():
    rng = np.random.default_rng(4)
    H, T = rng.normal(size=(50, 20)).astype(np.float32), rng.normal(size=50).astype(np.float32)
    np.testing.assert_allclose(ridge_solve(H, T, 1.0, form='dual'), ridge_solve(H, T, 1.0, form='primal'),
                               rtol=1e-4, atol=1e-5)


BAD_INPUTS = [
    (lambda: ELMRegressor().fit([[1.0, np.nan]] * 3, [1, 2, 3]), 'X'),
    (lambda: ELMRegressor().fit([[1.0, np.inf]] * 3, [1, 2, 3]), 'X'),
    (lambda: ELMRegressor().fit(np.ones((3, 2)), [1, np.nan, 3]), 'y'),
    (lambda: ELMRegressor().fit(np.ones((0, 2)), []), 'X'),
    (lambda: ELMRegressor().fit(np.ones(3), [1, 2, 3]), 'X'),
    (lambda: ELMRegressor().fit(np.ones((3, 2)), [1, 2]), 'X and y'),
    (lambda: ELMRegressor(n_hidden=0).fit(np.ones((3, 2)), [1, 2, 3]), 'n_hidden'),
    (lambda: ELMRegressor(C=0).fit(np.ones((3, 2)), [1, 2, 3]), 'C'),
    (lambda: ELMRegressor(activation='swish').fit(np.ones((3, 2)), [1, 2, 3]), 'activation'),
    (lambda: KernelELMRegressor(C=-2).fit(np.ones((3, 2)), [1, 2, 3]), 'C'),
    (lambda: KernelELMRegressor(kernel='spline').fit(np.ones((3, 2)), [1, 2, 3]), 'kernel'),
    (lambda: KernelELMRegressor(gamma=-1.0).fit(np.ones((3, 2)), [1, 2, 3]), 'gamma'),
    (lambda: KernelELMRegressor(kernel='precomputed').fit(np.ones((3, 2)), [1, 2, 3]), 'X must be a square'),
    (lambda: KernelELMClassifier().fit(np.ones((3, 2)), [1, 1, 1]), 'y'),
]


@pytest.mark.parametrize('call,name', BAD_INPUTS)
def test_bad_input_names_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_failed_fit_keeps_model():
    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(40, 3)), rng.normal(size=40)
    for est in (ELMRegressor(20, C=1.0, random_state=0), KernelELMRegressor()):
        before = est.fit(X, y).predict(X)
        with pytest.raises(ValueError):
            est.fit(X[:, :1].ravel(), y)
        with pytest.raises(ValueError):
            est.set_params(C=-1.0).fit(X, y)
        np.testing.assert_array_equal(est.predict(X), before)


def test_precomputed_wrong_shape_in_predict():
    rng = np.random.default_rng(6)
    X, y = rng.normal(size=(30, 3)), rng.normal(size=30)
    K = compute_kernel(X, X, 'rbf')
    m = KernelELMRegressor(kernel='precomputed').fit(K, y)
    with pytest.raises(ValueError, match='precomputed kernel'):
        m.predict(K[:, :10])


def test_kernel_ridge_solve_does_not_modify_input():
    rng = np.random.default_rng(7)
    A = rng.normal(size=(20, 20))
    K = A @ A.T
    K0 = K.copy()
    kernel_ridge_solve(K, np.ones(20), 1.0)
    np.testing.assert_array_equal(K, K0)


@pytest.mark.parametrize('dtype', [np.float64, np.float32])
@pytest.mark.parametrize('overwrite', [False, True])
def test_spd_solve_fallback_sees_the_original_matrix(dtype, overwrite):
    "A failed in-place Cholesky must not leave a half-overwritten matrix to the least-squares fallback."
    from kelm_nb.core import IllConditionedWarning, spd_solve
    rng = np.random.default_rng(8)
    M = rng.normal(size=(40, 40))
    A = (M + M.T).astype(dtype)
    B = rng.normal(size=40).astype(dtype)
    work = A.copy()
    with pytest.warns(IllConditionedWarning):
        x = spd_solve(work, B, overwrite_a=overwrite)
    np.testing.assert_array_equal(work, A)
    tol = 1e-8 if dtype == np.float64 else 2e-2
    np.testing.assert_allclose(x, np.linalg.lstsq(A.astype(float), B.astype(float), rcond=None)[0], rtol=tol, atol=tol)

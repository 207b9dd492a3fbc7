"Tests of kelm_nb.kernels through the installed package: estimator checks, jitted kernels (float64 and float32), bad input."
import numpy as np
import pytest
from sklearn.metrics import pairwise as skpw
from sklearn.svm import SVR
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

import kelm_nb
from kelm_nb import core
from kelm_nb.kernels import (ELMKernelSVR, asin_array, asymptotic_elm_kernel, elm_kernel, laplacian_kernel,
                             linear_kernel, normalize_kernel, polynomial_kernel, rbf_kernel, reproduce)

DTYPES = [np.float64, np.float32]
RTOL = {np.float64: 1e-12, np.float32: 2e-5}


@parametrize_with_checks([ELMKernelSVR(), ELMKernelSVR(sigma_w=1e3, normalize=False)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _eq15(X, Z, s):
    a = 1 / (2 * s ** 2)
    return 2 / np.pi * np.arcsin((1 + X @ Z.T) / np.sqrt(np.outer(a + 1 + (X ** 2).sum(1), a + 1 + (Z ** 2).sum(1))))


@pytest.mark.parametrize('dtype', DTYPES)
def test_asin_array(dtype):
    x = np.linspace(-1, 1, 10001).astype(dtype)
    out = asin_array(x, np.empty_like(x))
    assert out.dtype == dtype
    np.testing.assert_allclose(out, np.arcsin(x.astype(np.float64)), rtol=RTOL[dtype], atol=0)


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('sigma_w', [1e-3, 0.3, 1.0, 1e3])
def test_asymptotic_matches_formula(dtype, sigma_w):
    rng = np.random.default_rng(1)
    X, Z = rng.standard_normal((37, 5)), 2 * rng.standard_normal((23, 5))
    Kref = _eq15(X, Z, sigma_w)
    K = asymptotic_elm_kernel(X.astype(dtype), Z.astype(dtype), sigma_w=sigma_w, normalize=False)
    assert K.dtype == dtype
    np.testing.assert_allclose(K, Kref, rtol=RTOL[dtype], atol=1e-6 if dtype == np.float32 else 1e-15)
    kx, kz = np.diag(_eq15(X, X, sigma_w)), np.diag(_eq15(Z, Z, sigma_w))
    Kn = asymptotic_elm_kernel(X.astype(dtype), Z.astype(dtype), sigma_w=sigma_w)
    np.testing.assert_allclose(Kn, Kref / np.sqrt(np.outer(kx, kz)), rtol=RTOL[dtype], atol=1e-6 if dtype == np.float32 else 1e-15)


@pytest.mark.parametrize('dtype', DTYPES)
def test_asymptotic_symmetric_psd_unit_diagonal(dtype):
    rng = np.random.default_rng(2)
    X = np.vstack([rng.standard_normal((120, 4)) * 5, rng.standard_normal((40, 4))])
    X = np.vstack([X, X[:10]]).astype(dtype)
    for s in (1e-3, 1.0, 1e3):
        K = asymptotic_elm_kernel(X, sigma_w=s)
        assert K.dtype == dtype and np.array_equal(K, K.T)
        assert np.all(np.diag(K) == 1.0) and np.abs(K).max() <= 1.0
        assert np.linalg.eigvalsh(K.astype(np.float64)).min() >= -1e-10 * len(K) - (1e-5 if dtype == np.float32 else 0)
    # Z given as the same object is the symmetric case; Z a copy gives the same numbers up to rounding
    np.testing.assert_array_equal(asymptotic_elm_kernel(X, X), asymptotic_elm_kernel(X))
    np.testing.assert_allclose(asymptotic_elm_kernel(X, X.copy()), asymptotic_elm_kernel(X), rtol=1e-6, atol=1e-6)


def test_finite_p_converges_to_eq15():
    rng = np.random.default_rng(3)
    X, Z = rng.standard_normal((6, 3)), rng.standard_normal((4, 3))
    Kinf = asymptotic_elm_kernel(X, Z, sigma_w=1.5, normalize=False)
    errs = []
    for p in (100, 10_000):
        Kp = elm_kernel(X, Z, n_hidden=p, weight_scale=1.5, bias_scale=1.5, random_state=p)
        # each entry is a mean of p products bounded by 1: |error| <= 5 / sqrt(p) except with tiny probability
        assert np.abs(Kp - Kinf).max() < 5 / np.sqrt(p)
        errs.append(np.sqrt(((Kp - Kinf) ** 2).mean()))
    assert 3 < errs[0] / errs[1] < 30        # ideal ratio 10 = sqrt(10000 / 100)


@pytest.mark.parametrize('dtype', DTYPES)
def test_elm_kernel_is_feature_dot_product(dtype):
    rng = np.random.default_rng(4)
    X, Z = rng.standard_normal((10, 3)).astype(dtype), rng.standard_normal((7, 3)).astype(dtype)
    layer = core.RandomHiddenLayer(64, 'sigmoid', random_state=5).fit(X)
    K = elm_kernel(X, Z, n_hidden=64, activation='sigmoid', distribution='uniform', random_state=5)
    assert K.dtype == dtype
    np.testing.assert_allclose(K, layer.transform(X) @ layer.transform(Z).T / 64, rtol=RTOL[dtype])


@pytest.mark.parametrize('dtype', DTYPES)
def test_standard_kernels_equal_core_and_sklearn(dtype):
    rng = np.random.default_rng(6)
    X, Z = rng.standard_normal((60, 7)).astype(dtype), rng.standard_normal((45, 7)).astype(dtype)
    tol = dict(rtol=RTOL[dtype], atol=1e-6 if dtype == np.float32 else 1e-14)
    for A, B in ((X, Z), (X, X)):
        np.testing.assert_allclose(rbf_kernel(A, B, 0.3), skpw.rbf_kernel(A, B, gamma=0.3), **tol)
        np.testing.assert_allclose(rbf_kernel(A, B), skpw.rbf_kernel(A, B), **tol)
        A64 = A.astype(np.float64)
        D = skpw.euclidean_distances(A64, A64 if B is A else B.astype(np.float64))   # same object: exact 0 diagonal
        np.testing.assert_allclose(laplacian_kernel(A, B, 0.3), np.exp(-0.3 * D), **tol)
        np.testing.assert_allclose(polynomial_kernel(A, B, 3, 0.2, 1.5), skpw.polynomial_kernel(A, B, 3, 0.2, 1.5), **tol)
        np.testing.assert_allclose(polynomial_kernel(A, B, 2.5, 0.2, 4.0), skpw.polynomial_kernel(A, B, 2.5, 0.2, 4.0), **tol)
        np.testing.assert_allclose(linear_kernel(A, B), skpw.linear_kernel(A, B), **tol)
        for name in ('rbf', 'laplacian', 'poly', 'linear'):
            assert core.compute_kernel(A, B, name).dtype == dtype
        assert rbf_kernel(A, B).dtype == dtype and laplacian_kernel(A, B).dtype == dtype
    assert np.all(np.diag(rbf_kernel(X)) == 1) and np.all(np.diag(laplacian_kernel(X)) == 1)


@pytest.mark.parametrize('dtype', DTYPES)
def test_parallel_path(dtype, monkeypatch):
    "The prange passes (forced by lowering the one-thread threshold) give the same numbers as the serial ones."
    from kelm_nb import kernels
    rng = np.random.default_rng(12)
    X = rng.standard_normal((300, 6)).astype(dtype)
    Z = rng.standard_normal((200, 6)).astype(dtype)
    tol = dict(rtol=RTOL[dtype], atol=1e-6 if dtype == np.float32 else 1e-14)
    fs = (lambda A, B: asymptotic_elm_kernel(A, B, 2.0), lambda A, B: asymptotic_elm_kernel(A, B, 0.5, False),
          lambda A, B: rbf_kernel(A, B, 0.2), lambda A, B: laplacian_kernel(A, B, 0.2),
          lambda A, B: polynomial_kernel(A, B, 4, 0.1, 1.0))
    assert X.shape[0] * Z.shape[0] < kernels._PARALLEL_MIN
    serial = [(f(X, Z), f(X, None)) for f in fs]
    monkeypatch.setattr(kernels, '_PARALLEL_MIN', 1)
    for f, (rect_s, sym_s) in zip(fs, serial):
        rect_p, sym_p = f(X, Z), f(X, None)
        assert rect_p.dtype == dtype and sym_p.dtype == dtype
        np.testing.assert_array_equal(rect_p, rect_s)
        np.testing.assert_array_equal(sym_p, sym_s)
        assert np.array_equal(sym_p, sym_p.T)
        big = f(X, X.copy())                                        # rectangular path on the same points
        off = ~np.eye(len(X), dtype=bool)      # k(X, X) has an exact diagonal; k(X, copy of X) rounds there
        np.testing.assert_allclose(sym_p[off], big[off], **tol)
        np.testing.assert_allclose(np.diag(sym_p), np.diag(big), rtol=0, atol=1e-6)
    K = asymptotic_elm_kernel(X, sigma_w=0.7, normalize=False)
    np.testing.assert_allclose(K, _eq15(X.astype(np.float64), X.astype(np.float64), 0.7), **tol)


def test_registry():
    for name in ('asymptotic', 'elm', 'rbf', 'laplacian', 'poly', 'linear'):
        assert name in core.KERNELS
    rng = np.random.default_rng(7)
    X = rng.standard_normal((30, 3))
    np.testing.assert_allclose(core.compute_kernel(X, X, 'asymptotic'), asymptotic_elm_kernel(X), rtol=1e-14)
    np.testing.assert_allclose(core.compute_kernel(X, X[:5], 'elm'), elm_kernel(X, X[:5]), rtol=1e-14)


def test_registry_passes_kernel_params():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((30, 3))
    np.testing.assert_allclose(core.compute_kernel(X, X, 'asymptotic', kernel_params={'sigma_w': 10.0, 'normalize': False}),
                               asymptotic_elm_kernel(X, sigma_w=10.0, normalize=False), rtol=1e-14)
    m = core.KernelELMRegressor(C=10.0, kernel='asymptotic', kernel_params={'sigma_w': 10.0}).fit(X, X[:, 0])
    np.testing.assert_allclose(m.predict(X), asymptotic_elm_kernel(X, sigma_w=10.0) @ m.dual_coef_, rtol=1e-12)


@pytest.mark.parametrize('dtype', DTYPES)
def test_normalize_kernel(dtype):
    rng = np.random.default_rng(9)
    X, Z = rng.standard_normal((20, 3)), rng.standard_normal((8, 3))
    K = (_eq15(np.vstack([X, Z]), np.vstack([X, Z]), 2.0)).astype(dtype)
    Kn = normalize_kernel(K)
    assert Kn.dtype == dtype and np.all(np.diag(Kn) == 1)
    np.testing.assert_allclose(Kn, asymptotic_elm_kernel(np.vstack([X, Z]), sigma_w=2.0), rtol=RTOL[dtype], atol=1e-6)
    Kr = normalize_kernel(K[:20, 20:], np.diag(K)[:20], np.diag(K)[20:])
    np.testing.assert_allclose(Kr, asymptotic_elm_kernel(X, Z, sigma_w=2.0), rtol=RTOL[dtype], atol=1e-6)


def test_elm_kernel_svr_equals_precomputed_svr():
    rng = np.random.default_rng(10)
    X = rng.uniform(-2, 2, (150, 4)) * [1, 10, 100, 0.1]
    y = 300 + 40 * np.sin(X[:, 0]) + X[:, 1] + rng.standard_normal(150)
    Xtr, ytr, Xte = X[:100], y[:100], X[100:]
    for s in (1e-3, 1.0, 1e3):
        m = ELMKernelSVR(C=30.0, epsilon=0.02, sigma_w=s).fit(Xtr, ytr)
        sc = StandardScaler().fit(Xtr)
        mu, sd = ytr.mean(), ytr.std()
        ref = SVR(kernel='precomputed', C=30.0, epsilon=0.02).fit(asymptotic_elm_kernel(sc.transform(Xtr), sigma_w=s),
                                                                   (ytr - mu) / sd)
        pred = mu + sd * ref.predict(asymptotic_elm_kernel(sc.transform(Xte), sc.transform(Xtr), sigma_w=s))
        np.testing.assert_allclose(m.predict(Xte), pred, rtol=1e-10, atol=1e-8)
        np.testing.assert_array_equal(m.support_, ref.support_)
    # float32 input gives the same model
    m32 = ELMKernelSVR(C=30.0, epsilon=0.02).fit(Xtr.astype(np.float32), ytr)
    np.testing.assert_allclose(m32.predict(Xte), ELMKernelSVR(C=30.0, epsilon=0.02).fit(
        Xtr.astype(np.float32).astype(np.float64), ytr).predict(Xte), rtol=1e-10)


@pytest.mark.parametrize('bad, name', [
    (dict(sigma_w=0.0), 'sigma_w'), (dict(sigma_w=-1.0), 'sigma_w'), (dict(sigma_w=np.inf), 'sigma_w'),
])
def test_kernel_bad_hyper_parameters(bad, name):
    X = np.ones((3, 2))
    with pytest.raises(ValueError, match=name):
        asymptotic_elm_kernel(X, **bad)


def test_kernel_bad_arrays():
    X = np.random.default_rng(0).standard_normal((5, 3))
    for f in (asymptotic_elm_kernel, rbf_kernel, laplacian_kernel, polynomial_kernel, linear_kernel, elm_kernel):
        with pytest.raises(ValueError, match='Z'):
            f(X, X[:, :2])
        with pytest.raises(ValueError, match='X'):
            f(np.array([[np.nan, 1.0, 2.0]]))
        with pytest.raises(ValueError, match='Z'):
            f(X, np.array([[np.inf, 1.0, 2.0]]))
        with pytest.raises(ValueError, match='X'):
            f(np.ones(3))
        with pytest.raises(ValueError, match='X'):
            f(np.empty((0, 3)))
    with pytest.raises(ValueError, match='gamma'):
        rbf_kernel(X, gamma=-1.0)
    with pytest.raises(TypeError, match='normalize'):
        asymptotic_elm_kernel(X, normalize='yes')
    with pytest.raises(ValueError, match='diag_X'):
        normalize_kernel(np.ones((3, 2)))
    with pytest.raises(ValueError, match='diag'):
        normalize_kernel(np.ones((3, 2)), np.ones(3), np.ones(3))


def test_svr_bad_input_and_failed_fit_keeps_model():
    rng = np.random.default_rng(11)
    X, y = rng.standard_normal((40, 3)), rng.standard_normal(40)
    m = ELMKernelSVR(C=5.0).fit(X, y)
    before = m.predict(X)
    for params, name in ((dict(C=0.0), 'C'), (dict(epsilon=-1.0), 'epsilon'), (dict(sigma_w=0.0), 'sigma_w'),
                         (dict(max_iter=0), 'max_iter')):
        with pytest.raises(ValueError, match=name):
            m.set_params(**params).fit(X, y)
        m.set_params(C=5.0, epsilon=0.1, sigma_w=1.0, max_iter=-1)
    with pytest.raises(ValueError, match='X'):
        m.fit(np.vstack([X[:-1], [np.nan] * 3]), y)
    with pytest.raises(ValueError):
        m.fit(X, y[:-1])
    np.testing.assert_array_equal(m.predict(X), before)


def test_reproduction_pipeline_smoke():
    "The reproduction's building blocks on a tiny protocol (the real quick mode runs in the notebook)."
    from kelm_nb import kernels
    from kelm_nb.datasets import load_dataset
    X, y = load_dataset('cpu')
    protocol = dict(outer=2, inner=2, C=[1.0, 100.0], epsilon=[0.1], gamma=[0.1], sigmas=[1e-3, 1.0], max_iter=10_000,
                    subsample={})
    res = kernels.frenay_cross_tests(X, y, protocol)
    assert set(res) == {'gaussian', 1e-3, 1.0}
    assert all(np.isfinite(r.mean) and len(r.fold_errors) == 2 for r in res.values())
    tables = [kernels.frenay_table('cpu', res, protocol, False), kernels.claim_table({'cpu': res}, protocol),
              kernels.timing_table({'cpu': res}, protocol)]
    assert 'Gaussian kernel' in str(tables[0]) and 'cpu' in str(tables[1]) and str(tables[2])
    assert callable(reproduce)

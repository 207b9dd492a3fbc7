"Tests of kelm_nb.kernels through the installed package: estimator checks, Gram passes (float64, float32), bad input."
import tracemalloc
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, WhiteKernel
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics import pairwise as skpw
from sklearn.preprocessing import StandardScaler
from sklearn.base import clone
from sklearn.svm import SVR
from sklearn.utils.estimator_checks import check_sample_weight_equivalence_on_dense_data, parametrize_with_checks

from kelm_nb import core, kernels
from kelm_nb.kernels import (AsymptoticELMKernel, ELMKernelSVR, asymptotic_elm_kernel, elm_kernel, laplacian_kernel,
                             linear_kernel, normalize_kernel, polynomial_kernel, rbf_kernel)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from kelm_nb import kernels as K

DTYPES = [np.float64, np.float32]
RTOL = {np.float64: 1e-12, np.float32: 2e-5}
ATOL = {np.float64: 1e-14, np.float32: 1e-6}
# Weights rescale C per sample in LIBSVM, which is exactly the dual of repeated rows; the fits agree to LIBSVM's
# stopping tolerance. scikit-learn marks the same check as an expected failure for its own SVR
# (sklearn.utils._test_common.instance_generator.PER_ESTIMATOR_XFAIL_CHECKS[SVR]: "sample_weight is not equivalent
# to removing/repeating samples", scikit-learn's sample-weight meta-issue), and SVR with its default gamma='scale'
# (the unweighted variance of X) fails it even at tol=1e-12, where ELMKernelSVR passes
# (test_sample_weight_equivalence_at_tight_tolerance).
_TOL_NOTE = ("LIBSVM stops at tol=1e-3, so weights and repeated rows agree only to that tolerance (scikit-learn's "
             "SVR is marked the same way); with tol=1e-12 the check passes")


VARIANTS = [ELMKernelSVR(), ELMKernelSVR(sigma_w=1e3, normalize=False), ELMKernelSVR(sigma_w=np.inf)]


@parametrize_with_checks(VARIANTS, expected_failed_checks=lambda est: {
    'check_sample_weight_equivalence_on_dense_data': _TOL_NOTE})
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_sample_weight_equivalence_at_tight_tolerance():
    check_sample_weight_equivalence_on_dense_data('ELMKernelSVR', ELMKernelSVR(tol=1e-12))
    check_sample_weight_equivalence_on_dense_data('ELMKernelSVR', ELMKernelSVR(C=100.0, tol=1e-12))


def _eq15(X, Z, s):
    a = 0.0 if np.isinf(s) else 1 / (2 * s ** 2)
    r = (1 + X @ Z.T) / np.sqrt(np.outer(a + 1 + (X ** 2).sum(1), a + 1 + (Z ** 2).sum(1)))
    return 2 / np.pi * np.arcsin(np.clip(r, -1, 1))


def test_inlined_arcsin():
    x = np.concatenate([np.linspace(-1, 1, 100_001), [0.625, np.nextafter(0.625, 1), 1e-300]])
    np.testing.assert_allclose(kernels._asin_clipped(x), np.arcsin(x), rtol=4.5e-16, atol=0)
    np.testing.assert_array_equal(kernels._asin_clipped(np.array([2.0, -3.0])), [np.pi / 2, -np.pi / 2])


def test_arcsin_floors():
    "The benchmark floors of the Gram pass: arcsin of the lower triangle, with and without its mirror."
    A = np.tril(np.random.default_rng(5).uniform(-1, 1, (77, 77)))
    np.testing.assert_allclose(kernels._arcsin_lower(A.copy()), np.arcsin(A), rtol=4.5e-16, atol=0)
    S = kernels._arcsin_symmetric(A.copy())
    np.testing.assert_allclose(S, np.arcsin(A + np.tril(A, -1).T), rtol=4.5e-16, atol=0)
    assert np.array_equal(S, S.T)


def test_symmetric_gram_equals_the_formula_with_huge_rows():
    "k(X, X) by the tiled pass equals eq. 16 written out and the rectangular pass, also beside a row of huge norm."
    rng = np.random.default_rng(6)
    X = rng.standard_normal((70, 4))
    X[3] *= 1e300
    for sigma_w in (1e-3, 1.0, 1e3):
        K = asymptotic_elm_kernel(X, sigma_w=sigma_w)
        assert np.all(np.isfinite(K)) and np.array_equal(K, K.T) and np.all(np.diag(K) == 1.0)
        Kx = _eq15(np.delete(X, 3, 0), np.delete(X, 3, 0), sigma_w)
        d = np.sqrt(np.diag(Kx))
        np.testing.assert_allclose(np.delete(np.delete(K, 3, 0), 3, 1), Kx / np.outer(d, d), rtol=1e-12, atol=1e-13)
        R = asymptotic_elm_kernel(X, X.copy(), sigma_w=sigma_w)     # the rectangular pass: the same entries ...
        off = ~np.eye(len(X), dtype=bool)
        np.testing.assert_allclose(R[off], K[off], rtol=1e-15, atol=1e-15)
        # ... and a diagonal arcsin(r_ii) d_i^2 near r_ii = 1, where a rounding of r is amplified by 1/sqrt(1 - r^2)
        np.testing.assert_allclose(np.diag(R), 1.0, rtol=0, atol=1e-12)


@pytest.mark.parametrize('dtype', DTYPES)
@pytest.mark.parametrize('sigma_w', [1e-3, 0.3, 1.0, 1e3, np.inf])
def test_asymptotic_matches_formula(dtype, sigma_w):
    rng = np.random.default_rng(1)
    X, Z = rng.standard_normal((37, 5)), 2 * rng.standard_normal((23, 5))
    Kref = _eq15(X, Z, sigma_w)
    K = asymptotic_elm_kernel(X.astype(dtype), Z.astype(dtype), sigma_w=sigma_w, normalize=False)
    assert K.dtype == dtype
    np.testing.assert_allclose(K, Kref, rtol=RTOL[dtype], atol=ATOL[dtype])
    # at sigma_w = inf, k(x, x) = (2/pi) arcsin(1) = 1 exactly, where the NumPy formula rounds r_ii below 1
    kx, kz = (np.diag(_eq15(A, A, sigma_w)) if np.isfinite(sigma_w) else np.ones(len(A)) for A in (X, Z))
    Kn = asymptotic_elm_kernel(X.astype(dtype), Z.astype(dtype), sigma_w=sigma_w)
    np.testing.assert_allclose(Kn, Kref / np.sqrt(np.outer(kx, kz)), rtol=RTOL[dtype], atol=ATOL[dtype])


@pytest.mark.parametrize('dtype', DTYPES)
def test_asymptotic_symmetric_psd_unit_diagonal(dtype):
    rng = np.random.default_rng(2)
    X = np.vstack([rng.standard_normal((120, 4)) * 5, rng.standard_normal((40, 4))])
    X = np.vstack([X, X[:10]]).astype(dtype)
    for s in (1e-3, 1.0, 1e3, np.inf):
        K = asymptotic_elm_kernel(X, sigma_w=s)
        assert K.dtype == dtype and np.array_equal(K, K.T)
        assert np.all(np.diag(K) == 1.0) and np.abs(K).max() <= 1.0
        assert np.linalg.eigvalsh(K.astype(np.float64)).min() >= -1e-10 * len(K) - (1e-5 if dtype == np.float32 else 0)
    np.testing.assert_array_equal(asymptotic_elm_kernel(X, X), asymptotic_elm_kernel(X))
    np.testing.assert_allclose(asymptotic_elm_kernel(X, X.copy()), asymptotic_elm_kernel(X), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize('n', [1, 31, 32, 33, 65, 100])
def test_symmetric_tiles_cover_every_entry(n):
    "The tiled k(X, X) equals the rectangular pass on every entry, for sizes around the tile width."
    X = np.random.default_rng(n).standard_normal((n, 3))
    sym, rect = asymptotic_elm_kernel(X, sigma_w=0.7, normalize=False), asymptotic_elm_kernel(X, X.copy(), 0.7, False)
    np.testing.assert_allclose(sym, rect, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(sym, _eq15(X, X, 0.7), rtol=1e-12, atol=1e-15)


def test_huge_norms_give_the_limit_not_nan():
    rng = np.random.default_rng(13)
    X = rng.standard_normal((40, 4))
    for scale in (1e154, 1e200, 1e300):
        Xh = X.copy()
        Xh[:6] *= scale
        for norm in (True, False):
            K = asymptotic_elm_kernel(Xh, normalize=norm)
            assert np.isfinite(K).all() and np.array_equal(K, K.T)
            np.testing.assert_allclose(K[:6, 6:], asymptotic_elm_kernel(X[:6] * 1e100, X[6:], normalize=norm),
                                       rtol=1e-12, atol=1e-14)
            np.testing.assert_array_equal(K[6:, 6:], asymptotic_elm_kernel(X[6:], normalize=norm))
        assert np.isfinite(asymptotic_elm_kernel(Xh[:6], Xh[6:])).all()
    assert np.isfinite(asymptotic_elm_kernel(np.full((3, 2), 1.7e308), sigma_w=1e-100)).all()


def test_sigma_w_infinity_is_the_arc_cosine_limit():
    rng = np.random.default_rng(14)
    X, Z = rng.standard_normal((12, 3)), rng.standard_normal((9, 3))
    cos = (1 + X @ Z.T) / np.sqrt(np.outer(1 + (X ** 2).sum(1), 1 + (Z ** 2).sum(1)))
    for norm in (True, False):
        np.testing.assert_allclose(asymptotic_elm_kernel(X, Z, sigma_w=np.inf, normalize=norm),
                                   1 - 2 * np.arccos(cos) / np.pi, atol=1e-14)
    np.testing.assert_allclose(asymptotic_elm_kernel(X, Z, sigma_w=1e8), asymptotic_elm_kernel(X, Z, np.inf), atol=1e-7)


def test_pair_of_rows_and_kernel_ridge():
    rng = np.random.default_rng(15)
    X, y = rng.standard_normal((40, 3)), rng.standard_normal(40)
    assert asymptotic_elm_kernel(X[0], X[1], sigma_w=3.0) == asymptotic_elm_kernel(X[:1], X[1:2], sigma_w=3.0)[0, 0]
    K = asymptotic_elm_kernel(X, sigma_w=3.0)
    ref = KernelRidge(kernel='precomputed', alpha=0.3).fit(K, y).predict(K)
    for kernel, params in ((asymptotic_elm_kernel, {'sigma_w': 3.0}), (AsymptoticELMKernel(3.0), None)):
        pred = KernelRidge(kernel=kernel, kernel_params=params, alpha=0.3).fit(X, y).predict(X)
        np.testing.assert_allclose(pred, ref, rtol=1e-11, atol=1e-12)


def test_finite_p_converges_to_eq15():
    rng = np.random.default_rng(3)
    X, Z = rng.standard_normal((6, 3)), rng.standard_normal((4, 3))
    Kinf = asymptotic_elm_kernel(X, Z, sigma_w=1.5, normalize=False)
    errs = []
    for p in (100, 10_000):
        Kp = elm_kernel(X, Z, n_hidden=p, weight_scale=1.5, bias_scale=1.5, random_state=p)
        assert np.abs(Kp - Kinf).max() < 5 / np.sqrt(p)     # a mean of p products bounded by 1
        errs.append(np.sqrt(((Kp - Kinf) ** 2).mean()))
    assert 3 < errs[0] / errs[1] < 30        # ideal ratio 10 = sqrt(10000 / 100)


@pytest.mark.parametrize('dtype', DTYPES)
def test_elm_kernel_is_feature_dot_product(dtype):
    rng = np.random.default_rng(4)
    X, Z = rng.standard_normal((10, 3)).astype(dtype), rng.standard_normal((7, 3)).astype(dtype)
    layer = core.RandomHiddenLayer(64, 'sigmoid', weight_range=(-1.0, 1.0), random_state=5).fit(X)
    K = elm_kernel(X, Z, n_hidden=64, activation='sigmoid', distribution='uniform', random_state=5)
    assert K.dtype == dtype
    np.testing.assert_allclose(K, layer.transform(X) @ layer.transform(Z).T / 64, rtol=RTOL[dtype])


def test_elm_kernel_refuses_overflowing_features():
    with pytest.raises(ValueError, match='hidden-layer outputs'):
        elm_kernel(np.full((3, 2), 1e3), activation='exp', distribution='uniform', weight_range=(-2.0, -1.0))


@pytest.mark.parametrize('dtype', DTYPES)
def test_standard_kernels_equal_sklearn(dtype):
    rng = np.random.default_rng(6)
    X, Z = rng.standard_normal((60, 7)).astype(dtype), rng.standard_normal((45, 7)).astype(dtype)
    tol = dict(rtol=RTOL[dtype], atol=ATOL[dtype])
    for A, B in ((X, Z), (X, X)):
        np.testing.assert_allclose(rbf_kernel(A, B, 0.3), skpw.rbf_kernel(A, B, gamma=0.3), **tol)
        np.testing.assert_allclose(rbf_kernel(A, B), skpw.rbf_kernel(A, B), **tol)
        A64 = A.astype(np.float64)
        D = skpw.euclidean_distances(A64, A64 if B is A else B.astype(np.float64))
        np.testing.assert_allclose(laplacian_kernel(A, B, 0.3), np.exp(-0.3 * D), **tol)
        np.testing.assert_allclose(polynomial_kernel(A, B, 3, 0.2, 1.5), skpw.polynomial_kernel(A, B, 3, 0.2, 1.5),
                                   **tol)
        np.testing.assert_allclose(polynomial_kernel(A, B, 2.5, 0.2, 4.0), skpw.polynomial_kernel(A, B, 2.5, 0.2, 4.0),
                                   **tol)
        np.testing.assert_allclose(linear_kernel(A, B), skpw.linear_kernel(A, B), **tol)
        for f in (rbf_kernel, laplacian_kernel, polynomial_kernel):
            assert f(A, B).dtype == dtype
    assert np.all(np.diag(rbf_kernel(X)) == 1) and np.all(np.diag(laplacian_kernel(X)) == 1)
    np.testing.assert_array_equal(rbf_kernel(X), rbf_kernel(X).T)


def test_laplacian_is_l2_not_sklearns_l1():
    X = np.array([[0.0, 0.0], [3.0, 4.0]])
    assert laplacian_kernel(X, gamma=1.0)[0, 1] == pytest.approx(np.exp(-5.0))
    assert skpw.laplacian_kernel(X, gamma=1.0)[0, 1] == pytest.approx(np.exp(-7.0))
    assert 'L2' in laplacian_kernel.__doc__ and 'L1' in laplacian_kernel.__doc__


@pytest.mark.parametrize('dtype', DTYPES)
def test_parallel_path(dtype, monkeypatch):
    "The prange passes (forced by lowering the one-thread threshold) give the same numbers as the serial ones."
    rng = np.random.default_rng(12)
    X = rng.standard_normal((300, 6)).astype(dtype)
    Z = rng.standard_normal((200, 6)).astype(dtype)
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


def test_registry_covers_the_standard_kernels_with_core_semantics():
    for name in ('asymptotic', 'elm', 'rbf', 'laplacian', 'poly', 'linear'):
        assert core.KERNELS[name][0].__module__ == 'kelm_nb.kernels', name
    rng = np.random.default_rng(7)
    X, Z = rng.standard_normal((30, 3)), rng.standard_normal((11, 3))
    refs = {'rbf': skpw.rbf_kernel(X, Z, gamma=1 / 3), 'laplacian': np.exp(-skpw.euclidean_distances(X, Z) / 3),
            'poly': skpw.polynomial_kernel(X, Z, degree=3, gamma=1 / 3, coef0=1.0), 'linear': X @ Z.T}
    for name, ref in refs.items():
        np.testing.assert_allclose(core.compute_kernel(X, Z, name), ref, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(core.compute_kernel(X, Z, 'poly', gamma=0.5, degree=2, coef0=0.0),
                               skpw.polynomial_kernel(X, Z, degree=2, gamma=0.5, coef0=0.0), rtol=1e-12)
    np.testing.assert_allclose(core.compute_kernel(X, X, 'asymptotic'), asymptotic_elm_kernel(X), rtol=1e-14)
    np.testing.assert_allclose(core.compute_kernel(X, X[:5], 'elm'), elm_kernel(X, X[:5]), rtol=1e-14)
    np.testing.assert_allclose(core.compute_kernel(X, X, 'asymptotic', kernel_params={'sigma_w': 10.0,
                                                                                      'normalize': False}),
                               asymptotic_elm_kernel(X, sigma_w=10.0, normalize=False), rtol=1e-14)


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


@pytest.mark.parametrize('normalize', [True, False])
@pytest.mark.parametrize('sigma_w', [0.05, 0.5, 3.0, 50.0])
def test_gp_kernel_gradient_matches_finite_differences(normalize, sigma_w):
    rng = np.random.default_rng(16)
    X = rng.standard_normal((20, 3)) * [2.0, 1.0, 0.5]
    X = np.vstack([X, X[:3]])
    K, dK = AsymptoticELMKernel(sigma_w, normalize=normalize)(X, eval_gradient=True)
    assert dK.shape == (23, 23, 1)
    h = 1e-5
    fd = (AsymptoticELMKernel(sigma_w * np.exp(h), normalize=normalize)(X)
          - AsymptoticELMKernel(sigma_w * np.exp(-h), normalize=normalize)(X)) / (2 * h)
    assert np.abs(dK[:, :, 0] - fd).max() <= 1e-5 * np.abs(fd).max()
    np.testing.assert_allclose(K, asymptotic_elm_kernel(X, sigma_w=sigma_w, normalize=normalize), rtol=1e-14)


def test_gp_kernel_is_a_sklearn_kernel_and_learns_sigma_w():
    k = AsymptoticELMKernel(2.0, sigma_w_bounds=(1e-2, 1e2))
    assert k.get_params() == {'sigma_w': 2.0, 'sigma_w_bounds': (1e-2, 1e2), 'normalize': True}
    assert np.allclose(k.theta, np.log(2.0)) and k.clone_with_theta(np.log([5.0])).sigma_w == pytest.approx(5.0)
    assert not k.is_stationary() and 'sigma_w' in repr(clone(k))
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, (120, 2))
    y = np.linalg.cholesky(asymptotic_elm_kernel(X, sigma_w=3.0) + 0.01 * np.eye(120)) @ rng.standard_normal(120)
    gp = GaussianProcessRegressor(ConstantKernel() * AsymptoticELMKernel(0.3) + WhiteKernel(0.1),
                                  n_restarts_optimizer=2, random_state=0).fit(X, y)
    assert 1.0 < gp.kernel_.k1.k2.sigma_w < 10.0


def test_elm_kernel_svr_equals_precomputed_svr():
    rng = np.random.default_rng(10)
    X = rng.uniform(-2, 2, (150, 4)) * [1, 10, 100, 0.1]
    y = 300 + 40 * np.sin(X[:, 0]) + X[:, 1] + rng.standard_normal(150)
    Xtr, ytr, Xte = X[:100], y[:100], X[100:]
    sc = StandardScaler().fit(Xtr)
    mu, sd = ytr.mean(), ytr.std()
    for s in (1e-3, 1.0, 1e3, np.inf):
        m = ELMKernelSVR(C=30.0, epsilon=0.02, sigma_w=s).fit(Xtr, ytr)
        ref = SVR(kernel='precomputed', C=30.0, epsilon=0.02).fit(asymptotic_elm_kernel(sc.transform(Xtr), sigma_w=s),
                                                                   (ytr - mu) / sd)
        pred = mu + sd * ref.predict(asymptotic_elm_kernel(sc.transform(Xte), sc.transform(Xtr), sigma_w=s))
        np.testing.assert_allclose(m.predict(Xte), pred, rtol=1e-10, atol=1e-8)
        np.testing.assert_array_equal(m.support_, ref.support_)
        assert m.support_vectors_.shape == (len(ref.support_), 4) and not hasattr(m, 'X_fit_')
    m32 = ELMKernelSVR(C=30.0, epsilon=0.02).fit(Xtr.astype(np.float32), ytr)
    m64 = ELMKernelSVR(C=30.0, epsilon=0.02).fit(Xtr.astype(np.float32).astype(np.float64), ytr)
    np.testing.assert_allclose(m32.predict(Xte.astype(np.float32)), m64.predict(Xte.astype(np.float32)), rtol=1e-12)


def test_elm_kernel_svr_sample_weight():
    rng = np.random.default_rng(17)
    X, y = rng.standard_normal((80, 3)), rng.standard_normal(80)
    w = rng.uniform(0.5, 2.0, 80)
    m = ELMKernelSVR(C=5.0).fit(X, y, sample_weight=w)
    sc = StandardScaler().fit(X, sample_weight=w)
    mu = np.average(y, weights=w)
    sd = np.sqrt(np.average((y - mu) ** 2, weights=w))
    ref = SVR(kernel='precomputed', C=5.0).fit(asymptotic_elm_kernel(sc.transform(X)), (y - mu) / sd, sample_weight=w)
    np.testing.assert_allclose(m.predict(X), mu + sd * ref.predict(asymptotic_elm_kernel(sc.transform(X))),
                               rtol=1e-10, atol=1e-10)
    # a constant weight 3 is C = 3 C (LIBSVM's iterates differ, hence the tight tolerance)
    np.testing.assert_allclose(ELMKernelSVR(C=5.0, tol=1e-11).fit(X, y, sample_weight=np.full(80, 3.0)).predict(X),
                               ELMKernelSVR(C=15.0, tol=1e-11).fit(X, y).predict(X), rtol=1e-8, atol=1e-8)
    w0 = np.ones(80)
    w0[::3] = 0
    keep = w0 > 0
    zeroed, dropped = ELMKernelSVR().fit(X, y, sample_weight=w0), ELMKernelSVR().fit(X[keep], y[keep])
    np.testing.assert_allclose(zeroed.predict(X), dropped.predict(X), rtol=1e-12)
    np.testing.assert_array_equal(zeroed.support_, np.flatnonzero(keep)[dropped.support_])
    with pytest.raises(ValueError, match='(?i)sample.weight'):
        ELMKernelSVR().fit(X, y, sample_weight=np.zeros(80))
    with pytest.raises(ValueError, match='sample_weight'):
        ELMKernelSVR().fit(X, y, sample_weight=-w)


def test_elm_kernel_svr_predict_in_bounded_memory():
    rng = np.random.default_rng(18)
    X, y = rng.standard_normal((600, 4)), rng.standard_normal(600)
    m = ELMKernelSVR(C=100.0, epsilon=0.01).fit(X, y)
    n_sv = len(m.support_)
    Xq = rng.standard_normal((40_000, 4))
    whole = m.y_mean_ + m.y_scale_ * (asymptotic_elm_kernel((Xq - m.x_mean_) / m.x_scale_, m.support_vectors_)
                                      @ m.dual_coef_[0] + m.intercept_[0])
    tracemalloc.start()
    pred = m.predict(Xq)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    np.testing.assert_allclose(pred, whole, rtol=1e-12, atol=1e-12)
    assert n_sv > 400 and len(Xq) * n_sv * 8 > 2 * core.PREDICT_CHUNK_BYTES
    assert peak < 1.3 * core.PREDICT_CHUNK_BYTES + len(Xq) * 8 * 8       # one kernel block + O(n_query) vectors


def test_capped_fit_is_reported():
    rng = np.random.default_rng(19)
    X, y = rng.standard_normal((200, 3)), rng.standard_normal(200)
    with pytest.warns(ConvergenceWarning):
        m = ELMKernelSVR(C=1e4, epsilon=1e-3, max_iter=5).fit(X, y)
    assert m.fit_status_ == 1 and m.n_iter_ == 5
    with warnings.catch_warnings():
        warnings.simplefilter('error', ConvergenceWarning)
        assert ELMKernelSVR().fit(X, y).fit_status_ == 0


@pytest.mark.parametrize('bad, name', [(dict(sigma_w=0.0), 'sigma_w'), (dict(sigma_w=-1.0), 'sigma_w'),
                                       (dict(sigma_w=np.nan), 'sigma_w'), (dict(sigma_w=1e-101), 'sigma_w')])
def test_kernel_bad_hyper_parameters(bad, name):
    with pytest.raises(ValueError, match=name):
        asymptotic_elm_kernel(np.ones((3, 2)), **bad)


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
    for f in (rbf_kernel, laplacian_kernel, polynomial_kernel, linear_kernel):
        with pytest.raises(ValueError, match='rescale'):
            f(X * 1e200)
    with pytest.raises(ValueError, match='gamma'):
        rbf_kernel(X, gamma=-1.0)
    with pytest.raises(ValueError, match='degree'):
        polynomial_kernel(X, degree=0.5, coef0=0.0)
    with pytest.raises(ValueError, match='degree'):
        polynomial_kernel(X, degree=-1)
    with pytest.raises(TypeError, match='normalize'):
        asymptotic_elm_kernel(X, normalize='yes')
    with pytest.raises(ValueError, match='diag_X'):
        normalize_kernel(np.ones((3, 2)))
    with pytest.raises(ValueError, match='diag'):
        normalize_kernel(np.ones((3, 2)), np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match='Y is None'):
        AsymptoticELMKernel()(X, X, eval_gradient=True)


def test_svr_bad_input_and_failed_fit_keeps_model():
    rng = np.random.default_rng(11)
    X, y = rng.standard_normal((40, 3)), rng.standard_normal(40)
    m = ELMKernelSVR(C=5.0).fit(X, y)
    before = m.predict(X)
    for params, name in ((dict(C=0.0), "'C'"), (dict(C=np.inf), "'C'"), (dict(epsilon=-1.0), 'epsilon'),
                         (dict(sigma_w=0.0), 'sigma_w'), (dict(max_iter=0), 'max_iter'), (dict(tol=0.0), 'tol'),
                         (dict(normalize=1), 'normalize')):
        with pytest.raises(ValueError, match=name):
            clone(m).set_params(**params).fit(X, y)
        with pytest.raises(ValueError, match=name):
            m.set_params(**params).fit(np.hstack([X, X]), y)          # a new width: n_features_in_ must survive
        m.set_params(C=5.0, epsilon=0.1, sigma_w=1.0, max_iter=-1, tol=1e-3, normalize=True)
        assert m.n_features_in_ == 3
    with pytest.raises(ValueError, match='X'):
        m.fit(np.vstack([X[:-1], [np.nan] * 3]), y)
    with pytest.raises(ValueError):
        m.fit(X, y[:-1])
    with pytest.raises(ValueError, match='rescale'):
        m.fit(np.vstack([X[:-1], [1e300, 0.0, 0.0]]), y)
    with pytest.raises(ValueError, match='y'):
        m.fit(X, np.r_[y[:-1], 1e300])
    np.testing.assert_array_equal(m.predict(X), before)
    assert np.isfinite(m.predict(X * 1e200)).all()           # huge queries: the kernel's large-norm limit


def test_default_is_sensible_on_every_bundled_regression_set():
    "ELMKernelSVR() in a StandardScaler pipeline is within 0.05 R^2 of SVR() with scaled targets on every set."
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.model_selection import KFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from kelm_nb.papers.frenay2011 import REGRESSION_SETS, frenay_data
    for name in REGRESSION_SETS:
        X, y = frenay_data(name, 500)
        cv = KFold(3, shuffle=True, random_state=0)
        ours = cross_val_score(make_pipeline(StandardScaler(), ELMKernelSVR()), X, y, cv=cv).mean()
        peer = cross_val_score(TransformedTargetRegressor(make_pipeline(StandardScaler(), SVR()),
                                                          transformer=StandardScaler()), X, y, cv=cv).mean()
        assert ours >= peer - 0.05, (name, ours, peer)


def test_huge_inputs_give_a_finite_asymptotic_gram():
    from kelm_nb.kernels import asymptotic_elm_kernel
    X = np.array([[1e160, 2e160], [3.0, -1.0], [1e-300, 0.0]])
    K = asymptotic_elm_kernel(X, X)
    assert np.isfinite(K).all()


# ------------------------------------------------------------ randomised and adversarial inputs
# Randomised and adversarial inputs for every public function and estimator of kelm_nb.kernels: each call either
# raises a ValueError/TypeError or returns finite numbers of the right shape. Never a crash, never silent NaN.
#
# 1650 drawn inputs per run (500 + 500 + 150 + 300 + 200), a third of them from adversarial values.
ADVERSARIAL = [0.0, -0.0, 1e-320, 1e-300, 1e154, -1e154, 1e200, 1e300, -1.7e308, 1.7e308, np.nan, np.inf, -np.inf]
values = st.one_of(st.floats(-10, 10), st.sampled_from(ADVERSARIAL), st.floats(allow_nan=True, allow_infinity=True))
shapes = st.one_of(hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=6),
                   st.sampled_from([(0, 3), (3, 0), (4,), (2, 2, 2), ()]))
dtypes = st.sampled_from([np.float64, np.float32, np.int64])
params = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 5),
                   st.sampled_from(['a', True, [1.0], 1e-101, 1e-100, 1e300]))
FUZZ = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _array(data, shape, dtype):
    a = np.array(data.draw(hnp.arrays(np.float64, shape, elements=values)))
    if dtype is np.float32:
        with np.errstate(over='ignore'):
            return a.astype(np.float32)
    if dtype is np.int64:
        return np.nan_to_num(a, posinf=0, neginf=0).clip(-1e6, 1e6).astype(np.int64)
    return a


def _finite_or_clear_error(f, *args, **kwargs):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', ConvergenceWarning)
            out = f(*args, **kwargs)
    except (ValueError, TypeError) as e:
        assert str(e), 'an error without a message'
        return None
    out = np.asarray(out)
    assert np.isfinite(out).all(), f'non-finite output from {f.__name__}'
    return out


@FUZZ
@given(data=st.data(), shape_x=shapes, shape_z=st.one_of(st.none(), shapes), dtype=dtypes, sigma_w=params,
       normalize=st.sampled_from([True, False, 1, 'yes']))
def test_asymptotic_elm_kernel(data, shape_x, shape_z, dtype, sigma_w, normalize):
    X = _array(data, shape_x, dtype)
    Z = None if shape_z is None else _array(data, shape_z, dtype)
    out = _finite_or_clear_error(K.asymptotic_elm_kernel, X, Z, sigma_w=sigma_w, normalize=normalize)
    if out is not None and X.ndim == 2:
        assert out.shape == (X.shape[0], (X if Z is None else Z).shape[0]) and np.abs(out).max() <= 1.0


@FUZZ
@given(data=st.data(), shape_x=shapes, shape_z=st.one_of(st.none(), shapes), dtype=dtypes,
       which=st.sampled_from(['rbf', 'laplacian', 'poly', 'linear', 'normalize']), gamma=params, degree=params,
       coef0=params)
def test_standard_kernels(data, shape_x, shape_z, dtype, which, gamma, degree, coef0):
    X = _array(data, shape_x, dtype)
    Z = None if shape_z is None else _array(data, shape_z, dtype)
    calls = {'rbf': lambda: K.rbf_kernel(X, Z, gamma), 'laplacian': lambda: K.laplacian_kernel(X, Z, gamma),
             'poly': lambda: K.polynomial_kernel(X, Z, degree, gamma, coef0), 'linear': lambda: K.linear_kernel(X, Z),
             'normalize': lambda: K.normalize_kernel(X, None if Z is None else np.ravel(Z)[:len(X)],
                                                     None if Z is None else np.ravel(Z)[:np.shape(X)[-1]])}
    _finite_or_clear_error(calls[which])


@settings(max_examples=150, deadline=None)
@given(data=st.data(), shape=shapes, n_hidden=params,
       activation=st.sampled_from(['erf', 'sigmoid', 'exp', 'relu', 'x']), scale=params)
def test_elm_kernel(data, shape, n_hidden, activation, scale):
    X = _array(data, shape, np.float64)
    _finite_or_clear_error(K.elm_kernel, X, n_hidden=n_hidden if n_hidden is None or n_hidden != n_hidden else n_hidden,
                           activation=activation, weight_scale=scale)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), n=st.integers(1, 12), d=st.integers(1, 4), C=params, epsilon=params, sigma_w=params,
       max_iter=st.sampled_from([-1, 0, 1, 50, 2.5]), weights=st.booleans())
def test_elm_kernel_svr(data, n, d, C, epsilon, sigma_w, max_iter, weights):
    X = _array(data, (n, d), np.float64)
    y = _array(data, (n,), np.float64)
    w = np.abs(_array(data, (n,), np.float64)) if weights else None
    model = K.ELMKernelSVR(C=C, epsilon=epsilon, sigma_w=sigma_w, max_iter=max_iter)
    fitted = _finite_or_clear_error(lambda: model.fit(X, y, sample_weight=w).predict(X))
    if fitted is not None:
        Q = _array(data, (3, d), np.float64)
        _finite_or_clear_error(model.predict, Q)


@settings(max_examples=200, deadline=None)
@given(data=st.data(), n=st.integers(1, 8), d=st.integers(1, 3), sigma_w=params,
       normalize=st.sampled_from([True, False]))
def test_gp_kernel(data, n, d, sigma_w, normalize):
    X = _array(data, (n, d), np.float64)
    k = K.AsymptoticELMKernel(sigma_w=sigma_w, normalize=normalize)
    out = _finite_or_clear_error(lambda: np.concatenate([a.ravel() for a in k(X, eval_gradient=True)]))
    if out is not None:
        _finite_or_clear_error(k.diag, X)


def test_normalisation_of_tiny_self_similarities_is_finite():
    "Self-similarities near 1e-300: their product underflows, the normalised kernel does not."
    rng = np.random.default_rng(3)
    X = rng.standard_normal((6, 3))
    K = X @ X.T
    want = normalize_kernel(K)
    for scale in (1e-150, 1e-160):
        Kt = (X * scale) @ (X * scale).T
        got = normalize_kernel(Kt, np.diag(Kt), np.diag(Kt))
        assert np.isfinite(got).all()
        # at 1e-160 the entries of K (~1e-320) are subnormal and keep only about 4 digits themselves
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14 if scale == 1e-150 else 1e-2)


@pytest.mark.parametrize('bad, name, error', [
    (dict(sigma_w_bounds='foo'), 'sigma_w_bounds', TypeError), (dict(sigma_w_bounds=(np.nan, 1.0)), 'sigma_w_bounds',
                                                                 ValueError),
    (dict(sigma_w_bounds=(1.0, np.inf)), 'sigma_w_bounds', ValueError),
    (dict(sigma_w_bounds=(5.0, 1.0)), 'sigma_w_bounds', ValueError),
    (dict(sigma_w_bounds=(0.0, 1.0)), 'sigma_w_bounds', ValueError),
    (dict(sigma_w_bounds=[1, 'a']), 'sigma_w_bounds', TypeError),
    (dict(sigma_w='a'), 'sigma_w', TypeError), (dict(sigma_w=-1.0), 'sigma_w', ValueError),
    (dict(normalize='yes'), 'normalize', TypeError)])
def test_gp_kernel_validates_every_parameter_on_every_use(bad, name, error):
    "Bounds and flags are checked also where the call does not read them (a plain call reads no bounds)."
    X = np.random.default_rng(0).standard_normal((4, 2))
    kernel = AsymptoticELMKernel(**bad)
    for use in (lambda: kernel(X), lambda: kernel.diag(X), lambda: kernel(X, eval_gradient=True)):
        with pytest.raises(error, match=name):
            use()


_BAD_SVR = {'C': 'a', 'epsilon': -1.0, 'sigma_w': np.nan, 'normalize': 'yes', 'tol': 0.0, 'max_iter': 2.5}


def test_every_svr_parameter_has_a_bad_value():
    import inspect
    assert set(_BAD_SVR) == set(inspect.signature(ELMKernelSVR).parameters) == set(ELMKernelSVR._parameter_constraints)


@pytest.mark.parametrize('name', sorted(_BAD_SVR))
def test_every_svr_parameter_validated(name):
    X, y = np.random.default_rng(1).standard_normal((30, 3)), np.random.default_rng(2).standard_normal(30)
    m = ELMKernelSVR().fit(X, y)
    before = m.predict(X)
    with pytest.raises((ValueError, TypeError), match=name):
        m.set_params(**{name: _BAD_SVR[name]}).fit(X, y)
    np.testing.assert_array_equal(m.set_params(**ELMKernelSVR().get_params()).predict(X), before)

"Estimator checks, oracles, bad input and the jitted kernels of `kelm_nb.mkl`, called through the installed package."
import warnings

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from threadpoolctl import threadpool_limits

from kelm_nb.core import KernelELMClassifier, KernelELMRegressor
from kelm_nb.mkl import (ArrayKernelBank, GaussianKernelBank, MKLELMClassifier, MKLELMRegressor, _gauss_combine,
                         _gauss_quad, _sqdist, kernel_matrices, mkl_objective, qcqp_mkl, silp_mkl)


@pytest.fixture(autouse=True, scope='module')
def _single_threaded_blas():
    "Many small Cholesky factorisations: multi-threaded BLAS only oversubscribes a shared CI machine here."
    with threadpool_limits(limits=1, user_api='blas'):
        yield


@parametrize_with_checks([MKLELMClassifier(learn_C=True), MKLELMRegressor(kernels=['rbf', 'linear'])])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        check(estimator)


def _problem(n=70, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    Ks, _ = kernel_matrices([('rbf', {'gamma': 0.5}), ('poly', {'degree': 2}), 'linear', ('rbf', {'gamma': 4.0})], X)
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    T3 = -np.ones((n, 3)); T3[np.arange(n), rng.integers(0, 3, n)] = 1
    return X, Ks, y, T3


@pytest.mark.parametrize('multi', [False, True])
@pytest.mark.parametrize('C', [2.0, None])
def test_silp_matches_qcqp(multi, C):
    X, Ks, y, T3 = _problem()
    T = T3 if multi else y
    rs = silp_mkl(Ks, T, C=C, eps=1e-7)
    rq = qcqp_mkl(Ks, T, C=C)
    np.testing.assert_allclose(rs.objective, rq.objective, rtol=1e-5)
    np.testing.assert_allclose(rs.theta, rq.theta, atol=5e-3)
    assert rs.converged and np.all(rs.theta >= 0)
    total = rs.theta.sum() + (rs.theta_identity if C is None else 0.0)
    np.testing.assert_allclose(total, 1.0, rtol=1e-12)
    if C is None:
        np.testing.assert_allclose(rs.C, 1.0 / rs.theta_identity)
        np.testing.assert_allclose(rs.C, rq.C, rtol=2e-2)
    # the certificate: D(theta) recomputed independently is within eps of the optimum
    theta = np.append(rs.theta, rs.theta_identity) if C is None else rs.theta
    D, A = mkl_objective(Ks, T, theta, C=C)
    assert (D - rq.objective) / rq.objective <= 1e-7 + 1e-6
    np.testing.assert_allclose(A, rs.dual_coef, rtol=1e-10, atol=1e-12)


def test_silp_eps_certificate():
    X, Ks, y, T3 = _problem(seed=1)
    Dq = qcqp_mkl(Ks, T3, C=1.0).objective
    for eps in (1e-2, 1e-3, 1e-4):
        rs = silp_mkl(Ks, T3, C=1.0, eps=eps)
        assert -1e-6 <= (rs.objective - Dq) / Dq <= eps + 1e-6


def test_single_kernel_is_kernel_elm():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4)); y = rng.integers(0, 3, 80)
    m = MKLELMClassifier(kernels=[('rbf', {'gamma': 0.2})], C=3.0).fit(X, y)
    k = KernelELMClassifier(C=3.0, gamma=0.2).fit(X, y)
    np.testing.assert_allclose(m.decision_function(X), k.decision_function(X), rtol=1e-9, atol=1e-10)
    yr = np.cos(X[:, 0]) + X[:, 1]
    r = MKLELMRegressor(kernels=[('laplacian', {'gamma': 0.3})], C=7.0).fit(X, yr)
    kr = KernelELMRegressor(C=7.0, kernel='laplacian', gamma=0.3).fit(X, yr)
    np.testing.assert_allclose(r.predict(X), kr.predict(X), rtol=1e-9, atol=1e-10)
    assert r.kernel_weights_.tolist() == [1.0] and r.n_iter_ == 1


def test_estimator_solvers_agree_and_learn_C():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(90, 2)); y = (X[:, 0] ** 2 + X[:, 1] > 0.5).astype(int)
    s = MKLELMClassifier(learn_C=True, eps=1e-7).fit(X, y)
    q = MKLELMClassifier(learn_C=True, solver='qcqp').fit(X, y)
    np.testing.assert_allclose(s.objective_, q.objective_, rtol=1e-5)
    np.testing.assert_allclose(s.C_, 1 / s.identity_weight_)
    np.testing.assert_allclose(s.kernel_weights_.sum() + s.identity_weight_, 1.0)
    assert s.score(X, y) > 0.8


def test_mixed_kernel_list_and_multi_output_regression():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3)); Y = np.c_[np.sin(X[:, 0]), X[:, 1] * X[:, 2]]
    kern = ['rbf', ('poly', {'degree': 2}), (lambda A, B, s=1.0: np.exp(-s * ((A[:, None] - B[None]) ** 2).sum(-1)), {'s': 0.1})]
    m = MKLELMRegressor(kernels=kern, C=10.0).fit(X, Y)
    assert m.predict(X).shape == Y.shape and len(m.kernel_weights_) == 3
    assert m.score(X, Y) > 0.8


@pytest.mark.parametrize('dtype', [np.float64, np.float32])
def test_gaussian_bank_jitted(dtype):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(57, 3)).astype(dtype)
    gam = np.array([0.05, 0.3, 1.0, 7.0])
    D2 = _sqdist(X)
    Xd = X.astype(np.float64)
    ref = ((Xd[:, None] - Xd[None]) ** 2).sum(-1)
    np.testing.assert_allclose(D2, ref, rtol=1e-5 if dtype == np.float32 else 1e-10, atol=1e-5 if dtype == np.float32 else 1e-10)
    Ks = [np.exp(-g * D2) for g in gam]
    th = np.array([0.2, 0.0, 0.5, 0.3])
    np.testing.assert_allclose(_gauss_combine(D2, gam, th), sum(t * K for t, K in zip(th, Ks)), atol=1e-13)
    A = rng.normal(size=(57, 2))
    np.testing.assert_allclose(_gauss_quad(D2, gam, A), [np.vdot(A, K @ A) for K in Ks], rtol=1e-11)
    bank = GaussianKernelBank(X, gam)
    r1 = silp_mkl(bank, np.sign(Xd[:, 0]), C=1.0, eps=1e-8)
    r2 = silp_mkl(Ks, np.sign(Xd[:, 0]), C=1.0, eps=1e-8)
    np.testing.assert_allclose(r1.objective, r2.objective, rtol=1e-9)


def test_array_bank_float32_and_3d():
    X, Ks, y, T3 = _problem(40)
    r64 = silp_mkl(np.stack(Ks), y, C=1.0, eps=1e-7)
    r32 = silp_mkl([K.astype(np.float32) for K in Ks], y, C=1.0, eps=1e-7)
    np.testing.assert_allclose(r32.objective, r64.objective, rtol=1e-5)


def test_bad_input():
    X, Ks, y, T3 = _problem(30)
    with pytest.raises(ValueError, match='kernels'): silp_mkl([], y)
    with pytest.raises(ValueError, match=r'kernels\[1\]'): silp_mkl([Ks[0], Ks[1][:-1, :-1]], y)
    bad = Ks[0].copy(); bad[0, 1] += 1.0
    with pytest.raises(ValueError, match='symmetric'): silp_mkl([bad], y)
    with pytest.raises(ValueError, match='positive semi-definite'): silp_mkl([Ks[0] - 2 * np.eye(30)], y)
    with pytest.raises(ValueError, match='C'): silp_mkl(Ks, y, C=0.0)
    with pytest.raises(ValueError, match='C'): silp_mkl(Ks, y, C=-2.0)
    with pytest.raises(ValueError, match='eps'): silp_mkl(Ks, y, eps=0.0)
    with pytest.raises(ValueError, match='max_iter'): silp_mkl(Ks, y, max_iter=0)
    with pytest.raises(ValueError, match='T'): silp_mkl(Ks, y[:-1])
    with pytest.raises(ValueError, match='T'): silp_mkl(Ks, np.full(30, np.nan))
    with pytest.raises(ValueError, match='C'): qcqp_mkl(Ks, y, C=0.0)
    with pytest.raises(ValueError, match='kernels'): qcqp_mkl([], y)
    with pytest.raises(ValueError, match='C'): MKLELMClassifier(C=-1).fit(X, y)
    with pytest.raises(ValueError, match='eps'): MKLELMRegressor(eps=0).fit(X, y)
    with pytest.raises(ValueError, match='kernels'): MKLELMRegressor(kernels=[]).fit(X, y)
    with pytest.raises(ValueError, match='kernels'): MKLELMRegressor(kernels=['nope']).fit(X, y)
    with pytest.raises(ValueError, match='solver'): MKLELMRegressor(solver='cg').fit(X, y)
    with pytest.raises(ValueError, match='gammas'): GaussianKernelBank(X, [])


def test_failed_fit_leaves_model_untouched():
    X, Ks, y, T3 = _problem(30)
    m = MKLELMClassifier().fit(X, y)
    w, A = m.kernel_weights_.copy(), m.dual_coef_.copy()
    m.set_params(C=-1.0)
    with pytest.raises(ValueError): m.fit(X[:20], y[:20])
    np.testing.assert_array_equal(m.kernel_weights_, w); np.testing.assert_array_equal(m.dual_coef_, A)

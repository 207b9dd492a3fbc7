"Estimator checks, oracles, bad input and the jitted kernels of `kelm_nb.mkl`, called through the installed package."
import warnings

import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris, make_friedman1, make_moons
from sklearn.dummy import DummyClassifier
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from kelm_nb.core import KernelELMClassifier, KernelELMRegressor, limit_blas_threads
from kelm_nb.datasets import load_dataset
from kelm_nb.mkl import (ArrayKernelBank, DegenerateFitWarning, GaussianKernelBank, MKLELMClassifier,
                         MKLELMRegressor, _gauss_combine, _gauss_products, _gauss_products_rows, _gauss_quad,
                         _kernel_stats, _sqdist, kernel_matrices, mkl_objective, newton_mkl, qcqp_mkl, silp_mkl,
                         simplex_qp)


@pytest.fixture(autouse=True, scope='module')
def _single_threaded_blas():
    "Many small Cholesky factorisations: multi-threaded BLAS only oversubscribes a shared CI machine here."
    with limit_blas_threads(1):
        yield


_CALIBRATED_WEIGHTS = {'check_sample_weight_equivalence_on_dense_data': (
    "predict_proba is calibrated on the out-of-sample decision values of the training rows, each one calibration "
    "point: a row of weight 3 is one point, three repeated rows are three (scikit-learn marks SVC the same way). "
    "decision_function and predict are equivalent: test_weights_act_as_repeated_rows_with_c_auto")}
_PRECOMPUTED_PROBA = {
    'check_classifiers_train': (
        "the arg-max of predict_proba (a sigmoid of the decision values, fitted on leave-one-out ones) differs from "
        "predict on 2 of 200 points near the boundary, as SVC's Platt scaling may; the rate is measured in "
        "test_predict_proba_rows_sum_to_one_and_follow_predict"),
    'check_decision_proba_consistency': "the check fits on raw features, not on a square Gram matrix"}


def _expected_failures(est):
    "The checks a calibrated classifier fails for the documented reasons above."
    if not hasattr(est, 'predict_proba'):
        return {}
    return {**_CALIBRATED_WEIGHTS, **(_PRECOMPUTED_PROBA if est.kernels == 'precomputed' else {})}


@parametrize_with_checks([MKLELMClassifier(), MKLELMRegressor(), MKLELMClassifier(kernels='precomputed'),
                          MKLELMRegressor(kernels='precomputed'), MKLELMClassifier(solver='silp'),
                          MKLELMRegressor(learn_C=True, fit_intercept=False),
                          MKLELMRegressor(kernels=GaussianKernelBank(gammas=[0.1, 1.0]))],
                         expected_failed_checks=_expected_failures)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        check(estimator)


def _problem(n=70, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    Ks, _ = kernel_matrices([('rbf', {'gamma': 0.5}), ('poly', {'degree': 2}), 'linear', ('rbf', {'gamma': 4.0})], X)
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    T3 = -np.ones((n, 3))
    T3[np.arange(n), rng.integers(0, 3, n)] = 1
    return X, Ks, y, T3


@pytest.mark.parametrize('bias', [False, True])
@pytest.mark.parametrize('multi', [False, True])
@pytest.mark.parametrize('C', [2.0, None])
def test_three_solvers_one_optimum(multi, C, bias):
    X, Ks, y, T3 = _problem()
    T = T3 if multi else y
    rs = silp_mkl(Ks, T, C=C, fit_intercept=bias, eps=1e-8)
    rn = newton_mkl(Ks, T, C=C, fit_intercept=bias, eps=1e-10)
    rq = qcqp_mkl(Ks, T, C=C, fit_intercept=bias)
    np.testing.assert_allclose(rn.objective, rs.objective, rtol=1e-6)      # 1e-6 relative
    np.testing.assert_allclose(rq.objective, rn.objective, rtol=1e-6)
    np.testing.assert_allclose(rs.theta, rn.theta, atol=1e-3)
    assert rs.converged and rn.converged and rn.gap <= 1e-10
    for r in (rs, rn):
        total = r.theta.sum() + (r.theta_identity if C is None else 0.0)
        np.testing.assert_allclose(total, 1.0, rtol=1e-12)
    if C is None:
        np.testing.assert_allclose(rn.C, 1.0 / rn.theta_identity)
        np.testing.assert_allclose(rn.effective_C, (1 - rn.theta_identity) / rn.theta_identity)
    # the certificate: D(theta) recomputed independently is within eps of the optimum
    theta = np.append(rs.theta, rs.theta_identity) if C is None else rs.theta
    D, A = mkl_objective(Ks, T, theta, C=C, fit_intercept=bias)
    assert (D - rn.objective) / rn.objective <= 1e-8 + 1e-12
    np.testing.assert_allclose(A, rs.dual_coef, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize('solve', [silp_mkl, newton_mkl])
def test_eps_certificate(solve):
    X, Ks, y, T3 = _problem(seed=1)
    Dq = newton_mkl(Ks, T3, C=1.0, eps=1e-12).objective
    for eps in (1e-2, 1e-3, 1e-4):
        r = solve(Ks, T3, C=1.0, eps=eps)
        assert -1e-12 <= (r.objective - Dq) / Dq <= eps
        assert r.gap <= eps


def test_newton_needs_fewer_iterations_with_20_kernels():
    "The same optimum as the SILP in fewer iterations; the bank computed on the fly gives the same solution."
    rng = np.random.default_rng(5)
    X = rng.normal(size=(100, 4))
    y = np.sign(X[:, 0] + X[:, 1] ** 2 - 1)
    bank = GaussianKernelBank(X, np.logspace(-2, 2, 20))
    Ks = bank.matrices()
    rs = silp_mkl(Ks, y, C=None, eps=1e-6)
    rn = newton_mkl(Ks, y, C=None, eps=1e-6)
    np.testing.assert_allclose(rn.objective, rs.objective, rtol=1e-6)
    assert rn.n_iter < rs.n_iter
    rb = newton_mkl(bank, y, C=None, eps=1e-6)        # products of the support only, through numba
    np.testing.assert_allclose(rb.objective, rn.objective, rtol=1e-9)
    np.testing.assert_allclose(rb.theta, rn.theta, atol=1e-7)


def test_products_of_a_subset_of_the_kernels():
    "The working set of newton_mkl asks the banks for the products of some kernels only, in the order given."
    rng = np.random.default_rng(8)
    X = rng.normal(size=(30, 2))
    bank = GaussianKernelBank(X, [0.1, 1.0, 10.0])
    arr = ArrayKernelBank(bank.matrices())
    A = rng.normal(size=(30, 2))
    full = arr.products(A)
    for index in ([2, 0], [1], np.array([0, 2])):
        np.testing.assert_allclose(arr.products(A, index), full[list(index)], rtol=1e-14)
        np.testing.assert_allclose(bank.products(A, index), full[list(index)], rtol=1e-11, atol=1e-12)


def test_learned_c_near_a_singular_boundary_is_certified():
    """Iris with 10 Gaussian kernels and learned C: the optimum has mu0 = 0, where the duplicated iris rows make
    every kernel singular; a pull-back from numerically singular combinations and the adaptive curvature power
    certify it, at the SILP's optimum."""
    Xi, yi = load_iris(return_X_y=True)
    Ks, _ = kernel_matrices([('rbf', {'gamma': g}) for g in np.logspace(-2, 2, 10)], Xi)
    T = np.where(yi[:, None] == np.arange(3), 1.0, -1.0)
    for bias in (False, True):
        with warnings.catch_warnings():
            warnings.simplefilter('error', category=Warning)
            rn = newton_mkl(Ks, T, fit_intercept=bias, eps=1e-4)
        rs = silp_mkl(Ks, T, fit_intercept=bias, eps=1e-7)
        assert rn.converged and rn.gap <= 1e-4 and rn.n_iter <= 30
        assert -1e-6 <= (rn.objective - rs.objective) / rn.objective <= 1e-4


def test_simplex_qp_against_enumeration():
    "The active-set QP against brute force over supports (exact KKT solve on every face)."
    rng = np.random.default_rng(6)
    for _ in range(20):
        m = 5
        G = rng.normal(size=(m, m))
        H, c = G @ G.T + 0.1 * np.eye(m), rng.normal(size=m) * 3
        z = simplex_qp(H, c)
        best = np.inf
        for mask in range(1, 2 ** m):
            F = [i for i in range(m) if mask >> i & 1]
            K = np.block([[H[np.ix_(F, F)], np.ones((len(F), 1))], [np.ones((1, len(F))), np.zeros((1, 1))]])
            w = np.linalg.solve(K, np.r_[-c[F], 1.0])[:-1]
            if np.all(w >= -1e-12):
                zz = np.zeros(m)
                zz[F] = w
                best = min(best, 0.5 * zz @ H @ zz + c @ zz)
        np.testing.assert_allclose(0.5 * z @ H @ z + c @ z, best, rtol=1e-10, atol=1e-12)
        assert np.all(z >= 0) and abs(z.sum() - 1) < 1e-12

@pytest.mark.parametrize('dtype', [np.float64, np.float32])
def test_simplex_qp_compiled_paths(dtype):
    """The compiled active set through the public entry point: float32 and non-contiguous input, a warm start, a
    singular KKT system (the least-squares fallback), and a warm start of the wrong length."""
    rng = np.random.default_rng(11)
    G = rng.normal(size=(6, 6))
    H, c = (G @ G.T + 0.1 * np.eye(6)).astype(dtype), rng.normal(size=6).astype(dtype)
    z = simplex_qp(H, c)
    np.testing.assert_allclose(simplex_qp(np.asfortranarray(H), c[::-1][::-1], z0=np.full(6, 1 / 6)), z, atol=1e-6)
    assert z.dtype == np.float64 and np.all(z >= 0) and abs(z.sum() - 1) < 1e-12
    flat = simplex_qp(np.ones((3, 3), dtype=dtype), np.zeros(3, dtype=dtype), z0=np.full(3, 1 / 3))
    np.testing.assert_allclose(flat, np.full(3, 1 / 3), atol=1e-12)     # every point is optimal: the start stays
    with pytest.raises(ValueError, match='z0 must have 6 weights'):
        simplex_qp(H, c, z0=np.ones(2) / 2)



def test_single_kernel_is_kernel_elm():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4))
    y = rng.integers(0, 3, 80)
    m = MKLELMClassifier(kernels=[('rbf', {'gamma': 0.2})], C=3.0, fit_intercept=False).fit(X, y)
    k = KernelELMClassifier(C=3.0, gamma=0.2, fit_intercept=False).fit(X, y)
    np.testing.assert_allclose(m.decision_function(X), k.decision_function(X), rtol=1e-9, atol=1e-10)
    yr = np.cos(X[:, 0]) + X[:, 1]
    r = MKLELMRegressor(kernels=[('laplacian', {'gamma': 0.3})], C=7.0, fit_intercept=False).fit(X, yr)
    kr = KernelELMRegressor(C=7.0, kernel='laplacian', gamma=0.3, fit_intercept=False).fit(X, yr)
    np.testing.assert_allclose(r.predict(X), kr.predict(X), rtol=1e-9, atol=1e-10)
    assert r.kernel_weights_.tolist() == [1.0] and r.n_iter_ == 1


@pytest.mark.parametrize('solver', ['newton', 'silp'])
@pytest.mark.parametrize('scale', [1e8, 1e-8])
def test_targets_of_any_scale(solver, scale):
    "Targets scaled by 1e8 or 1e-8 give the same model, scaled, without a warning (the LP sees O(1) numbers)."
    X, y = make_friedman1(150, random_state=0)
    base = MKLELMRegressor(solver=solver).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter('error', category=Warning)
        m = MKLELMRegressor(solver=solver).fit(X, y * scale)
        ml = MKLELMRegressor(solver=solver, learn_C=True).fit(X, y * scale)
    np.testing.assert_allclose(m.predict(X) / scale, base.predict(X), rtol=1e-5, atol=1e-6)
    assert ml.converged_ and ml.score(X, y * scale) > 0.9


@pytest.mark.parametrize('solver', ['newton', 'silp'])
def test_tiny_C_is_quick_and_finite(solver):
    "C = 1e-12 gives a finite, heavily smoothed model in at most three iterations."
    X, y = make_friedman1(150, random_state=0)
    m = MKLELMRegressor(C=1e-12, solver=solver).fit(X, y)
    assert m.n_iter_ <= 3 and np.all(np.isfinite(m.predict(X)))
    Xi, yi = load_iris(return_X_y=True)
    c = MKLELMClassifier(C=1e-12, solver=solver).fit(Xi, yi)
    assert c.n_iter_ <= 3 and c.score(Xi, yi) > 0.6


def test_degenerate_learned_C_warns():
    Xi, _ = load_iris(return_X_y=True)
    noise = np.random.default_rng(0).integers(0, 2, len(Xi))
    with pytest.warns(DegenerateFitWarning, match='effective C'):
        m = MKLELMClassifier(learn_C=True).fit(Xi, noise)
    assert m.identity_weight_ >= 0.99


def test_precomputed_lists_bank_and_specs_agree():
    Xi, yi = load_iris(return_X_y=True)
    specs = [('rbf', {'gamma': g}) for g in (0.05, 0.5, 5.0)]
    KL, _ = kernel_matrices(specs, Xi)
    m_pre = MKLELMClassifier(kernels='precomputed').fit(KL, yi)
    m_3d = MKLELMClassifier(kernels='precomputed').fit(np.stack(KL, axis=-1), yi)      # (n, n, m)
    m_spec = MKLELMClassifier(kernels=specs).fit(Xi, yi)
    m_bank = MKLELMClassifier(kernels=GaussianKernelBank(gammas=[0.05, 0.5, 5.0])).fit(Xi, yi)
    ref = m_spec.decision_function(Xi)
    np.testing.assert_allclose(m_pre.decision_function(KL), ref, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(m_3d.decision_function(np.stack(KL, axis=-1)), ref, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(m_bank.decision_function(Xi), ref, rtol=1e-6, atol=1e-8)
    with pytest.raises(ValueError, match='square'):
        MKLELMClassifier(kernels='precomputed').fit([K[:, :-1] for K in KL], yi)
    with pytest.raises(ValueError, match=r'X\[1\]'):
        m_pre.decision_function([KL[0], KL[1][:, :-1], KL[2]])


def test_one_precomputed_matrix_is_kernel_elm_on_any_square_matrix():
    """With one matrix and C fixed nothing is learned over kernels: kernel ELM on the matrix as given, like the core's
    precomputed kernel ELM, for an indefinite or non-symmetric matrix too (the bordered system of eq. 29 solved
    directly is the oracle); a list or learned C still needs genuine kernels."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    y = np.sin(X[:, 0]) + X[:, 1]
    K = X @ X.T
    indefinite, skew = K - K.mean(), K + 0.3 * rng.normal(size=K.shape)
    for M in (indefinite, skew, np.round(K).astype(np.int64)):
        for bias in (False, True):
            m = MKLELMRegressor(kernels='precomputed', C=2.0, fit_intercept=bias).fit(M, y)
            Om = M + np.eye(40) / 2.0
            if bias:
                sol = np.linalg.solve(np.block([[np.zeros((1, 1)), np.ones((1, 40))], [np.ones((40, 1)), Om]]),
                                      np.r_[0.0, y])
                b, A = sol[0], sol[1:]
            else:
                b, A = 0.0, np.linalg.solve(Om, y)
            np.testing.assert_allclose(m.dual_coef_, A, rtol=1e-8, atol=1e-10)
            np.testing.assert_allclose(m.intercept_, b, rtol=1e-8, atol=1e-10)
            np.testing.assert_allclose(m.predict(M[:5]), M[:5] @ A + b, rtol=1e-8, atol=1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')                   # the core warns as it falls back to least squares
        k = KernelELMRegressor(kernel='precomputed', C=2.0).fit(indefinite, y)
    np.testing.assert_allclose(MKLELMRegressor(kernels='precomputed', C=2.0).fit(indefinite, y).predict(indefinite),
                               k.predict(indefinite), rtol=1e-7, atol=1e-8)
    with pytest.raises(ValueError, match='symmetric'):
        MKLELMRegressor(kernels='precomputed').fit([K, skew], y)
    with pytest.raises(ValueError, match='symmetric'):
        MKLELMRegressor(kernels='precomputed', learn_C=True).fit(skew, y)
    with pytest.raises(ValueError, match='positive semi-definite'):
        MKLELMRegressor(kernels='precomputed').fit([K, -K], y)


def test_repeated_rows_are_merged_so_learned_c_reaches_its_optimum():
    """scikit-learn's sample-weight check on random data (15 rows, 30 features): learned C interpolates (mu0 = 0);
    with the rows repeated the kernels would be singular there. Identical (x, y) rows are merged into one row of
    summed weight, and both fits are the same problem."""
    rng = np.random.RandomState(42)
    X, y, w = rng.rand(15, 30), rng.randint(0, 3, size=15).astype(float), rng.randint(0, 5, size=15)
    with pytest.warns(DegenerateFitWarning, match='runs to infinity'):     # interpolation is said
        weighted = MKLELMRegressor(learn_C=True, fit_intercept=False).fit(X, y, sample_weight=w)
    with pytest.warns(DegenerateFitWarning, match='runs to infinity'):
        repeated = MKLELMRegressor(learn_C=True, fit_intercept=False).fit(X.repeat(w, axis=0), y.repeat(w))
    assert weighted.identity_weight_ == 0.0 and repeated.identity_weight_ == 0.0
    assert repeated.train_rows_.size == np.count_nonzero(w)
    np.testing.assert_allclose(repeated.predict(X), weighted.predict(X), rtol=1e-9, atol=1e-12)
    Ks, _ = kernel_matrices('auto', X.repeat(w, axis=0))
    assert np.linalg.matrix_rank(Ks[0]) == np.count_nonzero(w)       # the repeated rows' kernels are singular


def test_sample_weight_is_repetition_and_zero_is_removal():
    Xi, yi = load_iris(return_X_y=True)
    w = np.ones(len(Xi))
    w[:10] = 2.0
    w[-5:] = 0.0
    m_w = MKLELMClassifier(eps=1e-10).fit(Xi, yi, sample_weight=w)
    Xr, yr = np.vstack([Xi[:-5], Xi[:10]]), np.r_[yi[:-5], yi[:10]]
    m_r = MKLELMClassifier(eps=1e-10).fit(Xr, yr)
    np.testing.assert_allclose(m_w.decision_function(Xi), m_r.decision_function(Xi), rtol=1e-6, atol=1e-8)
    m_cw = MKLELMClassifier(class_weight='balanced').fit(Xi[:120], yi[:120])
    assert m_cw.score(Xi, yi) > 0.8


def test_gaussian_bank_rejects_long_theta_and_unbound_use():
    "A theta longer than the bank is refused (not read past the kernels), and an unbound bank refuses to compute."
    X = np.random.default_rng(0).normal(size=(20, 2))
    bank = GaussianKernelBank(X, [0.5, 2.0])
    for theta in (np.ones(5), np.ones(1), [np.nan, 1.0]):
        with pytest.raises(ValueError, match='theta'):
            bank.combine(theta)
    with pytest.raises(ValueError, match='no inputs'):
        GaussianKernelBank(gammas=[1.0]).products(np.ones((3, 1)))
    with pytest.raises(ValueError, match='gammas'):
        GaussianKernelBank(X, [])
    with pytest.raises(ValueError, match='gammas'):
        GaussianKernelBank(X, [-1.0])


@pytest.mark.parametrize('dtype', [np.float64, np.float32])
def test_gaussian_bank_jitted(dtype):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(57, 3)).astype(dtype)
    gam = np.array([0.05, 0.3, 1.0, 7.0])
    D2 = _sqdist(X)
    Xd = X.astype(np.float64)
    ref = ((Xd[:, None] - Xd[None]) ** 2).sum(-1)
    tol = 1e-5 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(D2, ref, rtol=tol, atol=tol)
    Ks = [np.exp(-g * D2) for g in gam]
    th = np.array([0.2, 0.0, 0.5, 0.3])
    np.testing.assert_allclose(_gauss_combine(D2, gam, th), sum(t * K for t, K in zip(th, Ks)), atol=1e-13)
    A = rng.normal(size=(57, 2))
    np.testing.assert_allclose(_gauss_quad(D2, gam, A), [np.vdot(A, K @ A) for K in Ks], rtol=1e-11)
    KA = np.stack([K @ A for K in Ks])
    for n_buffers in (1, 2, 3):     # the per-thread buffers of the symmetric pass, however many
        np.testing.assert_allclose(_gauss_products(D2, gam, A, n_buffers), KA, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(_gauss_products_rows(D2, gam, A), KA, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(_gauss_products(D2, gam[[3, 1]], A, 2), KA[[3, 1]], rtol=1e-11, atol=1e-12)
    Kc = _gauss_combine(D2, gam, th)
    assert np.array_equal(Kc, Kc.T)
    bank = GaussianKernelBank(X, gam)
    np.testing.assert_allclose(bank.combine(th), sum(t * K for t, K in zip(th, Ks)), atol=1e-13)
    r1 = newton_mkl(bank, np.sign(Xd[:, 0]), C=1.0, eps=1e-10)
    r2 = newton_mkl(Ks, np.sign(Xd[:, 0]), C=1.0, eps=1e-10)
    np.testing.assert_allclose(r1.objective, r2.objective, rtol=1e-9)


@pytest.mark.parametrize('dtype', [np.float64, np.float32])
def test_kernel_checks_in_one_pass(dtype):
    "The jitted one-pass checks (through ArrayKernelBank, which converts float32) find NaN, infinity and asymmetry."
    X, Ks, y, T3 = _problem(70)
    K = Ks[0].astype(dtype)
    finite, big, asym, dmin = _kernel_stats(np.ascontiguousarray(K, dtype=np.float64))
    assert finite and asym == 0.0
    assert big == pytest.approx(np.abs(K).max()) and dmin == pytest.approx(K.diagonal().min())
    for i, j, v, msg in ((3, 66, np.nan, 'NaN'), (66, 3, np.inf, 'NaN'), (5, 5, -np.inf, 'NaN'),
                         (2, 69, 0.5, 'symmetric'), (69, 0, 1e-3, 'symmetric'), (4, 4, -2.0, 'diagonal')):
        bad = K.copy()
        bad[i, j] = v
        with pytest.raises(ValueError, match=msg):
            ArrayKernelBank([Ks[1], bad])


def test_array_bank_float32_and_3d():
    X, Ks, y, T3 = _problem(40)
    r64 = newton_mkl(np.stack(Ks), y, C=1.0, eps=1e-10)
    r32 = newton_mkl([K.astype(np.float32) for K in Ks], y, C=1.0, eps=1e-10)
    np.testing.assert_allclose(r32.objective, r64.objective, rtol=1e-5)


def test_bad_input():
    X, Ks, y, T3 = _problem(30)
    for solve in (silp_mkl, newton_mkl):
        with pytest.raises(ValueError, match='kernels'): solve([], y)
        with pytest.raises(ValueError, match=r'kernels\[1\]'): solve([Ks[0], Ks[1][:-1, :-1]], y)
        bad = Ks[0].copy()
        bad[0, 1] += 1.0
        with pytest.raises(ValueError, match='symmetric'): solve([bad], y)
        with pytest.raises(ValueError, match='positive semi-definite'):
            solve([Ks[0] - 2 * np.eye(30)], y, check_psd=True)
        with pytest.raises(ValueError, match='C'): solve(Ks, y, C=0.0)
        with pytest.raises(ValueError, match='eps'): solve(Ks, y, eps=0.0)
        with pytest.raises(ValueError, match='max_iter'): solve(Ks, y, max_iter=0)
        with pytest.raises(ValueError, match='T'): solve(Ks, y[:-1])
        with pytest.raises(ValueError, match='T'): solve(Ks, np.full(30, np.nan))
        with pytest.raises(ValueError, match='theta0'): solve(Ks, y, C=1.0, theta0=[1.0, 0.0])
        with pytest.raises(ValueError, match='sample_weight'): solve(Ks, y, sample_weight=np.zeros(30))
    with pytest.raises(ValueError, match='C'): qcqp_mkl(Ks, y, C=0.0)
    with pytest.raises(ValueError, match='kernels'): qcqp_mkl([], y)
    with pytest.raises(ValueError, match='C'): MKLELMClassifier(C=-1).fit(X, y)
    with pytest.raises(ValueError, match='eps'): MKLELMRegressor(eps=0).fit(X, y)
    with pytest.raises(ValueError, match='kernels'): MKLELMRegressor(kernels=[]).fit(X, y)
    with pytest.raises(ValueError, match='kernels'): MKLELMRegressor(kernels=['nope']).fit(X, y)
    with pytest.raises(ValueError, match='solver'): MKLELMRegressor(solver='cg').fit(X, y)
    with pytest.raises(TypeError, match='fit_intercept'): MKLELMRegressor(fit_intercept='yes').fit(X, y)
    with pytest.raises(ValueError, match='sample_weight'): MKLELMRegressor().fit(X, y, sample_weight=-np.ones(30))
    with pytest.raises(ValueError, match='gammas'): GaussianKernelBank(X, [])


def test_failed_fit_leaves_model_untouched():
    X, Ks, y, T3 = _problem(30)
    m = MKLELMClassifier().fit(X, y)
    w, A = m.kernel_weights_.copy(), m.dual_coef_.copy()
    m.set_params(C=-1.0)
    with pytest.raises(ValueError):
        m.fit(X[:20], y[:20])
    np.testing.assert_array_equal(m.kernel_weights_, w)
    np.testing.assert_array_equal(m.dual_coef_, A)


# ------------------------------------------------------------ targets of any scale, tiny C
@pytest.mark.parametrize('scale', [1e8, 1e-8])
def test_mkl_regressor_on_scaled_targets(scale):
    X, y = make_moons(120, noise=0.2, random_state=0)
    y = y.astype(float)
    base = MKLELMRegressor().fit(X, y).predict(X)
    scaled = MKLELMRegressor().fit(X, y * scale).predict(X)
    np.testing.assert_allclose(scaled / scale, base, rtol=1e-5, atol=1e-6)


def test_mkl_tiny_C_stops_at_once_with_labels_of_the_data():
    X, y = make_moons(120, noise=0.2, random_state=0)
    clf = MKLELMClassifier(C=1e-12).fit(X, y)
    assert clf.n_iter_ <= 3
    assert set(clf.predict(X)) <= {0, 1}


# ------------------------------------------------------------ defaults: C='auto' by closed-form leave-one-out
@pytest.mark.parametrize('name', ['liverdisorders', 'breast_cancer', 'flare_solar'])
def test_default_classifier_beats_majority_and_stays_near_svc(name):
    "The three sets where the former default (C = 1, Gaussians up to 10 x gamma='scale') lost to SVC() by > 3 points."
    X, y = load_dataset(name)
    X, y = X[:600], y[:600]
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    def score(est):
        return cross_val_score(make_pipeline(StandardScaler(), est), X, y, cv=cv).mean()
    acc = score(MKLELMClassifier())
    assert acc >= score(DummyClassifier()) and acc >= score(SVC()) - 0.03, acc


def test_c_auto_picks_the_candidate_of_least_loo_error_and_reports_it():
    X, y = make_moons(150, noise=0.3, random_state=0)
    m = MKLELMClassifier().fit(X, y)
    assert m.C_ in (0.1, 0.3, 1.0, 3.0, 10.0) and m.effective_C_ == m.C_
    with pytest.raises(ValueError, match='C'):
        MKLELMClassifier(C='best').fit(X, y)


def test_weights_act_as_repeated_rows_with_c_auto():
    "C='auto' leaves out one unit of weight: integer weights and repeated rows choose the same C and decisions."
    X, y = make_moons(60, noise=0.3, random_state=1)
    w = np.random.default_rng(0).integers(0, 4, len(y))
    for est in (MKLELMClassifier(), MKLELMRegressor()):
        target = y if isinstance(est, MKLELMClassifier) else y.astype(float)
        a = type(est)().fit(X, target, sample_weight=w)
        b = type(est)().fit(X.repeat(w, axis=0), target.repeat(w))
        assert a.C_ == b.C_
        out = 'decision_function' if hasattr(a, 'decision_function') else 'predict'
        np.testing.assert_allclose(getattr(a, out)(X), getattr(b, out)(X), rtol=1e-7, atol=1e-9)


# ------------------------------------------------------------ learned C: warnings by name
def test_learned_c_warns_by_name_when_it_under_fits_or_predicts_one_class():
    Xi, _ = load_iris(return_X_y=True)
    noise = np.random.default_rng(0).integers(0, 2, len(Xi))
    with pytest.warns(DegenerateFitWarning, match=r'^MKLELMClassifier: learned C under-fits') as rec:
        m = MKLELMClassifier(learn_C=True).fit(Xi, noise)
    assert m.identity_weight_ >= 0.9 or 'one class' in str(rec[0].message)
    assert np.isfinite(m.effective_C_) and m.C_ == 1.0 / m.identity_weight_


def test_learned_c_at_infinity_gets_a_note():
    rng = np.random.RandomState(42)                  # scikit-learn's weight check: learned C interpolates
    X, y, w = rng.rand(15, 30), rng.randint(0, 3, size=15).astype(float), rng.randint(0, 5, size=15)
    with pytest.warns(DegenerateFitWarning, match='^MKLELMRegressor: learned C runs to infinity'):
        m = MKLELMRegressor(learn_C=True, fit_intercept=False).fit(X, y, sample_weight=w)
    assert m.identity_weight_ == 0 and m.effective_C_ == np.inf


def test_fixed_and_auto_c_say_nothing_on_noise():
    Xi, _ = load_iris(return_X_y=True)
    noise = np.random.default_rng(0).integers(0, 2, len(Xi))
    with warnings.catch_warnings():
        warnings.simplefilter('error', DegenerateFitWarning)
        MKLELMClassifier().fit(Xi, noise)
        MKLELMClassifier(C=1.0).fit(Xi, noise)


# ------------------------------------------------------------ predict_proba
@pytest.mark.parametrize('kernels', ['auto', 'bank'])
def test_predict_proba_rows_sum_to_one_and_follow_predict(kernels):
    Xi, yi = load_iris(return_X_y=True)
    kern = GaussianKernelBank(gammas=[0.1, 1.0]) if kernels == 'bank' else 'auto'
    m = MKLELMClassifier(kernels=kern).fit(Xi, yi)
    p = m.predict_proba(Xi)
    assert p.shape == (150, 3) and np.all(p >= 0)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(np.exp(m.predict_log_proba(Xi)), p, rtol=1e-12)
    # as with SVC, the arg-max of the calibrated probabilities may differ from predict near a boundary: rarely
    agree = np.mean(m.classes_[p.argmax(axis=1)] == m.predict(Xi))
    assert agree >= 0.95, agree


def test_predict_proba_binary_argmax_agreement_rate():
    X, y = make_moons(300, noise=0.35, random_state=0)
    m = MKLELMClassifier().fit(X[:200], y[:200])
    p = m.predict_proba(X[200:])
    agree = np.mean(m.classes_[p.argmax(axis=1)] == m.predict(X[200:]))
    assert agree >= 0.95, agree


def test_neg_log_loss_scoring_is_finite_and_near_svc():
    X, y = load_dataset('heart_statlog')
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    ours = cross_val_score(make_pipeline(StandardScaler(), MKLELMClassifier()), X, y, cv=cv, scoring='neg_log_loss')
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', FutureWarning)     # SVC(probability=True), as tools/defaults_check.py
        svc = cross_val_score(make_pipeline(StandardScaler(), SVC(probability=True, random_state=0)), X, y, cv=cv,
                              scoring='neg_log_loss')
    assert np.all(np.isfinite(ours))
    assert -ours.mean() <= 1.1 * -svc.mean(), (ours.mean(), svc.mean())


def test_probabilities_use_internal_folds_without_a_closed_form():
    "One indefinite precomputed matrix (an LU solve, no Cholesky factor): calibrated on internal folds instead."
    X, y = make_moons(80, noise=0.2, random_state=0)
    K = np.tanh(0.5 * X @ X.T - 1.0)                  # a sigmoid 'kernel': indefinite
    m = MKLELMClassifier(kernels='precomputed', C=1.0).fit(K, y)
    np.testing.assert_allclose(m.predict_proba(K).sum(axis=1), 1.0)


# ------------------------------------------------------------ kernel lists inside scikit-learn's cross-validation
def _kernel_array(X):
    Ks, _ = kernel_matrices([('rbf', {'gamma': 0.1}), ('rbf', {'gamma': 1.0}), 'linear'], X)
    return np.stack(Ks, axis=-1)                      # (n, n, m): scikit-learn slices rows and columns


def test_kernel_arrays_work_in_grid_search_and_cross_val_score():
    X, y = make_moons(120, noise=0.25, random_state=0)
    K3 = _kernel_array(X)
    est = MKLELMClassifier(kernels='precomputed')
    assert est.__sklearn_tags__().input_tags.pairwise
    scores = cross_val_score(est, K3, y, cv=3)
    assert scores.shape == (3,) and scores.mean() > 0.8
    grid = GridSearchCV(est, {'C': [0.1, 10.0, 'auto']}, cv=3).fit(K3, y)
    assert grid.best_score_ > 0.8
    ll = cross_val_score(est, K3, y, cv=3, scoring='neg_log_loss')
    assert np.all(np.isfinite(ll))
    reg = cross_val_score(MKLELMRegressor(kernels='precomputed'), K3, y.astype(float), cv=3)
    assert np.all(np.isfinite(reg))
    # the same folds by hand: the array's rows and columns sliced as scikit-learn does
    tr, te = next(StratifiedKFold(3).split(X, y))
    by_hand = MKLELMClassifier(kernels='precomputed').fit(K3[np.ix_(tr, tr)], y[tr]).decision_function(
        K3[np.ix_(te, tr)])
    specs = MKLELMClassifier(kernels=[('rbf', {'gamma': 0.1}), ('rbf', {'gamma': 1.0}), 'linear'])
    # (the normalised linear kernel depends on the rows only through their own diagonal: the same model)
    np.testing.assert_allclose(by_hand, specs.fit(X[tr], y[tr]).decision_function(X[te]), rtol=1e-6, atol=1e-8)


def test_wrong_kernel_count_or_layout_is_a_value_error():
    X, y = make_moons(40, noise=0.25, random_state=0)
    K3 = _kernel_array(X)
    m = MKLELMClassifier(kernels='precomputed').fit(K3, y)
    with pytest.raises(ValueError, match='X holds 2 kernel matrices, but the model was fitted on 3'):
        m.predict(K3[:, :, :2])
    with pytest.raises(ValueError, match='X holds 4 kernel matrices'):
        m.predict(np.concatenate([K3, K3[:, :, :1]], axis=-1))
    with pytest.raises(ValueError, match=r'np\.moveaxis\(X, 0, -1\)'):
        MKLELMClassifier(kernels='precomputed').fit(np.moveaxis(K3, -1, 0), y)


@pytest.mark.parametrize('bad', [dict(C='a'), dict(C=-1.0), dict(eps='x'), dict(max_iter=1.5), dict(solver='lbfgs'),
                                 dict(normalize='yes'), dict(fit_intercept=None), dict(learn_C=2),
                                 dict(kernels=3), dict(class_weight='even')])
def test_every_parameter_is_validated_used_or_not(bad):
    "Bad values are refused by name whether or not the parameter is used (C with learn_C, eps with qcqp)."
    X, y = make_moons(30, noise=0.25, random_state=0)
    name = next(iter(bad))
    for extra in (dict(), dict(learn_C=True), dict(solver='qcqp')):
        if name in extra:
            continue
        with pytest.raises((ValueError, TypeError), match=name):
            MKLELMClassifier(**{**extra, **bad}).fit(X, y)


# ------------------------------------------------------------ guards on the helpers
def test_bank_refuses_non_finite_sparse_and_negative_weights():
    X = np.random.default_rng(0).normal(size=(20, 2))
    bank = GaussianKernelBank(X, gammas=[0.5, 2.0])
    for bad in (np.full(20, np.nan), np.r_[np.inf, np.zeros(19)]):
        with pytest.raises(ValueError, match='A contains NaN or infinity'):
            bank.products(bad)
        with pytest.raises(ValueError, match='A contains NaN or infinity'):
            bank.quad(bad)
    with pytest.raises(TypeError, match='A must be a dense array'):
        bank.quad(sp.csr_matrix(np.ones((20, 1))))
    with pytest.raises(TypeError, match='A must be a dense array'):
        bank.products(sp.csr_matrix(np.ones((20, 1))))
    with pytest.raises(ValueError, match='theta must be >= 0'):
        bank.combine([1.5, -0.5])


def test_simplex_qp_refuses_sparse_input_by_name():
    with pytest.raises(TypeError, match='H must be a dense array'):
        simplex_qp(sp.csr_matrix(np.eye(2)), np.zeros(2))
    with pytest.raises(TypeError, match='c must be a dense array'):
        simplex_qp(np.eye(2), sp.csr_matrix(np.zeros((1, 2))))


@pytest.mark.parametrize('scale', [1e-150, 1e-160, 1e150])
def test_kernel_matrices_finite_for_tiny_and_huge_inputs(scale):
    X = np.random.default_rng(0).normal(size=(10, 3)) * scale
    Ks, _ = kernel_matrices(['rbf', 'linear'], X)
    Kx, _ = kernel_matrices(['rbf', 'linear'], X[:4], X, train_diags=kernel_matrices(['rbf', 'linear'], X)[1])
    for K in Ks + Kx:
        assert np.all(np.isfinite(K))
    np.testing.assert_allclose(np.diag(Ks[1]), 1.0)     # the normalised linear kernel: unit diagonal at any scale


# ------------------------------------------------------------ the first call compiles quickly
def test_small_bank_never_compiles_the_parallel_kernels():
    """Up to 500 samples the bank runs its one-thread passes: the parallel ones (tens of CPU-s to compile) stay cold.

    A fresh process on the session's numba cache: `signatures` counts a kernel compiled or loaded from the cache
    alike, so a warm cache (kernels the other tests compiled) spares the compilation, not the check."""
    code = ("import numpy as np, kelm_nb.mkl as m\n"
            "X = np.random.default_rng(0).normal(size=(200, 3))\n"
            "b = m.GaussianKernelBank(X, gammas=[0.5, 2.0])\n"
            "b.products(np.ones(200)); b.quad(np.ones(200)); b.combine([0.5, 0.5])\n"
            "m.MKLELMClassifier(kernels=m.GaussianKernelBank(gammas=[0.5, 2.0])).fit(X, X[:, 0] > 0)\n"
            "print([len(f.signatures) for f in (m._gauss_products, m._gauss_products_rows, m._gauss_quad,"
            " m._gauss_combine)])\n")
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == '[0, 0, 0, 0]', out.stdout + out.stderr
    assert 'compiling the parallel' not in out.stderr


@pytest.mark.parametrize('solve', [newton_mkl, silp_mkl])
@pytest.mark.parametrize('C', [2.0, None])
def test_solver_returns_the_cholesky_factor_of_its_solution(solve, C):
    "MKLResult.cholesky is the lower factor of Omega at the returned weights (with weights and the bias); counted."
    from kelm_nb.mkl import _solution_omega
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 3))
    Ks = kernel_matrices(['linear', ('rbf', {'gamma': 0.5}), ('poly', {'degree': 2})], X)[0]
    w = rng.uniform(0.5, 2.0, 50)
    r = solve(Ks, np.sign(X[:, 0]), C=C, fit_intercept=True, sample_weight=w)
    L = np.tril(r.cholesky)
    np.testing.assert_allclose(L @ L.T, _solution_omega(ArrayKernelBank(Ks), r, r.theta_identity / w), atol=1e-11)
    assert r.n_factorizations >= r.n_iter >= 1
    assert qcqp_mkl(Ks, np.sign(X[:, 0]), C=1.0).cholesky is None


@pytest.mark.parametrize('kwargs', [dict(C='auto'), dict(C='auto', fit_intercept=False), dict(learn_C=True),
                                    dict(C=3.0, solver='silp')])
def test_leave_one_out_from_the_solver_factor_equals_a_refactorisation(monkeypatch, kwargs):
    "The estimators reuse the solver's factor for the leave-one-out diagonal: the same C, model and residuals."
    import kelm_nb.mkl as M
    X, y = make_moons(120, noise=0.3, random_state=0)
    X = np.vstack([X, X[:5]])                                   # repeated rows: merged, left out one at a time
    y = np.r_[y, y[:5]]
    est = MKLELMClassifier(**kwargs)
    T = np.where(y[:, None] == 1, 1.0, -1.0)
    reuse = M._fit_result(est, X, T, None, np.arange(len(y)), M._check_mkl_params(est), loo=True)
    solver = M._SOLVERS[est.solver]

    def without_factor(*args, **kw):
        r = solver(*args, **kw)
        r.cholesky = None
        return r
    monkeypatch.setitem(M._SOLVERS, est.solver, without_factor)
    again = M._fit_result(est, X, T, None, np.arange(len(y)), M._check_mkl_params(est), loo=True)
    assert reuse[0].C == again[0].C
    np.testing.assert_allclose(reuse[2], again[2], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(reuse[0].dual_coef, again[0].dual_coef, rtol=1e-12)


@pytest.mark.parametrize('kernels', ['auto', 'precomputed'])
def test_labels_only_fit_skips_the_leave_one_out_values_and_predicts_the_same(monkeypatch, kernels):
    "Inside labels_only() a fixed-C fit computes no leave-one-out residuals and no calibration; same decisions."
    import kelm_nb.mkl as mkl_module
    from kelm_nb.calibration import labels_only
    X, y = load_iris(return_X_y=True)
    Xk = np.stack(kernel_matrices('auto', X)[0], axis=-1) if kernels == 'precomputed' else X
    full = MKLELMClassifier(kernels=kernels, C=1.0).fit(Xk, y)

    def no_loo(*args, **kwargs):
        raise AssertionError('leave-one-out residuals computed inside labels_only()')
    monkeypatch.setattr(mkl_module, '_loo_residuals', no_loo)
    with labels_only():
        clf = MKLELMClassifier(kernels=kernels, C=1.0).fit(Xk, y)
    assert clf.calibration_ is None and full.calibration_ is not None
    np.testing.assert_array_equal(clf.decision_function(Xk), full.decision_function(Xk))
    with pytest.raises(AssertionError, match='leave-one-out'):
        MKLELMClassifier(kernels=kernels, C=1.0).fit(Xk, y)      # outside the block the calibration needs them

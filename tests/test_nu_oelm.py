"""Tests of kelm_nb.nu_oelm: the active-set solvers against libsvm / cvxpy, the classifiers against
scikit-learn's estimator checks, edge cases and bad input."""
import pickle
import warnings

import numpy as np
import pytest
from sklearn.svm import OneClassSVM
from sklearn.utils.estimator_checks import parametrize_with_checks

from kelm_nb.core import RandomHiddenLayer
from kelm_nb.nu_oelm import (ActiveSetResult, NuOELMClassifier, OELMClassifier, nu_oelm_active_set,
                             oelm_active_set)


def _problem(n=150, L=25, seed=0, act='sigmoid', d=3):
    "Q = T K T for an ELM kernel with L < n hidden nodes (rank-deficient), plus the data."
    r = np.random.default_rng(seed)
    X = r.uniform(size=(n, d))
    s = np.sin(4 * X[:, 0]) + X[:, 1] - X[:, 2] + 0.3 * r.normal(size=n)
    t = np.where(s > np.median(s), 1.0, -1.0)
    H = RandomHiddenLayer(L, act, weight_range=(-4, 4), bias_range=(-1, 1), random_state=seed).fit_transform(X)
    return t[:, None] * (H @ H.T) * t[None, :], X, t


def _libsvm(Q, nu):
    oc = OneClassSVM(kernel='precomputed', nu=nu, tol=1e-9).fit(Q)
    a = np.zeros(len(Q))
    a[oc.support_] = oc.dual_coef_.ravel() / len(Q)
    return a, -oc.intercept_[0] / len(Q)


def _obj(Q, a):
    return 0.5 * a @ Q @ a


@pytest.mark.parametrize('dtype', [np.float64, np.float32])
@pytest.mark.parametrize('nu', [0.4, 0.7, 0.9])
def test_nu_solver_matches_libsvm(dtype, nu):
    Q, _, _ = _problem(seed=1)
    n = len(Q)
    r = nu_oelm_active_set(Q.astype(dtype), nu)
    assert isinstance(r, ActiveSetResult)
    Qd = Q.astype(dtype).astype(np.float64)
    a_ref, rho_ref = _libsvm(Qd, nu)
    f, f_ref = _obj(Qd, r.alpha), _obj(Qd, a_ref)
    assert f <= f_ref * (1 + 1e-8)                        # the same objective as LIBSVM's, never worse
    np.testing.assert_allclose(f, f_ref, rtol=1e-6)
    np.testing.assert_allclose(r.alpha, a_ref, atol=2e-3 / n)
    if np.any((r.alpha > 1e-6 / n) & (r.alpha < (1 - 1e-6) / n)):
        np.testing.assert_allclose(r.rho, rho_ref, rtol=1e-3)
    # feasibility, nu-property, KKT gap (eq. 25)
    np.testing.assert_allclose(r.alpha.sum(), nu, rtol=1e-12)
    assert r.alpha.min() >= 0 and r.alpha.max() <= 1 / n
    assert np.mean(r.alpha >= 1 / n) <= nu + 1e-12 <= np.mean(r.alpha > 0) + 2e-12
    g = Qd @ r.alpha
    gap = g[r.alpha > 0].max() - g[r.alpha < 1 / n].min()
    assert gap <= 1e-8 * r.rho + 2e-12 * nu * Qd.diagonal().max()
    assert r.kkt_gap <= 1e-8 * r.rho + 2e-12 * nu * Qd.diagonal().max()


def test_nu_solver_strong_duality():
    Q, _, _ = _problem(seed=2)
    n, nu = len(Q), 0.7
    r = nu_oelm_active_set(Q, nu)
    g = Q @ r.alpha
    primal = 0.5 * r.alpha @ g - nu * r.rho + np.maximum(0, r.rho - g).sum() / n
    np.testing.assert_allclose(primal, -0.5 * r.alpha @ g, rtol=1e-8, atol=1e-14)


@pytest.mark.parametrize('dtype', [np.float64, np.float32])
@pytest.mark.parametrize('C', [0.01, 1.0, 50.0])
def test_oelm_solver_matches_cvxpy(dtype, C):
    cp = pytest.importorskip('cvxpy')
    Q, _, _ = _problem(n=80, L=12, seed=3)
    w, V = np.linalg.eigh(Q)
    F = V * np.sqrt(np.maximum(w, 0))                 # Q = F F' exactly (negative round-off eigenvalues dropped)
    Q = F @ F.T
    r = oelm_active_set(Q.astype(dtype), C)
    x = cp.Variable(len(Q))
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(F.T @ x) - cp.sum(x)), [x >= 0, x <= C])
    prob.solve(solver=cp.CLARABEL)
    f = _obj(Q, r.alpha) - r.alpha.sum()
    np.testing.assert_allclose(f, prob.value, rtol=1e-6 if dtype == np.float64 else 1e-5)
    assert r.alpha.min() >= 0 and r.alpha.max() <= C
    g = Q.astype(dtype).astype(np.float64) @ r.alpha - 1
    assert np.all(g[r.alpha < C] >= -1e-7) and np.all(g[r.alpha > 0] <= 1e-7)
    assert r.rho == 1.0


def test_nu_one_and_warm_start_and_duplicates():
    Q, _, _ = _problem(seed=1)
    n = len(Q)
    r = nu_oelm_active_set(Q, 1.0)
    np.testing.assert_allclose(r.alpha, np.full(n, 1 / n), rtol=1e-12)
    cold = nu_oelm_active_set(Q, 0.65)
    warm = nu_oelm_active_set(Q, 0.65, alpha0=nu_oelm_active_set(Q, 0.6).alpha)
    np.testing.assert_allclose(_obj(Q, warm.alpha), _obj(Q, cold.alpha), rtol=1e-9)
    # duplicated points: identical rows and columns make Q singular in the worst way
    idx = np.r_[np.arange(n), np.arange(20)]
    Qd = Q[np.ix_(idx, idx)]
    rd = nu_oelm_active_set(Qd, 0.7)
    a_ref, _ = _libsvm(Qd, 0.7)
    assert _obj(Qd, rd.alpha) <= _obj(Qd, a_ref) * (1 + 1e-9)
    np.testing.assert_allclose(_obj(Qd, rd.alpha), _obj(Qd, a_ref), rtol=1e-6)


def test_tiny_nu_warns_rho_zero():
    Q, _, _ = _problem(n=200, L=5, seed=5)
    with pytest.warns(UserWarning, match='collapsed'):
        r = nu_oelm_active_set(Q, 0.01)
    assert abs(r.rho) < 1e-7 * 0.01 * Q.diagonal().max()
    assert np.isclose(r.alpha.sum(), 0.01)


def test_bad_input():
    Q, _, _ = _problem(n=40, L=10)
    for nu in (0, -0.1, 1.01, np.nan):
        with pytest.raises(ValueError, match='nu'):
            nu_oelm_active_set(Q, nu)
    with pytest.raises(TypeError, match='nu'):
        nu_oelm_active_set(Q, 'a')
    for C in (0, -1.0, np.inf):
        with pytest.raises(ValueError, match='C'):
            oelm_active_set(Q, C)
    bad = Q.copy()
    bad[0, 1] += 1.0
    with pytest.raises(ValueError, match='symmetric'):
        nu_oelm_active_set(bad, 0.5)
    bad = Q.copy()
    bad[2, 2] = np.nan
    with pytest.raises(ValueError, match='NaN'):
        nu_oelm_active_set(bad, 0.5)
    with pytest.raises(ValueError, match='square'):
        nu_oelm_active_set(Q[:, :3], 0.5)
    with pytest.raises(ValueError, match='square'):
        nu_oelm_active_set(np.zeros((0, 0)), 0.5)
    with pytest.raises(ValueError, match='alpha0'):
        nu_oelm_active_set(Q, 0.5, alpha0=np.zeros(3))
    with pytest.raises(ValueError, match='tol'):
        nu_oelm_active_set(Q, 0.5, tol=0)
    with pytest.raises(ValueError, match='max_iter'):
        oelm_active_set(Q, 1.0, max_iter=0)


_NO_BIAS = ("no bias: on the check's very noisy blobs the kernel between points nearly vanishes (K ~ I), so "
            "class weights cannot shift the decision as SVC's bias does (56-86 % of class 0 predicted, 87 % required)")


@parametrize_with_checks([NuOELMClassifier(), OELMClassifier(),
                          NuOELMClassifier(kernel='precomputed'), OELMClassifier(kernel='precomputed'),
                          NuOELMClassifier(nu=0.3, kernel='elm', n_hidden=60, random_state=0)],
                         expected_failed_checks=lambda est: {'check_class_weight_classifiers': _NO_BIAS})
def test_sklearn_compatible(estimator, check):
    "scikit-learn's estimator checks on the default constructors, the precomputed variants and the paper's kernel."
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', UserWarning)       # collapsed margins on the checks' tiny random data sets
        check(estimator)


def test_registered_kernel():
    X, y = _data()
    clf = NuOELMClassifier(nu=0.5, kernel='rbf', gamma=2.0).fit(X, y)
    from sklearn.metrics.pairwise import rbf_kernel
    pre = NuOELMClassifier(nu=0.5, kernel='precomputed').fit(rbf_kernel(X, X, gamma=2.0), y)
    np.testing.assert_allclose(clf.alpha_, pre.alpha_, atol=1e-10)
    assert clf.score(X, y) > 0.8
    from kelm_nb.kernels import asymptotic_elm_kernel
    asy = NuOELMClassifier(nu=0.5, kernel='asymptotic', kernel_params={'sigma_w': 2.0}).fit(X, y)
    pre = NuOELMClassifier(nu=0.5, kernel='precomputed').fit(asymptotic_elm_kernel(X, X, sigma_w=2.0), y)
    np.testing.assert_allclose(asy.alpha_, pre.alpha_, atol=1e-10)
    assert asy.score(X, y) > 0.8


def _data(seed=0, n=120):
    r = np.random.default_rng(seed)
    X = r.uniform(size=(n, 2))
    y = np.where(X[:, 0] + X[:, 1] + 0.2 * r.normal(size=n) > 1, 'a', 'b')
    return X, y


@pytest.mark.parametrize('dtype', [np.float64, np.float32])
def test_classifier_matches_solver_and_precomputed(dtype):
    X, y = _data()
    X = X.astype(dtype)
    clf = NuOELMClassifier(nu=0.5, kernel='elm', n_hidden=100, center=False, random_state=0).fit(X, y)
    t = np.where(y == clf.classes_[1], 1.0, -1.0)
    H = clf.hidden_layer_.transform(X.astype(np.float64))
    r = nu_oelm_active_set(t[:, None] * (H @ H.T) * t[None, :], 0.5)
    np.testing.assert_allclose(clf.alpha_, r.alpha, atol=1e-12)
    assert clf.score(X, y) > 0.8
    pre = NuOELMClassifier(nu=0.5, kernel='precomputed').fit(H @ H.T, y)
    np.testing.assert_allclose(pre.decision_function(H @ H.T), clf.decision_function(X), rtol=1e-6, atol=1e-6)
    assert np.array_equal(np.sort(clf.support_), np.flatnonzero(clf.alpha_ > 0))    # grouped by class, as SVC
    np.testing.assert_allclose(clf.dual_objective_, 0.5 * r.alpha @ (t[:, None] * (H @ H.T) * t[None, :]) @ r.alpha,
                               rtol=1e-9)
    # callable kernel = the same Gram matrix
    layer = clf.hidden_layer_
    kern = lambda A, B: layer.transform(A) @ layer.transform(B).T
    cal = NuOELMClassifier(nu=0.5, kernel=kern, center=False).fit(X.astype(np.float64), y)
    np.testing.assert_allclose(cal.decision_function(X), clf.decision_function(X), rtol=1e-6, atol=1e-6)
    pickle.loads(pickle.dumps(clf)).predict(X)


def test_multiclass_and_oelm():
    from sklearn.datasets import load_iris
    from sklearn.preprocessing import MinMaxScaler
    X, y = load_iris(return_X_y=True)
    X = MinMaxScaler().fit_transform(X)
    for est in (NuOELMClassifier(nu=0.2, random_state=0), OELMClassifier(C=10.0, random_state=0)):
        est.fit(X, y)
        assert est.alpha_.shape == (150, 3) and est.decision_function(X).shape == (150, 3)
        assert est.score(X, y) > 0.9


def test_classifier_bad_input_keeps_fitted_model():
    X, y = _data()
    clf = NuOELMClassifier(nu=0.5, kernel='elm', n_hidden=50, random_state=0).fit(X, y)
    alpha = clf.alpha_.copy()
    with pytest.raises(ValueError, match='class'):
        clf.fit(X, np.full(len(y), 'a'))
    for bad in (dict(nu=0), dict(nu=1.5), dict(kernel='nope'), dict(n_hidden=0), dict(tol=-1)):
        with pytest.raises(ValueError):
            NuOELMClassifier(**bad).fit(X, y)
        with pytest.raises(ValueError):
            clf.set_params(**bad).fit(X, y)
        clf.set_params(nu=0.5, kernel='elm', n_hidden=50, tol=1e-8)
    np.testing.assert_array_equal(clf.alpha_, alpha)
    with pytest.raises(ValueError, match='C'):
        OELMClassifier(C=0).fit(X, y)
    with pytest.raises(ValueError, match='square'):
        NuOELMClassifier(kernel='precomputed').fit(X, y)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError):
        NuOELMClassifier().fit(Xn, y)
    with pytest.raises(ValueError):
        clf.predict(X[:, :1])


def test_max_iter_warns():
    from sklearn.exceptions import ConvergenceWarning
    Q, _, _ = _problem(seed=1)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        r = nu_oelm_active_set(Q, 0.7, max_iter=3)
    assert [type(x.message) for x in w] == [ConvergenceWarning]      # and no misleading rho warning
    np.testing.assert_allclose(r.alpha.sum(), 0.7, rtol=1e-12)      # still feasible
    assert r.alpha.min() >= 0 and r.alpha.max() <= 1 / len(Q)
    with pytest.warns(ConvergenceWarning, match='max_iter'):
        oelm_active_set(Q, 1.0, max_iter=3)

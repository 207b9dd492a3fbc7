"""Tests of kelm_nb.nu_oelm: the active-set solvers against libsvm / cvxpy, the classifiers against
scikit-learn's estimator checks, edge cases and bad input."""
import pickle
import warnings

import numpy as np
import pytest
from sklearn.svm import OneClassSVM
from sklearn.utils.estimator_checks import parametrize_with_checks

from kelm_nb.core import RandomHiddenLayer
from kelm_nb.nu_oelm import (ActiveSetResult, NuOELMClassifier, NuOELMClassifierCV, OELMClassifier,
                             nu_oelm_active_set, oelm_active_set)
from hypothesis import given, settings, strategies as st
from sklearn.datasets import load_iris, make_classification
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from kelm_nb.datasets import load_dataset
from kelm_nb.nu_oelm import (MarginCollapseWarning, nu_oelm_path)


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


_PROBA_ARGMAX = ("probabilities are calibrated on out-of-fold scores (as SVC(probability=True)): their arg-max may "
                 "differ from predict near the boundary (under 5 % of the points with two classes, under 15 % with "
                 "six, see test_proba_argmax_may_differ_from_predict and test_multiclass_log_loss_is_within_10_percent_"
                 "of_svc); the probability=False variants run this check in full")


def _expected_failures(est):
    """check_classifiers_train asks arg-max predict_proba == predict, which calibration does not promise (with
    probability=True); check_class_weight_classifiers passes on every variant (the regularised bias)."""
    failures = {}
    if est.probability:
        failures['check_classifiers_train'] = _PROBA_ARGMAX
        if est.kernel == 'precomputed':
            failures['check_decision_proba_consistency'] = (
                "the check fits a kernel='precomputed' estimator on an (80, 4) feature matrix (it builds no Gram "
                "matrix); SVC(kernel='precomputed', probability=True) fails it the same way")
    return failures


@parametrize_with_checks([NuOELMClassifier(), OELMClassifier(),
                          NuOELMClassifier(probability=False), OELMClassifier(probability=False),
                          NuOELMClassifier(kernel='precomputed'), OELMClassifier(kernel='precomputed'),
                          NuOELMClassifier(nu=0.3, kernel='elm', n_hidden=60, random_state=0),
                          NuOELMClassifierCV(), NuOELMClassifierCV(kernel='precomputed')],
                         expected_failed_checks=_expected_failures)
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
    clf = NuOELMClassifier(nu=0.5, kernel='elm', n_hidden=100, center=False, intercept_scaling=0.0,
                           random_state=0).fit(X, y)                          # the paper's model: no bias
    t = np.where(y == clf.classes_[1], 1.0, -1.0)
    H = clf.hidden_layer_.transform(X.astype(np.float64))
    r = nu_oelm_active_set(t[:, None] * (H @ H.T) * t[None, :], 0.5)
    np.testing.assert_allclose(clf.alpha_, r.alpha, atol=1e-12)
    assert clf.score(X, y) > 0.8
    pre = NuOELMClassifier(nu=0.5, kernel='precomputed', intercept_scaling=0.0).fit(H @ H.T, y)
    np.testing.assert_allclose(pre.decision_function(H @ H.T), clf.decision_function(X), rtol=1e-6, atol=1e-6)
    # with the bias (intercept_scaling=1) the solver sees K + 1 and the scores gain b = sum(dual_coef_)
    b = NuOELMClassifier(nu=0.5, kernel='elm', n_hidden=100, center=False, random_state=0).fit(X, y)
    rb = nu_oelm_active_set(t[:, None] * (H @ H.T + 1.0) * t[None, :], 0.5)
    np.testing.assert_allclose(b.alpha_, rb.alpha, atol=1e-12)
    np.testing.assert_allclose(b.intercept_, b.dual_coef_.sum(axis=1), rtol=1e-12)
    assert np.array_equal(np.sort(clf.support_), np.flatnonzero(clf.alpha_ > 0))    # grouped by class, as SVC
    np.testing.assert_allclose(clf.dual_objective_, 0.5 * r.alpha @ (t[:, None] * (H @ H.T) * t[None, :]) @ r.alpha,
                               rtol=1e-9)
    # callable kernel = the same Gram matrix
    layer = clf.hidden_layer_
    kern = lambda A, B: layer.transform(A) @ layer.transform(B).T
    cal = NuOELMClassifier(nu=0.5, kernel=kern, center=False, intercept_scaling=0.0).fit(X.astype(np.float64), y)
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


# ------------------------------------------------ nu feasibility, margins, defaults, the SVC-like interface, fuzz
# Trust tests of kelm_nb.nu_oelm: infeasible ν, collapsed margins, ρ-normalised multi-class scores, sensible
# defaults, the SVC-like interface (predict_proba, class_weight, n_support_, dual_coef_, warm_start), the stored β,
# the ν path, the one-pass input check and randomised bad input.
def _unbalanced(n=1200, minority=0.03, seed=0):
    X, y = make_classification(n, 5, n_informative=3, weights=[1 - minority], flip_y=0, class_sep=1.5,
                               random_state=seed)
    return X[: n // 2], X[n // 2:], y[: n // 2], y[n // 2:]


def _gram_problem(n=150, L=25, seed=0):
    r = np.random.default_rng(seed)
    X = r.uniform(size=(n, 3))
    t = np.where(np.sin(4 * X[:, 0]) + X[:, 1] - X[:, 2] + 0.3 * r.normal(size=n) > 0.4, 1.0, -1.0)
    H = RandomHiddenLayer(L, 'sigmoid', weight_range=(-4, 4), bias_range=(-1, 1), random_state=seed).fit_transform(X)
    return t[:, None] * (H @ H.T) * t[None, :]


def test_infeasible_nu_is_refused_with_the_limit():
    Xtr, _, ytr, _ = _unbalanced()
    limit = 2 * np.mean(ytr == 1)
    with pytest.raises(ValueError, match=r'nu=0.5 is infeasible.*<= 2 \* min\(class share\) = ' + f'{limit:.4g}'):
        NuOELMClassifier(nu=0.5).fit(Xtr, ytr)
    NuOELMClassifier(nu=0.9 * limit).fit(Xtr, ytr)                              # below the limit: fits
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="class 0 vs the rest"):               # one-vs-all: 2 * 1/3 < 0.7
        NuOELMClassifier(nu=0.7).fit(X, y)
    NuOELMClassifier(nu=0.7, class_weight='balanced').fit(X, y)                # balanced columns: any nu <= 1


@pytest.mark.parametrize('est', [NuOELMClassifier(random_state=0),
                                 NuOELMClassifier(nu=0.5, class_weight='balanced', random_state=0),
                                 OELMClassifier(random_state=0)])
def test_unbalanced_problem_is_not_a_constant_classifier(est):
    Xtr, Xte, ytr, yte = _unbalanced()
    p = est.fit(Xtr, ytr).predict(Xte)
    assert 0 < np.mean(p == 1) < 0.5
    assert np.mean(p[yte == 1] == 1) > 0.5                                     # most of the minority is found


def test_collapsed_margin_warns_with_cause_and_remedy():
    # duplicated points with opposite labels: Q alpha = 0 is feasible for small nu, the margin collapses
    r = np.random.default_rng(0)
    X = r.normal(size=(60, 2))
    X, y = np.vstack([X, X]), np.r_[np.zeros(60, int), np.ones(60, int)]
    with pytest.warns(MarginCollapseWarning, match='collapsed.*increase nu.*ridge'):
        m = NuOELMClassifier(nu=0.3).fit(X, y)
    assert np.all(np.isfinite(m.decision_function(X)))
    assert issubclass(MarginCollapseWarning, UserWarning)


def test_multiclass_scores_are_divided_by_rho():
    X, y = load_iris(return_X_y=True)
    m = NuOELMClassifier(nu=0.3, kernel='elm', n_hidden=200, center=False, intercept_scaling=0.0,
                         random_state=0).fit(X, y)
    H = m.hidden_layer_.transform(X)
    raw = H @ H[m.support_].T @ (m.dual_coef_.T * m.rho_)                      # eq. 14 per column
    np.testing.assert_allclose(m.decision_function(X), raw / m.rho_, rtol=1e-9, atol=1e-9)
    assert np.array_equal(m.predict(X), m.classes_[np.argmax(raw / m.rho_, axis=1)])


def test_defaults_are_close_to_svc_on_bundled_sets():
    "The default constructors within 3 points of SVC() (the full table over all sets is in the notebook)."
    for name in ('heart_statlog', 'pimadiabetes', 'wdbc', 'balance'):
        X, y = load_dataset(name)
        tr, te = train_test_split(np.arange(len(y)), train_size=min(400, len(y) // 2), stratify=y, random_state=0)
        ref = make_pipeline(StandardScaler(), SVC()).fit(X[tr], y[tr]).score(X[te], y[te])
        for est in (NuOELMClassifier(random_state=0), OELMClassifier(random_state=0)):
            acc = make_pipeline(StandardScaler(), est).fit(X[tr], y[tr]).score(X[te], y[te])
            assert acc >= ref - 0.03, (name, type(est).__name__, acc, ref)


def test_auto_nu_is_oelm_at_C_1():
    "nu='auto' is feasible and gives OELMClassifier()'s scores (C = 1), also on an unbalanced problem."
    Xtr, Xte, ytr, _ = _unbalanced()
    m = NuOELMClassifier(tol=1e-10, probability=False).fit(Xtr, ytr)
    assert 0 < m.nu_ <= 2 * np.mean(ytr == 1)
    ref = OELMClassifier(tol=1e-10, probability=False).fit(Xtr, ytr).decision_function(Xte)
    np.testing.assert_allclose(m.decision_function(Xte), ref, rtol=1e-5, atol=1e-5)
    assert NuOELMClassifier(nu=0.4).fit(*load_iris(return_X_y=True)).nu_ == 0.4


@pytest.mark.parametrize('Est', [NuOELMClassifier, OELMClassifier])
def test_predict_proba_by_default(Est):
    "Probabilities at the defaults: rows sum to one, neg_log_loss scoring works, probability=False removes them."
    from sklearn.model_selection import cross_val_score
    X, y = load_iris(return_X_y=True)
    m = Est(nu=0.2, random_state=0) if Est is NuOELMClassifier else Est(random_state=0)
    P = m.fit(X, y).predict_proba(X)
    assert P.shape == (150, 3) and np.allclose(P.sum(axis=1), 1) and np.all((P >= 0) & (P <= 1))
    np.testing.assert_allclose(np.log(P), m.predict_log_proba(X))
    assert np.mean(m.classes_[P.argmax(axis=1)] == y) > 0.9
    Xb, yb = load_dataset('ionosphere')
    pipe = make_pipeline(StandardScaler(), Est(random_state=0))
    loss = -cross_val_score(pipe, Xb, yb, cv=3, scoring='neg_log_loss')
    assert np.all(np.isfinite(loss)) and loss.mean() < 0.3, loss
    assert not hasattr(Est(probability=False), 'predict_proba')               # as SVC(probability=False)
    assert not hasattr(Est(probability=False).fit(X, y), 'calibration_')


def test_proba_argmax_may_differ_from_predict():
    "As with SVC, calibrated probabilities may rank a point's predicted class second; it stays rare (measured)."
    X, y = load_dataset('banana')
    X = StandardScaler().fit_transform(X[:600])
    for Est in (NuOELMClassifier, OELMClassifier):
        m = Est(random_state=0).fit(X, y[:600])
        differ = np.mean(m.classes_[m.predict_proba(X).argmax(axis=1)] != m.predict(X))
        assert differ < 0.05, (Est.__name__, differ)


@pytest.mark.parametrize('Est', [NuOELMClassifier, OELMClassifier])
def test_non_psd_kernel_gives_finite_answers(Est):
    """Indefinite kernels are accepted as SVC accepts them (scikit-learn's checks pass precomputed matrices with a
    negative diagonal): a negative-definite Gram, a callable returning -1e3 everywhere, a sigmoid kernel; finite."""
    from sklearn.metrics.pairwise import sigmoid_kernel
    X, y = _data()
    G = -(X @ X.T) - np.eye(len(X))
    cases = [(Est(kernel='precomputed'), G, G), (Est(kernel=lambda A, B: np.full((len(A), len(B)), -1e3)), X, X),
             (Est(kernel=lambda A, B: sigmoid_kernel(A, B, gamma=0.5, coef0=1.0)), X, X)]
    for m, Xfit, Xq in cases:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', UserWarning)                       # the ν margin is reported negative
            m.fit(Xfit, y)
        assert np.all(np.isfinite(m.decision_function(Xq))) and np.all(np.isfinite(m.predict_proba(Xq)))


def test_clear_errors_and_warm_refit_on_new_size():
    X, y = _data()
    for Est in (NuOELMClassifier, OELMClassifier):
        with pytest.raises(ValueError, match="'tol' parameter"):
            Est(tol=1.0).fit(X, y)
        with pytest.raises(ValueError, match="'gamma' parameter"):
            Est(gamma='foo').fit(X, y)
        with pytest.raises(ValueError, match='intercept_scaling'):
            Est(intercept_scaling=np.inf).fit(X, y)
        with pytest.raises(ValueError, match='intercept_scaling'):
            Est(intercept_scaling=-1.0).fit(X, y)
    for bad in ('foo', 0.3, None):
        with pytest.raises(TypeError, match='nus must be a sequence'):
            nu_oelm_path(np.eye(4), bad)
        m = Est(warm_start=True, random_state=0).fit(X, y)
        m.fit(X[:-7], y[:-7])                                                  # another n: a cold start, no error
        assert m.alpha_.shape[0] == len(y) - 7
        ref = Est(random_state=0).fit(X[:-7], y[:-7])
        np.testing.assert_allclose(m.decision_function(X), ref.decision_function(X), rtol=1e-6, atol=1e-8)


def test_class_weight():
    Xtr, Xte, ytr, _ = _unbalanced(minority=0.1)
    share = [np.mean(OELMClassifier(class_weight=w).fit(Xtr, ytr).predict(Xte) == 1)
             for w in (None, {0: 1.0, 1: 10.0})]
    assert share[1] > share[0]
    with pytest.raises(ValueError, match='not classes'):
        NuOELMClassifier(class_weight={7: 1.0}).fit(Xtr, ytr)
    with pytest.raises(ValueError, match='class_weight'):
        NuOELMClassifier(class_weight={1: -1.0}).fit(Xtr, ytr)


def test_svc_like_attributes():
    X, y = load_iris(return_X_y=True)
    m = NuOELMClassifier(nu=0.2, random_state=0).fit(X, y)
    assert m.dual_coef_.shape == (3, len(m.support_)) and m.n_support_.dtype == np.int32
    assert np.all(np.diff(y[m.support_]) >= 0)                                 # grouped by class, as SVC
    assert np.array_equal(np.bincount(y[m.support_], minlength=3), m.n_support_)
    b = NuOELMClassifier(nu=0.3, random_state=0).fit(X[y > 0], y[y > 0])
    assert b.dual_coef_.shape == (1, len(b.support_)) and b.n_support_.shape == (2,)


def test_warm_start_and_path():
    X, y = load_iris(return_X_y=True)
    Xb, yb = X[y > 0], y[y > 0]
    m = NuOELMClassifier(nu=0.3, kernel='elm', n_hidden=100, warm_start=True, random_state=0).fit(Xb, yb)
    warm = m.set_params(nu=0.35).fit(Xb, yb)
    cold = NuOELMClassifier(nu=0.35, kernel='elm', n_hidden=100, random_state=0).fit(Xb, yb)
    np.testing.assert_allclose(warm.dual_objective_, cold.dual_objective_, rtol=1e-8)
    Q = _gram_problem(seed=4)
    nus = [0.3, 0.45, 0.6, 0.75]
    for nu, r in zip(nus, nu_oelm_path(Q, nus)):
        np.testing.assert_allclose(0.5 * r.alpha @ Q @ r.alpha, 0.5 * (c := nu_oelm_active_set(Q, nu)).alpha @ Q
                                   @ c.alpha, rtol=1e-8)
        np.testing.assert_allclose(r.alpha.sum(), nu, rtol=1e-12)


@pytest.mark.parametrize('dtype', [np.float64, np.float32])
def test_stored_beta_and_query_dtypes(dtype):
    X, y = load_iris(return_X_y=True)
    m = NuOELMClassifier(nu=0.3, kernel='elm', n_hidden=150, random_state=0).fit(X.astype(dtype), y)
    Hq = m.hidden_layer_.transform(X) - m.h_mean_
    Hs = m.hidden_layer_.transform(m.support_vectors_) - m.h_mean_
    expansion = Hq @ Hs.T @ m.dual_coef_.T + m.dual_coef_.sum(axis=1)             # the kernel of K + 1: plus b
    np.testing.assert_allclose(m.decision_function(X), expansion, rtol=1e-9, atol=1e-9)
    assert np.array_equal(m.predict(X.astype(np.float32)), m.predict(X.astype(np.float64)))


def test_one_pass_check_detects_any_single_asymmetry():
    Q = _gram_problem(seed=2)
    scale = Q.diagonal().max()
    for (i, j) in [(0, 1), (5, 149), (77, 3)]:
        bad = Q.copy()
        bad[i, j] += 1e-6 * scale
        with pytest.raises(ValueError, match='symmetric'):
            nu_oelm_active_set(bad, 0.5)
    tiny = Q.copy()
    tiny[4, 9] += 1e-10 * scale                                                # round-off: accepted
    np.testing.assert_allclose(nu_oelm_active_set(tiny, 0.5).alpha.sum(), 0.5)
    inf = Q.copy()
    inf[10, 11] = np.inf
    with pytest.raises(ValueError, match='NaN or infinity'):
        nu_oelm_active_set(inf, 0.5)


def test_degenerate_problem_stops_at_the_promised_accuracy():
    """On a collapsed margin the objective is within tol of its scale nu^2 max diag Q of a tight LIBSVM solution
    (LIBSVM itself needs 0.5 M iterations at tol=1e-6 here, 12 M at 1e-7)."""
    Q = _gram_problem(n=150, L=12, seed=1)
    nu = 0.1
    with pytest.warns(MarginCollapseWarning):
        r = nu_oelm_active_set(Q, nu)
    oc = OneClassSVM(kernel='precomputed', nu=nu, tol=1e-6).fit(Q)
    a = np.zeros(len(Q))
    a[oc.support_] = oc.dual_coef_.ravel() / len(Q)
    assert 0.5 * r.alpha @ Q @ r.alpha - 0.5 * a @ Q @ a <= 1e-8 * nu * nu * Q.diagonal().max()


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 12), nu=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-2, 3)),
       scale=st.floats(1e-300, 1e300), seed=st.integers(0, 10 ** 6), kind=st.sampled_from(['psd', 'random', 'nan']))
def test_fuzz_solver_clear_error_or_finite(n, nu, scale, seed, kind):
    r = np.random.default_rng(seed)
    A = r.normal(size=(n, n))
    Q = A @ A.T * scale if kind == 'psd' else A * scale
    if kind == 'nan':
        Q[r.integers(n), r.integers(n)] = np.nan
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            res = nu_oelm_active_set(Q, nu)
    except (ValueError, TypeError) as e:
        assert any(w in str(e) for w in ('nu', 'Q must')), e
        return
    assert np.all(np.isfinite(res.alpha)) and np.isfinite(res.rho)
    assert res.alpha.min() >= 0 and res.alpha.max() <= 1 / n * (1 + 1e-12)


@settings(max_examples=60, deadline=None)
@given(C=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-1, 5)), seed=st.integers(0, 10 ** 6))
def test_fuzz_oelm_clear_error_or_finite(C, seed):
    A = np.random.default_rng(seed).normal(size=(8, 8))
    try:
        res = oelm_active_set(A @ A.T, C)
    except (ValueError, TypeError) as e:
        assert 'C' in str(e), e
        return
    assert np.all(np.isfinite(res.alpha)) and res.alpha.max() <= C * (1 + 1e-12)


def test_infeasible_nu_is_an_error_and_auto_nu_finds_the_minority():
    X, y = load_dataset('ionosphere')
    with pytest.raises(ValueError, match='nu'):
        NuOELMClassifier(nu=0.9, random_state=0).fit(X, y)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = np.r_[np.zeros(291), np.ones(9)]                           # 97/3: nu = 0.5 is beyond 2 * 3 %
    with pytest.raises(ValueError, match='infeasible'):
        NuOELMClassifier(nu=0.5, random_state=0).fit(X, y)
    # the default nu='auto' chooses a feasible nu
    assert NuOELMClassifier(random_state=0).fit(X, y).nu_ <= 2 * 9 / 300 * (1 + 1e-12)     # the limit (rounding)


@pytest.mark.parametrize('minority, seed', [(0.03, 0), (0.05, 2), (0.1, 1)])
def test_minority_recall_matches_svc_held_out(minority, seed):
    "Held-out minority recall on a learnable imbalanced problem: ν-OELM as SVC, at defaults and with balanced weights."
    X, y = make_classification(1200, 5, n_informative=3, weights=[1 - minority], flip_y=0.02, class_sep=1.0,
                               random_state=seed)
    Xtr, Xte, ytr, yte = X[:600], X[600:], y[:600], y[600:]

    def recall(est):
        return (est.fit(Xtr, ytr).predict(Xte)[yte == 1] == 1).mean()
    balanced = recall(NuOELMClassifier(class_weight='balanced', probability=False, random_state=0))
    balanced_svc = recall(SVC(class_weight='balanced'))
    assert balanced >= 0.6 and balanced >= balanced_svc - 0.05, (balanced, balanced_svc)
    default, default_svc = recall(NuOELMClassifier(probability=False, random_state=0)), recall(SVC())
    assert default >= default_svc - 0.05, (default, default_svc)


def test_path_is_cold_by_default_and_warm_on_request():
    Q = _gram_problem(seed=5)
    nus = [0.2, 0.4, 0.6]
    cold, warm = nu_oelm_path(Q, nus), nu_oelm_path(Q, nus, warm_start=True)
    for nu, c, w in zip(nus, cold, warm):
        np.testing.assert_array_equal(c.alpha, nu_oelm_active_set(Q, nu).alpha)      # a cold solve, bit for bit
        np.testing.assert_allclose(_obj(Q, w.alpha), _obj(Q, c.alpha), rtol=1e-8)
    with pytest.raises(TypeError, match='warm_start'):
        nu_oelm_path(Q, nus, warm_start=1)


def _grid_search(est_kw, X, y, nus, **gs_kw):
    from sklearn.model_selection import GridSearchCV
    return GridSearchCV(NuOELMClassifier(**est_kw), {'nu': list(nus)}, **gs_kw).fit(X, y)


@pytest.mark.parametrize('kw', [dict(), dict(kernel='elm', n_hidden=40, random_state=0),
                                dict(class_weight='balanced'), dict(kernel='laplacian', gamma=0.1)])
def test_cv_matches_grid_search(kw):
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    nus = [0.05, 0.2, 0.5, 0.9]                        # 0.9 > 2/3: infeasible on every fold, NaN as GridSearchCV's
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')                # GridSearchCV warns about the failed fits at nu = 0.9
        peer = _grid_search(dict(probability=False, **kw), X, y, nus)
    ours = NuOELMClassifierCV(nus=nus, probability=False, **kw).fit(X, y)
    assert ours.nu_ == peer.best_params_['nu'] and ours.best_score_ == peer.best_score_
    for key in ('mean_test_score', 'std_test_score', 'rank_test_score', 'split2_test_score'):
        np.testing.assert_allclose(ours.cv_results_[key], peer.cv_results_[key], rtol=1e-12)
    np.testing.assert_allclose(ours.decision_function(X), peer.decision_function(X), rtol=1e-9, atol=1e-12)


def test_cv_scoring_splitter_and_precomputed():
    from sklearn.model_selection import KFold
    from sklearn.metrics.pairwise import rbf_kernel
    X, y = _data()
    nus, split = [0.1, 0.3], KFold(3, shuffle=True, random_state=1)
    peer = _grid_search(dict(random_state=0), X, y, nus, cv=split, scoring='neg_log_loss')
    ours = NuOELMClassifierCV(nus=nus, cv=split, scoring='neg_log_loss', random_state=0).fit(X, y)
    for k, (tr, _) in enumerate(split.split(X)):
        mine, theirs = ours.cv_results_[f'split{k}_test_score'], peer.cv_results_[f'split{k}_test_score']
        usable = np.isfinite(mine)
        np.testing.assert_allclose(mine[usable], theirs[usable], rtol=1e-9)
        for nu in np.asarray(nus)[~usable]:            # NaN only where that fold's fit collapses, as its fit warns
            with pytest.warns(MarginCollapseWarning, match='collapsed'):
                NuOELMClassifier(nu=nu, random_state=0).fit(X[tr], y[tr])
    assert ours.nu_ == peer.best_params_['nu'] == 0.3
    np.testing.assert_allclose(ours.predict_proba(X), peer.predict_proba(X), rtol=1e-9)
    K, nus = rbf_kernel(X, gamma=5.0), [0.3, 0.5]    # (at gamma = 0.5 or nu = 0.1 margins collapse on the folds)
    peer = _grid_search(dict(kernel='precomputed', probability=False), K, y, nus)
    ours = NuOELMClassifierCV(nus=nus, kernel='precomputed', probability=False).fit(K, y)
    assert np.all(np.isfinite(ours.cv_results_['mean_test_score']))
    np.testing.assert_allclose(ours.cv_results_['mean_test_score'], peer.cv_results_['mean_test_score'], rtol=1e-12)


def _duplicated_opposite(seed=0):
    "80 points, 20 of them twice with opposite labels: Q alpha = 0 is feasible up to nu = 0.4 on all rows."
    r = np.random.default_rng(seed)
    X = r.normal(size=(80, 2))
    y = (X[:, 0] + 0.3 * r.normal(size=80) > 0).astype(int)
    return np.vstack([X, X[:20]]), np.r_[y, 1 - y[:20]]


def test_cv_never_chooses_a_collapsed_nu():
    """A ν whose margin collapses on a fold scores NaN (scikit-learn's error_score) and is never chosen, even where
    its arbitrary fit scores better; the fold's own fit warns at exactly those ν."""
    from sklearn.model_selection import StratifiedKFold
    X, y = _duplicated_opposite()
    nus = [0.1, 0.2, 0.3, 0.6, 0.8]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        peer = _grid_search(dict(probability=False), X, y, nus)
    ours = NuOELMClassifierCV(nus=nus, probability=False).fit(X, y)
    collapsed = np.zeros(len(nus), bool)
    for k, (tr, _) in enumerate(StratifiedKFold(5).split(X, y)):
        mine = ours.cv_results_[f'split{k}_test_score']
        for j, nu in enumerate(nus):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter('always')
                NuOELMClassifier(nu=nu, probability=False).fit(X[tr], y[tr])
            warned = any(issubclass(w.category, MarginCollapseWarning) for w in caught)
            assert np.isnan(mine[j]) == warned, (k, nu)
            collapsed[j] |= warned
        np.testing.assert_allclose(mine[~np.isnan(mine)], peer.cv_results_[f'split{k}_test_score'][~np.isnan(mine)],
                                   rtol=1e-12)
    assert collapsed[:2].all() and not collapsed[-1]
    assert ours.nu_ in np.asarray(nus)[~collapsed] and np.isfinite(ours.best_score_)
    assert ours.rho_ > 1e-6 and np.all(np.isfinite(NuOELMClassifierCV(nus=nus).fit(X, y).predict_proba(X)))


def test_cv_with_every_nu_collapsed_takes_the_largest_feasible():
    X, y = _duplicated_opposite()
    with pytest.warns(MarginCollapseWarning, match='no nu .* usable.*largest feasible'):
        m = NuOELMClassifierCV(nus=[0.1, 0.2], probability=False).fit(X, y)
    assert m.nu_ == 0.2 and np.isnan(m.best_score_) and np.all(np.isnan(m.cv_results_['mean_test_score']))
    with pytest.raises(ValueError, match='infeasible.*lower nus'):
        NuOELMClassifierCV(nus=[0.5, 0.99], probability=False).fit(X[:60], (np.arange(60) < 10).astype(int))


def test_cv_bad_input_keeps_fitted_model():
    X, y = _data()
    clf = NuOELMClassifierCV(nus=[0.2, 0.4], probability=False).fit(X, y)
    alpha, nu = clf.alpha_.copy(), clf.nu_
    for bad, match in ((dict(nus=[0.2, 1.5]), 'nus'), (dict(nus=[]), 'nus'), (dict(nus='0.2'), 'nus'),
                       (dict(cv='five'), 'cv'), (dict(scoring='nonsense'), 'scoring'), (dict(nus=[0.99]), 'lower nus'),
                       (dict(kernel='nope'), 'kernel')):
        with pytest.raises(ValueError, match=match):
            clf.set_params(**bad).fit(X, y)
        clf.set_params(nus=[0.2, 0.4], cv=5, scoring=None, kernel='rbf')
    np.testing.assert_array_equal(clf.alpha_, alpha)
    assert clf.nu_ == nu
    with pytest.raises(ValueError):
        NuOELMClassifierCV().fit(X[:1], y[:1])


@pytest.mark.parametrize('Est', [NuOELMClassifier, OELMClassifier])
def test_probabilities_are_deterministic_from_random_state(Est):
    """The internal calibration folds are seeded from random_state: at None a fit does not depend on numpy's global
    random state; an int reproduces a fit, another int draws other folds."""
    X, y = load_dataset('heart_statlog')
    X = StandardScaler().fit_transform(X)
    saved = np.random.get_state()
    try:
        fits = []
        for global_seed in (1, 2):
            np.random.seed(global_seed)
            fits.append(Est().fit(X, y).predict_proba(X))
    finally:
        np.random.set_state(saved)
    np.testing.assert_array_equal(fits[0], fits[1])
    a, b, c = (Est(random_state=s).fit(X, y).predict_proba(X) for s in (3, 3, 4))
    np.testing.assert_array_equal(a, b)
    assert np.abs(a - c).max() > 1e-6                      # other folds, another calibration


@pytest.mark.parametrize('Est', [NuOELMClassifier, OELMClassifier])
def test_multiclass_log_loss_is_within_10_percent_of_svc(Est):
    """More than two classes: the multinomial calibration of the out-of-fold scores reaches SVC(probability=True)'s
    log loss (pairwise coupling) within 10 % on statlog (6 classes); its arg-max may differ from predict, and is as
    accurate."""
    from sklearn.metrics import log_loss
    X, y = load_dataset('statlog')
    tr, te = train_test_split(np.arange(len(y)), train_size=600, test_size=1000, stratify=y, random_state=0)
    sc = StandardScaler().fit(X[tr])
    Xtr, Xte = sc.transform(X[tr]), sc.transform(X[te])
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', FutureWarning)          # scikit-learn 1.9 deprecates SVC(probability=True)
        ref = log_loss(y[te], SVC(probability=True, random_state=0).fit(Xtr, y[tr]).predict_proba(Xte))
    m = Est(random_state=0).fit(Xtr, y[tr])
    P = m.predict_proba(Xte)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    assert log_loss(y[te], P, labels=m.classes_) <= 1.10 * ref
    by_proba = m.classes_[P.argmax(axis=1)]
    assert np.mean(by_proba == y[te]) >= m.score(Xte, y[te]) - 0.01
    assert np.mean(by_proba != m.predict(Xte)) < 0.15


def test_warm_start_down_the_nu_path_keeps_the_bounded_variables():
    """Down the ν path a warm start is not scaled down (that would lift every variable at its upper bound into the
    factor): the same optimum as cold solves in well under the cold number of steps, for the path and the
    estimator."""
    from sklearn.metrics.pairwise import rbf_kernel
    from kelm_nb.core import encode_labels
    X, y = load_dataset('twonorm')
    X, y = StandardScaler().fit_transform(X[:600]), y[:600]
    t = encode_labels(y)[0][:, 0]
    Q = t[:, None] * (rbf_kernel(X, gamma=1 / X.shape[1]) + 1) * t[None, :]
    nus = [0.4, 0.3, 0.2, 0.1]
    warm, cold = nu_oelm_path(Q, nus, warm_start=True), nu_oelm_path(Q, nus)
    for w, c in zip(warm[1:], cold[1:]):
        np.testing.assert_allclose(0.5 * w.alpha @ Q @ w.alpha, 0.5 * c.alpha @ Q @ c.alpha, rtol=1e-9)
        assert w.n_iter <= 0.6 * c.n_iter, (w.n_iter, c.n_iter)
    m = NuOELMClassifier(nu=0.3, warm_start=True, probability=False).fit(X, y)
    steps = int(m.set_params(nu=0.2).fit(X, y).n_iter_)
    ref = NuOELMClassifier(nu=0.2, probability=False).fit(X, y)
    np.testing.assert_allclose(m.decision_function(X), ref.decision_function(X), rtol=1e-6, atol=1e-6)
    assert steps <= 0.6 * ref.n_iter_, (steps, ref.n_iter_)



def test_cv_default_grid_reaches_the_large_nu_noisy_sets_need():
    """NuOELMClassifierCV() on flare_solar (noisy, 55 % majority): every ν up to 0.5 is below the majority rate on
    held-out rows, ν near its limit 0.89 is at SVC()'s accuracy; the default grid reaches it (fractions of the
    limit), so the cross-validated accuracy is at least the majority rate and within 3 points of SVC()."""
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    X, y = load_dataset('flare_solar')
    X, _, y, _ = train_test_split(X, y, train_size=1000, stratify=y, random_state=0)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    acc = cross_val_score(make_pipeline(StandardScaler(), NuOELMClassifierCV(probability=False)), X, y, cv=cv).mean()
    ref = cross_val_score(make_pipeline(StandardScaler(), SVC()), X, y, cv=cv).mean()
    share = np.bincount(np.unique(y, return_inverse=True)[1]) / len(y)
    assert acc >= share.max() and acc >= ref - 0.03, (acc, share.max(), ref)
    m = NuOELMClassifierCV(probability=False).fit(StandardScaler().fit_transform(X), y)
    assert m.nus_.max() > 0.5 and m.nus_.max() <= 2 * share.min(), m.nus_


def test_copies_stay_out_of_the_free_set_at_the_same_optimum():
    """A full-rank kernel with a third of its points repeated (same labels) at small ν: a copy of a free point stays
    on its bound, and the objective matches LIBSVM's."""
    from sklearn.metrics.pairwise import rbf_kernel
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 5))
    t = np.where(X[:, 0] + 0.5 * rng.normal(size=300) > 0, 1.0, -1.0)
    idx = np.r_[np.arange(300), np.arange(0, 300, 3)]
    Q = (t[:, None] * rbf_kernel(X, gamma=0.2) * t[None, :])[np.ix_(idx, idx)]
    r = nu_oelm_active_set(Q, 0.1)
    a_ref, _ = _libsvm(Q, 0.1)
    assert _obj(Q, r.alpha) <= _obj(Q, a_ref) * (1 + 1e-9)
    np.testing.assert_allclose(_obj(Q, r.alpha), _obj(Q, a_ref), rtol=1e-6)
    free = (r.alpha > 0) & (r.alpha < 1 / len(Q))
    assert not np.any(free[:300:3] & free[300:])                   # never a point and its copy both in S
    assert r.kkt_gap <= 1e-8 * r.rho + 1e-12 * 0.1 * Q.diagonal().max()


def test_grouped_givens_deletion_matches_the_reduced_factor():
    """`_chol_delete` rotates 16 rows at a time: at every position of a 40-row factor (groups cut anywhere) it gives
    the Cholesky factor of the matrix without that row and column, and rotates the solved vectors with it."""
    from numba import njit
    from kelm_nb.nu_oelm import _chol_delete
    delete = njit(_chol_delete.py_func)
    rng = np.random.default_rng(0)
    B = rng.normal(size=(40, 45))
    A = B @ B.T
    L = np.linalg.cholesky(A)
    b = rng.normal(size=40)
    for pos in (0, 1, 15, 16, 17, 31, 38, 39):
        Lf, x, y = np.zeros((48, 48)), np.linalg.solve(L, b), np.linalg.solve(L, np.ones(40))
        Lf[:40, :40] = L
        delete(Lf, 40, pos, x, y)
        keep = np.delete(np.arange(40), pos)
        L2 = Lf[:39, :39]
        np.testing.assert_allclose(np.tril(L2), L2, atol=0)
        np.testing.assert_allclose(L2 @ L2.T, A[np.ix_(keep, keep)], rtol=1e-10, atol=1e-10 * A.max())
        np.testing.assert_allclose(L2 @ x[:39], b[keep], rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(L2 @ y[:39], np.ones(39), rtol=1e-10, atol=1e-10)


def test_cv_warm_path_matches_grid_search_on_the_default_grid():
    """`NuOELMClassifierCV` solves each fold's grid from the largest ν down, warm-started: on breast_cancer (569 rows,
    the default 7-value grid) its scores and choice equal GridSearchCV's cold fits on the same folds."""
    from sklearn.datasets import load_breast_cancer
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    ours = NuOELMClassifierCV(probability=False).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        peer = _grid_search(dict(probability=False), X, y, ours.nus_, cv=5)
    assert ours.nu_ == peer.best_params_['nu'] and ours.best_score_ == peer.best_score_
    for key in ('mean_test_score', 'rank_test_score', 'split0_test_score', 'split4_test_score'):
        np.testing.assert_allclose(ours.cv_results_[key], peer.cv_results_[key], rtol=1e-12)

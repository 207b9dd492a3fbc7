"""Trust tests of kelm_nb.nu_oelm (issues 11.2 and 13): infeasible ν, collapsed margins, ρ-normalised multi-class
scores, sensible defaults, the SVC-like interface (predict_proba, class_weight, n_support_, dual_coef_, warm_start),
the stored β, the ν path, the one-pass input check and randomised bad input."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.datasets import load_iris, make_classification
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, OneClassSVM

from kelm_nb.core import RandomHiddenLayer
from kelm_nb.datasets import load_dataset
from kelm_nb.nu_oelm import (MarginCollapseWarning, NuOELMClassifier, OELMClassifier, nu_oelm_active_set,
                             nu_oelm_path, oelm_active_set)


def _unbalanced(n=1200, minority=0.03, seed=0):
    X, y = make_classification(n, 5, n_informative=3, weights=[1 - minority], flip_y=0, class_sep=1.5,
                               random_state=seed)
    return X[: n // 2], X[n // 2:], y[: n // 2], y[n // 2:]


def _problem(n=150, L=25, seed=0):
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
    m = NuOELMClassifier(nu=0.3, kernel='elm', n_hidden=200, center=False, random_state=0).fit(X, y)
    H = m.hidden_layer_.transform(X)
    raw = H @ H[m.support_].T @ (m.dual_coef_.T * m.rho_)                      # eq. 14 per column
    np.testing.assert_allclose(m.decision_function(X), raw / m.rho_, rtol=1e-9, atol=1e-9)
    assert np.array_equal(m.predict(X), m.classes_[np.argmax(raw / m.rho_, axis=1)])


def test_defaults_are_close_to_svc_on_bundled_sets():
    "The default constructors within a few points of SVC() (the full table over all sets is in the notebook)."
    for name in ('heart_statlog', 'pimadiabetes', 'wdbc', 'balance'):
        X, y = load_dataset(name)
        tr, te = train_test_split(np.arange(len(y)), train_size=min(400, len(y) // 2), stratify=y, random_state=0)
        ref = make_pipeline(StandardScaler(), SVC()).fit(X[tr], y[tr]).score(X[te], y[te])
        for est in (NuOELMClassifier(random_state=0), OELMClassifier(random_state=0)):
            acc = make_pipeline(StandardScaler(), est).fit(X[tr], y[tr]).score(X[te], y[te])
            assert acc >= ref - 0.06, (name, type(est).__name__, acc, ref)


def test_auto_nu_is_a_feasible_candidate():
    Xtr, _, ytr, _ = _unbalanced()
    m = NuOELMClassifier(random_state=0).fit(Xtr, ytr)
    limit = 2 * np.mean(ytr == 1)
    assert np.isclose(m.nu_ / limit, [0.1, 0.2, 0.3, 0.5, 0.8]).any()
    assert NuOELMClassifier(nu=0.4).fit(*load_iris(return_X_y=True)).nu_ == 0.4


def test_predict_proba_platt():
    X, y = load_iris(return_X_y=True)
    m = NuOELMClassifier(nu=0.2, probability=True, random_state=0).fit(X, y)
    P = m.predict_proba(X)
    assert P.shape == (150, 3) and np.allclose(P.sum(axis=1), 1) and np.all((P >= 0) & (P <= 1))
    np.testing.assert_allclose(np.log(P), m.predict_log_proba(X))
    assert np.mean(m.classes_[P.argmax(axis=1)] == y) > 0.9
    Xb, yb = X[y > 0], y[y > 0]
    Pb = OELMClassifier(probability=True, random_state=0).fit(Xb, yb).predict_proba(Xb)
    assert Pb.shape == (100, 2) and np.allclose(Pb.sum(axis=1), 1)
    assert not hasattr(NuOELMClassifier(), 'predict_proba')                    # as SVC(probability=False)


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
    Q = _problem(seed=4)
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
    np.testing.assert_allclose(m.decision_function(X), Hq @ Hs.T @ m.dual_coef_.T, rtol=1e-9, atol=1e-9)
    assert np.array_equal(m.predict(X.astype(np.float32)), m.predict(X.astype(np.float64)))


def test_one_pass_check_detects_any_single_asymmetry():
    Q = _problem(seed=2)
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
    Q = _problem(n=150, L=12, seed=1)
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

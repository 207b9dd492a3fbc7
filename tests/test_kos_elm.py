"""Tests of kelm_nb.kos_elm: scikit-learn checks on the defaults and variants, the recursions against batch oracles
(float64 and float32 input), numerical guards at large C, bad input, the light single-row path, pickles."""
import pickle
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_moons
from sklearn.utils.estimator_checks import parametrize_with_checks

from kelm_nb.core import (ELMClassifier, ELMRegressor, IllConditionedWarning, KernelELMClassifier, KernelELMRegressor,
                          RandomHiddenLayer, compute_kernel, kernel_ridge_solve)
from kelm_nb import kos_elm
from kelm_nb.kos_elm import (KERNEL_IDS, KOSELMClassifier, KOSELMRegressor, OSELMClassifier, OSELMRegressor,
                             oselm_coef, oselm_init, oselm_update, prequential_errors)
from sklearn.kernel_ridge import KernelRidge
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR
from kelm_nb.datasets import list_datasets, load_dataset

ESTIMATORS = [
    KOSELMRegressor(), KOSELMClassifier(), OSELMRegressor(), OSELMClassifier(),
    KOSELMRegressor(sparsification=None), KOSELMRegressor(kernel='laplacian', ald_threshold=0.05, budget=30),
    KOSELMRegressor(sparsification='fb', budget=40), KOSELMRegressor(C=np.inf, ald_threshold=0.01),
    KOSELMClassifier(sparsification='fb', budget=40), KOSELMRegressor(kernel='poly', degree=2, sparsification=None),
]


_CALIBRATED = ("calibrated predict_proba: near the boundary its argmax can differ from predict, as with "
               "SVC(probability=True) (scikit-learn exempts its threshold-tuned classifiers from this check the "
               "same way)")


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=lambda est: (
    {'check_classifiers_train': _CALIBRATED} if isinstance(est, (KOSELMClassifier, OSELMClassifier)) else {}))
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', UserWarning)
        check(estimator)


def _data(n=150, d=3, n_out=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    Y = np.c_[np.sin(5 * X.sum(1)), X[:, 0] ** 2][:, :n_out] + 0.05 * rng.normal(size=(n, n_out))
    return X, Y


def _kelm(X, Y, Z, gamma, C, kernel='rbf'):
    "Batch kernel ELM (eq. 4) on (X, Y) evaluated at Z, by `kernel_ridge_solve`."
    K = compute_kernel(X, X, kernel, gamma=gamma)
    return compute_kernel(Z, X, kernel, gamma=gamma) @ kernel_ridge_solve(K, Y, C)


@pytest.mark.parametrize('dtype', [np.float64, np.float32])
@pytest.mark.parametrize('kernel', sorted(KERNEL_IDS))
def test_table_one_equals_kernel_elm(dtype, kernel):
    X, Y = _data()
    Xq = _data(n=30, seed=4)[0]
    est = KOSELMRegressor(kernel=kernel, gamma=0.7, C=20.0, sparsification=None, fit_intercept=False)
    est.fit(X.astype(dtype), Y)
    ref = _kelm(X.astype(dtype).astype(float), Y, Xq, 0.7, 20.0, kernel)
    np.testing.assert_allclose(est.predict(Xq.astype(dtype)), ref, rtol=1e-6, atol=1e-6 * np.abs(ref).max())


def test_intercept_is_the_kernel_plus_one():
    X, Y = _data()
    est = KOSELMRegressor(gamma=0.7, C=20.0, sparsification=None).fit(X, Y + 50.0)
    peer = KernelELMRegressor(kernel=lambda A, B: compute_kernel(A, B, 'rbf', gamma=0.7) + 1.0, C=20.0,
                              fit_intercept=False).fit(X, Y + 50.0)
    np.testing.assert_allclose(est.predict(X), peer.predict(X), rtol=1e-9)
    np.testing.assert_allclose(est.intercept_, peer.dual_coef_.sum(0), rtol=1e-8)


def _ald_design(X, idx, gamma):
    A = np.zeros((len(X), len(idx)))
    for t in range(len(X)):
        j = np.searchsorted(idx, t, side='right')
        if j and idx[j - 1] == t:
            A[t, j - 1] = 1.0
        elif j:
            Dt = X[idx[:j]]
            A[t, :j] = np.linalg.solve(compute_kernel(Dt, Dt, 'rbf', gamma=gamma),
                                       compute_kernel(Dt, X[t:t + 1], 'rbf', gamma=gamma))[:, 0]
    return A


@pytest.mark.parametrize('C', [30.0, np.inf])
def test_ald_closed_form(C):
    "Regularised ALD-KRLS = (A'A K_D + I/C)^-1 A'y; C = inf is Engel's least squares."
    X, Y = _data(n=150)
    g = 1.5
    est = KOSELMRegressor(gamma=g, C=C, ald_threshold=0.02, budget=None, fit_intercept=False).fit(X, Y)
    idx = est.dictionary_indices_
    assert 5 < len(idx) < len(X)
    A, KD = _ald_design(X, idx, g), compute_kernel(X[idx], X[idx], 'rbf', gamma=g)
    if np.isinf(C):
        ref = np.linalg.lstsq(A @ KD, Y, rcond=None)[0]
        np.testing.assert_allclose(KD @ est.coef_, KD @ ref, rtol=1e-6, atol=1e-7 * np.abs(KD @ ref).max())
    else:
        ref = np.linalg.solve(A.T @ A @ KD + np.eye(len(idx)) / C, A.T @ Y)
        np.testing.assert_allclose(est.coef_, ref, rtol=1e-7, atol=1e-9 * np.abs(ref).max())


def test_ald_threshold_zero_and_budget():
    X, Y = _data(n=60)
    ald = KOSELMRegressor(gamma=1.5, C=20.0, ald_threshold=0.0, budget=None, fit_intercept=False).fit(X, Y)
    np.testing.assert_allclose(ald.predict(X), _kelm(X, Y, X, 1.5, 20.0), rtol=1e-7, atol=1e-8)
    capped = KOSELMRegressor(gamma=1.5, C=20.0, ald_threshold=0.0, budget=17).fit(X, Y)
    assert capped.dictionary_.shape == (17, 3)
    # the frozen dictionary (inverse factor, no substitution) continues the same model as a fresh recursion would
    more = _data(n=200, seed=3)[0]
    capped.partial_fit(more, np.c_[np.sin(more.sum(1)), more[:, 0]])
    assert capped.dictionary_.shape == (17, 3) and np.isfinite(capped.coef_).all()


@pytest.mark.parametrize('rule', ['fb', 'window'])
def test_fb_and_window_oracles(rule):
    X, Y = _data(n=200)
    est = KOSELMRegressor(gamma=1.5, C=20.0, sparsification=rule, budget=25, fit_intercept=False).fit(X, Y)
    D, idx = est.dictionary_, est.dictionary_indices_
    assert D.shape == (25, 3)
    np.testing.assert_array_equal(D, X[idx])
    if rule == 'window':
        np.testing.assert_array_equal(idx, np.arange(175, 200))
    np.testing.assert_allclose(est.predict(X), _kelm(D, Y[idx], X, 1.5, 20.0), rtol=1e-8, atol=1e-9)
    big = KOSELMRegressor(gamma=1.5, C=20.0, sparsification=rule, budget=500, fit_intercept=False).fit(X, Y)
    np.testing.assert_allclose(big.predict(X), _kelm(X, Y, X, 1.5, 20.0), rtol=1e-8, atol=1e-9)


def test_oselm_equals_batch_elm_with_defaults():
    X, Y = _data(n=300, d=4)
    np.testing.assert_allclose(OSELMRegressor(random_state=3).fit(X, Y).predict(X),
                               ELMRegressor(random_state=3).fit(X, Y).predict(X), rtol=1e-8, atol=1e-9)
    yc = np.where(Y[:, 0] > 0, 'a', 'b')
    np.testing.assert_allclose(OSELMClassifier(random_state=3).fit(X, yc).decision_function(X),
                               ELMClassifier(random_state=3).fit(X, yc).decision_function(X), rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(OSELMClassifier(hidden_layer='random', C=1.0, random_state=3).fit(X, yc)
                               .decision_function(X), ELMClassifier(hidden_layer='random', C=1.0, random_state=3)
                               .fit(X, yc).decision_function(X), rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(KOSELMClassifier(gamma=0.7, C=50.0, sparsification=None, fit_intercept=False).fit(
        X, yc).decision_function(X), KernelELMClassifier(gamma=0.7, C=50.0, fit_intercept=False).fit(
        X, yc).decision_function(X), rtol=1e-8, atol=1e-9)


def test_oselm_classifier_default_is_fixed_by_the_first_batch():
    "C='auto' and the 'rbf' centres come from the first batch alone; later batches are folded in with them."
    X, Y = _data(n=400, d=4)
    y = np.where(Y[:, 0] > 0, 'a', 'b')
    first = OSELMClassifier(random_state=0).fit(X[:250], y[:250])
    streamed = OSELMClassifier(random_state=0).partial_fit(X[:250], y[:250], classes=['a', 'b'])
    for b in np.array_split(np.arange(250, 400), [1, 60]):
        streamed.partial_fit(X[b], y[b])
    assert streamed.C_ == first.C_ and streamed.n_hidden_ == 250
    np.testing.assert_array_equal(streamed.hidden_layer_.centres_, first.hidden_layer_.centres_)
    H, t = streamed.hidden_layer_.transform(X), np.where(y == 'b', 1.0, -1.0)   # ridge on all rows, same layer
    Hc, tc = H - H.mean(0), t - t.mean()
    beta = np.linalg.solve(Hc.T @ Hc + np.eye(250) / first.C_, Hc.T @ tc)
    np.testing.assert_allclose(streamed.decision_function(X), H @ beta + t.mean() - H.mean(0) @ beta,
                               rtol=1e-7, atol=1e-8)
    short = OSELMClassifier(n_hidden=50, random_state=0).partial_fit(X[:10], y[:10], classes=['a', 'b'])
    assert short.n_hidden_ == 10 and short.C_ in (10.0 ** np.arange(-2.0, 1.75, 0.5))
    assert np.isfinite(short.partial_fit(X[10:], y[10:]).decision_function(X)).all()


@pytest.mark.parametrize('dtype', [np.float64, np.float32])
def test_oselm_functions(dtype):
    rng = np.random.default_rng(0)
    H = rng.normal(size=(120, 15)).astype(dtype)
    T = rng.normal(size=(120, 2))
    R, B = oselm_update(*oselm_init(H[:10], T[:10], C=5.0), H[10:], T[10:])
    H64 = H.astype(np.float64)
    np.testing.assert_allclose(oselm_coef(R, B), np.linalg.solve(H64.T @ H64 + np.eye(15) / 5.0, H64.T @ T),
                               rtol=1e-9, atol=1e-11)
    with pytest.raises(ValueError, match='n_hidden=15'):
        oselm_init(H[:5], T[:5], C=None)
    with pytest.raises(ValueError, match='shapes'):
        oselm_update(R, B, H[:, :4], T)
    with pytest.raises(ValueError, match='NaN'):
        oselm_update(R, B, np.full((2, 15), np.nan), T[:2])


@pytest.mark.parametrize('est', [KOSELMRegressor(C=10.0, sparsification=None),
                                 KOSELMRegressor(C=10.0, ald_threshold=0.05),
                                 KOSELMRegressor(C=10.0, sparsification='fb', budget=30),
                                 KOSELMRegressor(C=10.0, sparsification='window', budget=30),
                                 OSELMRegressor(n_hidden=20, C=10.0, random_state=0)])
def test_any_split_equals_fit(est):
    X, Y = _data(n=200)
    est.fit(X, Y)
    cuts = np.sort(np.random.default_rng(2).choice(np.arange(1, 200), size=9, replace=False))
    est2 = type(est)(**est.get_params())
    for b in np.split(np.arange(200), cuts):
        est2.partial_fit(X[b], Y[b])
    for i in range(5):                              # single rows through the light path
        est2.partial_fit(X[i:i + 1], Y[i:i + 1])
        est.partial_fit(X[i:i + 1].tolist(), Y[i:i + 1].tolist())       # the full validation path
    np.testing.assert_allclose(est2.predict(X), est.predict(X), rtol=1e-10, atol=1e-12)
    assert est2.n_samples_seen_ == 205


def test_prequential_errors_are_predict_then_update():
    X, Y = _data(n=120, n_out=1)
    y = Y[:, 0]
    for est in (KOSELMRegressor(C=30.0, ald_threshold=0.01), OSELMRegressor(n_hidden=20, C=10.0, random_state=0)):
        fast = prequential_errors(type(est)(**est.get_params()), X, y)
        slow, errors = type(est)(**est.get_params()), []
        for t in range(len(X)):
            errors.append(y[t] - (slow.predict(X[t:t + 1])[0] if t else 0.0))
            slow.partial_fit(X[t:t + 1], y[t:t + 1])
        np.testing.assert_allclose(fast, errors, rtol=1e-8, atol=1e-10)
    with pytest.raises(TypeError, match='regressor'):
        prequential_errors(KOSELMClassifier(), X, y > 0)


def test_predict_proba_is_calibrated_and_mostly_agrees_with_predict():
    "Calibrated probabilities: rows sum to one, argmax agrees with predict except near the boundary (as SVC)."
    X, y = make_classification(300, 5, n_informative=3, n_classes=3, random_state=0)
    for est in (KOSELMClassifier(C=10.0), OSELMClassifier(random_state=0),
                KOSELMClassifier(sparsification='fb', budget=30)):
        est.fit(X, y)
        p = est.predict_proba(X)
        np.testing.assert_allclose(p.sum(1), 1.0)
        assert (p >= 0).all() and est.calibration_ is not None
        assert np.mean(est.classes_[p.argmax(1)] == est.predict(X)) > 0.9
        np.testing.assert_allclose(np.exp(est.predict_log_proba(X[:5])), p[:5], rtol=1e-12)
        pb = type(est)(**est.get_params()).fit(X, y == 1)
        pp, s = pb.predict_proba(X)[:, 1], pb.decision_function(X)
        np.testing.assert_allclose(pb.predict_proba(X).sum(1), 1.0)
        assert np.all(np.diff(pp[np.argsort(s)]) >= -1e-12)          # binary: monotone in the score


def test_calibration_is_lazy_and_follows_the_stream():
    X, y = make_classification(600, 5, random_state=1)
    est = KOSELMClassifier(C=10.0).partial_fit(X[:1], y[:1], classes=[0, 1])
    np.testing.assert_allclose(est.predict_proba(X[:3]).sum(1), 1.0)        # one class recorded: clipped scores
    assert est.calibration_ is None
    for s in range(1, 600, 50):
        est.partial_fit(X[s:s + 50], y[s:s + 50])
    cal = est.calibration_
    assert cal is not None and est.calibration_ is cal                       # cached until new data
    est.partial_fit(X[:1], y[:1])
    assert est.calibration_ is not cal


@pytest.mark.parametrize('cls', [KOSELMClassifier, OSELMClassifier])
def test_log_loss_close_to_svc(cls):
    "Calibrated streaming probabilities against SVC(probability=True) on a bundled set, 5-fold CV."
    X, y = load_dataset('breast_wisconsin')
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    ours = -cross_val_score(make_pipeline(StandardScaler(), cls()), X, y, cv=cv, scoring='neg_log_loss').mean()
    svc = -cross_val_score(make_pipeline(StandardScaler(), SVC(probability=True, random_state=0)), X, y, cv=cv,
                           scoring='neg_log_loss').mean()
    assert np.isfinite(ours) and ours <= 1.1 * svc + 0.01


@pytest.mark.parametrize('rule', [None, 'fb', 'window'])
@pytest.mark.parametrize('C', [1e7, 1e9, 1e12])
def test_large_C_stays_finite_and_close_to_batch(rule, C):
    "make_moons(400) and duplicated rows at large C: the previous recursions returned NaN here."
    X, y = make_moons(400, noise=0.1, random_state=0)
    y = y.astype(float)
    for Xs, ys in ((X, y), (np.r_[X, X], np.r_[y, y])):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', IllConditionedWarning)
            est = KOSELMRegressor(gamma=0.5, C=C, sparsification=rule, budget=None if rule is None else 100,
                                  fit_intercept=False).fit(Xs, ys)
        pred = est.predict(X)
        assert np.isfinite(pred).all() and np.isfinite(est.coef_).all()
        if C <= 1e9 and Xs is X:
            ref = _kelm(est.dictionary_, ys[est.dictionary_indices_], X, 0.5, C)
            assert np.abs(pred - ref).max() < 1e-3


def test_large_C_warns():
    X, y = make_moons(200, noise=0.1, random_state=0)
    with pytest.warns(IllConditionedWarning, match='double precision'):
        KOSELMRegressor(gamma=0.5, C=1e15, sparsification=None).fit(np.r_[X, X], np.r_[y, y].astype(float))


def test_oselm_large_C_matches_exact_least_squares():
    X, y = _data(n=800, d=4, n_out=1)
    H = RandomHiddenLayer(200, random_state=0).fit(X).transform(X)
    for C in (1e6, 1e12):
        est = OSELMRegressor(n_hidden=200, C=C, fit_intercept=False, random_state=0).fit(X, y[:, 0])
        exact = H @ np.linalg.lstsq(np.r_[H, np.eye(200) / np.sqrt(C)], np.r_[y[:, 0], np.zeros(200)], rcond=None)[0]
        assert np.abs(est.predict(X) - exact).max() < 1e-8 * np.abs(exact).max()


@pytest.mark.parametrize('delta', [0.0, 1e-10, 1e-9, 1e-8])
def test_tiny_ald_threshold_is_finite(delta):
    from kelm_nb.datasets import mackey_glass, mackey_glass_embedding
    X, y = mackey_glass_embedding(mackey_glass(607), n_lags=7, horizon=1)
    X, y = (X - X.min()) / (X.max() - X.min()), (y - y.mean()) / y.std()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', UserWarning)
        est = KOSELMRegressor(gamma=4.0, C=1012.0, ald_threshold=delta, budget=None, fit_intercept=False).fit(X, y)
    assert np.isfinite(est.coef_).all() and np.sqrt(np.mean((est.predict(X) - y) ** 2)) < 0.05


def test_warnings_name_the_regime():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 20))
    y = X[:, 0] + 0.1 * rng.normal(size=600)
    with pytest.warns(UserWarning, match='keeps'):
        KOSELMRegressor(ald_threshold=0.1, budget=None).fit(X, y)
    Xn = rng.uniform(size=(3000, 8))
    yn = np.sin(3 * Xn[:, 0]) + Xn[:, 1] * Xn[:, 2] + rng.normal(size=3000)
    with pytest.warns(UserWarning, match='FB dictionary'):
        KOSELMRegressor(gamma=0.5, C=100.0, sparsification='fb', budget=100, fit_intercept=False).fit(Xn, yn)
    with warnings.catch_warnings():
        warnings.simplefilter('error')             # a noise-free stream does not warn
        KOSELMRegressor(gamma=0.5, C=100.0, sparsification='fb', budget=100, fit_intercept=False).fit(
            Xn, np.sin(3 * Xn[:, 0]) + Xn[:, 1] * Xn[:, 2])


def test_default_threshold_and_budget():
    est = KOSELMRegressor().fit(*_data())
    assert est.ald_threshold_ == 0.01 and est.budget_ == 500
    assert KOSELMRegressor(C=200.0).fit(*_data()).ald_threshold_ == pytest.approx(0.00125)
    assert KOSELMRegressor(sparsification=None).fit(*_data()).budget_ is None


def test_pickles_are_trimmed_and_continue():
    X, Y = _data(n=700, n_out=1)
    est = KOSELMRegressor(C=10.0, sparsification=None)
    for s in range(0, 600, 100):
        est.partial_fit(X[s:s + 100], Y[s:s + 100, 0])
    m, cap = est.dictionary_.shape[0], est._state.D.shape[0]
    assert cap > m
    blob = pickle.dumps(est)
    assert len(blob) < 1.1 * 8 * m * m
    again = pickle.loads(blob)
    np.testing.assert_array_equal(again.predict(X), est.predict(X))
    again.partial_fit(X[600:], Y[600:, 0])
    est.partial_fit(X[600:], Y[600:, 0])
    np.testing.assert_array_equal(again.predict(X), est.predict(X))



def test_ald_at_budget_blocks_splits_and_pickles():
    """At its budget ALD applies P's rank-one terms a block at a time, across calls: any split of the stream (row by
    row, a pickle between two rows of a block) gives the same model, and the a-priori errors match a plain RLS."""
    X, Y = _data(n=300, n_out=1)
    kw = dict(gamma=1.5, C=20.0, ald_threshold=0.0, budget=12, fit_intercept=False)
    batch = KOSELMRegressor(**kw).fit(X, Y[:, 0])
    rows = KOSELMRegressor(**kw)
    for t in range(150):
        rows.partial_fit(X[t:t + 1], Y[t:t + 1, 0])
    assert rows._state.counts[kos_elm._N_PENDING] > 0          # mid-block
    again = pickle.loads(pickle.dumps(rows))
    for est in (rows, again):
        for t in range(150, 300):
            est.partial_fit(X[t:t + 1], Y[t:t + 1, 0])
        np.testing.assert_allclose(est.coef_, batch.coef_, rtol=1e-10, atol=1e-12 * np.abs(batch.coef_).max())
    np.testing.assert_array_equal(again.coef_, rows.coef_)
    # the frozen part against a plain-NumPy RLS on the frozen dictionary's whitened features (same start)
    est = KOSELMRegressor(**kw).fit(X[:100], Y[:100, 0])
    st, m = est._state, 12
    P = st.P[:m, :m].copy()
    for b in range(st.counts[kos_elm._N_PENDING]):
        P -= np.outer(st.work[3 + b, :m], st.work[3 + b, :m])
    beta, W, errs = st.V[:m, 0].copy(), st.W[:m, :m], []
    K = np.exp(-1.5 * ((X[100:, None, :] - st.D[None, :m]) ** 2).sum(-1))
    for k, y in zip(K, Y[100:, 0]):
        l = W @ k
        u = P @ l
        e = y - l @ beta
        g = 1.0 / (1.0 + l @ u)
        beta, P = beta + g * e * u, P - g * np.outer(u, u)
        errs.append(e)
    got = kos_elm.prequential_errors(est, X[100:], Y[100:, 0])
    np.testing.assert_allclose(got, errs, rtol=1e-9, atol=1e-10)
    # a state whose counters do not match this module's layout is refused on unpickling, not indexed past its end
    state = est.__getstate__()
    state['_state'] = state['_state']._replace(counts=state['_state'].counts[:-1])
    with pytest.raises(ValueError, match='stream counters'):
        KOSELMRegressor().__setstate__(state)


@pytest.mark.parametrize('seed', range(4))
def test_fb_batches_learn_the_model_of_single_rows(seed):
    """FB batches at a full dictionary take the block path (z = Q k by matrix products, the exact step where a row
    changes the dictionary); the same stream fed row by row takes the sample-by-sample path: same dictionary, same
    a-priori errors and coefficients, also after a pickle between batches, and with Q stale after single rows."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(700, 3))
    y = np.sin(4 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=700)
    kw = dict(sparsification='fb', budget=int(rng.integers(10, 60)), gamma=2.0, C=float(10 ** rng.uniform(0, 3)))
    rows, batches = KOSELMRegressor(**kw), KOSELMRegressor(**kw)
    e_rows = np.concatenate([prequential_errors(rows, X[t:t + 1], y[t:t + 1]) for t in range(700)])
    e_batch = [prequential_errors(batches, X[:300], y[:300])]
    batches = pickle.loads(pickle.dumps(batches))
    for t in range(300, 310):                                    # single rows in between: Q goes stale
        e_batch.append(prequential_errors(batches, X[t:t + 1], y[t:t + 1]))
    e_batch.append(prequential_errors(batches, X[310:], y[310:]))
    assert batches._state.P.shape[0] == kw['budget'] + 1         # the block path ran
    np.testing.assert_array_equal(batches.dictionary_indices_, rows.dictionary_indices_)
    np.testing.assert_allclose(np.concatenate(e_batch), e_rows, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(batches.coef_, rows.coef_, rtol=1e-8, atol=1e-8 * np.abs(rows.coef_).max())


@pytest.mark.parametrize('cls,kw', [(KOSELMRegressor, {}), (KOSELMRegressor, dict(sparsification='fb', budget=20)),
                                    (KOSELMRegressor, dict(sparsification=None)),
                                    (OSELMRegressor, dict(n_hidden=20, random_state=0))])
def test_bad_partial_fit_leaves_model_untouched(cls, kw):
    X, Y = _data(n=100)
    est = cls(C=10.0, **kw).partial_fit(X[:60], Y[:60])
    snap = pickle.dumps(est)
    X_nan = X[60:].copy()
    X_nan[2, 0] = np.nan
    X_inf = X[60:].copy()
    X_inf[1, 1] = np.inf
    for Xb, Yb, word in [(X[60:, :2], Y[60:], 'features'), (X_nan, Y[60:], 'NaN'), (X_inf, Y[60:], 'infinity'),
                         (X[60:], Y[61:], 'different numbers of samples'), (X[60:], Y[60:, :1], 'output'),
                         (X[60:], np.full_like(Y[60:], np.nan), 'NaN')]:
        with pytest.raises(ValueError, match=word):
            est.partial_fit(Xb, Yb)
        assert pickle.dumps(est) == snap
    bad = [('C', 0.0), ('C', -1.0)] + ([('ald_threshold', -0.1), ('budget', 0), ('sparsification', 'foo'),
                                        ('kernel', 'sigmoid'), ('degree', 2.5)]
                                       if cls is KOSELMRegressor else [('n_hidden', 0)])
    for name, value in bad:
        good = est.get_params()[name]
        est.set_params(**{name: value})
        with pytest.raises(ValueError, match=name):
            est.partial_fit(X[60:], Y[60:])
        with pytest.raises(ValueError, match=name):
            est.fit(X, Y)
        est.set_params(**{name: good})
        assert pickle.dumps(est) == snap
    est.partial_fit(X[60:], Y[60:])
    np.testing.assert_allclose(est.predict(X), cls(C=10.0, **kw).fit(X, Y).predict(X), rtol=1e-10, atol=1e-12)


def test_bad_hyper_parameters():
    X, Y = _data()
    cases = [(KOSELMRegressor(sparsification='fb', budget=None), 'budget'),
             (KOSELMRegressor(sparsification=None, budget=10), 'budget'), (KOSELMRegressor(gamma=-1.0), 'gamma'),
             (KOSELMRegressor(sparsification='fb', budget=2.5), 'budget'), (KOSELMRegressor(degree=1.5), 'degree'),
             (KOSELMRegressor(C=np.inf, sparsification='fb'), 'C=inf'),
             (KOSELMRegressor(C=np.inf, sparsification=None), 'C=inf'), (KOSELMRegressor(ald_threshold=1.5), 'ald'),
             (OSELMRegressor(n_hidden=50, C=None), 'n_hidden'), (KOSELMRegressor(fit_intercept='yes'), 'fit_intercept'),
             (OSELMRegressor(hidden_layer='grid'), 'hidden_layer'), (OSELMRegressor(C='auto'), 'C')]
    for est, word in cases:
        with pytest.raises((ValueError, TypeError), match=word):
            est.fit(X[:30], Y[:30])
    for est, word in [(OSELMClassifier(gamma=-1.0), 'gamma'), (OSELMClassifier(C='foo'), 'C'),
                      (OSELMClassifier(hidden_layer='random', bias_range=(1, 0)), 'bias_range')]:
        with pytest.raises((ValueError, TypeError), match=word):
            est.fit(X[:30], Y[:30, 0] > 0)
    with pytest.raises(ValueError, match='X'):
        KOSELMRegressor().fit(X[:, 0], Y)
    for cls in (KOSELMClassifier, OSELMClassifier):
        with pytest.raises(ValueError, match='classes'):
            cls().partial_fit(X, Y[:, 0] > 0)
    clf = KOSELMClassifier(sparsification='fb', budget=10).partial_fit(X, Y[:, 0] > 0, classes=[False, True])
    with pytest.raises(ValueError, match='not in classes'):
        clf.partial_fit(X[:3], np.array([2, 0, 1]))
    with pytest.raises(ValueError, match='classes'):
        clf.partial_fit(X[:3], np.array([True, False, True]), classes=[0, 1, 2])


def test_changing_the_recursion_midstream_is_refused():
    X, Y = _data(n=60)
    est = KOSELMRegressor(C=10.0, sparsification=None).partial_fit(X[:30], Y[:30])
    est.set_params(sparsification='fb', budget=5)
    with pytest.raises(ValueError, match='sparsification'):
        est.partial_fit(X[30:], Y[30:])
    est.set_params(sparsification=None, budget='auto', C=3.0)
    with pytest.raises(ValueError, match='C'):
        est.partial_fit(X[30:], Y[30:])
    est.set_params(C=10.0).partial_fit(X[30:], Y[30:])
    np.testing.assert_allclose(est.predict(X), KOSELMRegressor(C=10.0, sparsification=None).fit(X, Y).predict(X),
                               rtol=1e-10, atol=1e-12)
    est.set_params(sparsification='ald').fit(X, Y)
    assert est.n_samples_seen_ == 60


def test_single_rows_light_and_full_paths_agree():
    X, Y = _data(n=80, n_out=1)
    a = KOSELMRegressor(C=10.0).fit(X[:40], Y[:40, 0])
    b = KOSELMRegressor(C=10.0).fit(X[:40], Y[:40, 0])
    for i in range(40, 80):
        a.partial_fit(X[i:i + 1], Y[i:i + 1, 0])                 # light path
        b.partial_fit(X[i:i + 1].tolist(), [float(Y[i, 0])])     # lists: the full validation path
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.predict(X), np.concatenate([a.predict(X[i:i + 1]) for i in range(80)]))


def test_river_adapter_passes_rivers_checks():
    pytest.importorskip('river')
    from river import checks

    from kelm_nb.kos_elm import KOSELMRiverRegressor
    model = KOSELMRiverRegressor()
    n = 0
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for check in checks.yield_checks(model):
            if check.__name__ not in model._unit_test_skips():
                check(model.clone())
                n += 1
    assert n >= 20
    m = KOSELMRiverRegressor(gamma=10.0, C=100.0)
    assert m.predict_one({'a': 1.0}) == 0.0
    for i in range(60):
        m.learn_one({'a': i / 60, 'b': 1 - i / 60}, np.sin(3 * i / 60))
    assert abs(m.predict_one({'a': 0.5, 'b': 0.5}) - np.sin(1.5)) < 0.1
    m2 = pickle.loads(pickle.dumps(m))
    assert m2.predict_one({'a': 0.25, 'b': 0.75}) == m.predict_one({'a': 0.25, 'b': 0.75})


def test_vectorised_exp_matches_math_exp():
    from kelm_nb.kos_elm import _exp_nonpositive
    x = -np.r_[np.linspace(0.0, 50.0, 20001), np.linspace(50.0, 700.0, 2001), [708.0, 709.0, 1e4, 1e300]]
    v = np.array([_exp_nonpositive(a) for a in x])
    ref = np.exp(x)
    normal = ref > 1e-300
    assert np.max(np.abs(v[normal] - ref[normal]) / ref[normal]) < 1e-13
    assert np.all(np.isfinite(v)) and np.all(v[~normal] < 1e-300) and v[0] == 1.0


# ------------------------------------------------------------ large C
@pytest.mark.parametrize('sparsification', [None, 'fb'])
def test_kos_elm_large_C_stays_finite_and_close_to_batch(sparsification):
    X, y = make_moons(400, noise=0.2, random_state=0)
    X = np.r_[X, X[:20]]                                           # duplicated rows as well
    y = np.r_[y, y[:20]].astype(float)
    kw = {'budget': 500} if sparsification == 'fb' else {}
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        kos = KOSELMRegressor(C=1e8, gamma=1.0, sparsification=sparsification, **kw).fit(X, y)
        batch = KernelELMRegressor(C=1e8, gamma=1.0, fit_intercept=False).fit(X, y)
    p = kos.predict(X)
    assert np.isfinite(p).all()
    np.testing.assert_allclose(p, batch.predict(X), atol=0.05)


def test_os_elm_at_huge_C_is_close_to_batch_or_warns():
    "At C = 1e12 OS-ELM stays within 1 % of its batch solution, or warns about C."
    from kelm_nb.core import ridge_solve
    X, y = make_moons(600, noise=0.2, random_state=1)
    y = y.astype(float)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        os_elm = OSELMRegressor(n_hidden=50, C=1e12, random_state=0).fit(X, y)
    H = os_elm.hidden_layer_.transform(X)
    batch = H @ ridge_solve(H, y, 1e12)
    rel = np.linalg.norm(os_elm.predict(X) - batch) / np.linalg.norm(batch)
    assert np.isfinite(rel)
    assert rel < 0.01 or any('C' in str(w.message) for w in caught), rel


# ------------------------------------------------------------ defaults against scikit-learn's default peers
# Defaults a user can trust: KOS-ELM with its default parameters, in a StandardScaler pipeline, within a few points
# of scikit-learn's default peer (SVR / KernelRidge(rbf) for regression, SVC for classification) on every bundled
# data set of its task (3-fold CV; sets above 2000 rows subsampled to 2000). OS-ELM's defaults are the core ELM's
# (the regressor's random sigmoid layer with C = 1; the classifier's Gaussian layer with C by GCV, from the first
# batch): the same model, learnt online, so its scores equal the default batch ELM's on every set.
REGRESSION = [d['name'] for d in list_datasets() if d['task'] == 'regression']
CLASSIFICATION = [d['name'] for d in list_datasets() if d['task'] != 'regression']
TOLERANCE = 0.05     # "within a few points": R^2 or accuracy no more than 5 points below the best default peer


def _load(name):
    X, y = load_dataset(name)
    X, y = np.asarray(X, float), np.asarray(y)
    if len(X) > 2000:
        keep = np.random.default_rng(0).choice(len(X), 2000, replace=False)
        X, y = X[keep], y[keep]
    return X, y


def _score(est, X, y, classification):
    cv = (StratifiedKFold if classification else KFold)(3, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return cross_val_score(make_pipeline(StandardScaler(), est), X, y, cv=cv).mean()


@pytest.mark.parametrize('name', REGRESSION)
def test_default_regressors(name):
    X, y = _load(name)
    y = y.astype(float)
    peer = max(_score(SVR(), X, y, False), _score(KernelRidge(kernel='rbf'), X, y, False))
    score = _score(KOSELMRegressor(), X, y, False)
    assert np.isfinite(score) and score > peer - TOLERANCE, (score, peer)
    np.testing.assert_allclose(_score(OSELMRegressor(random_state=0), X, y, False),
                               _score(ELMRegressor(random_state=0), X, y, False), rtol=1e-6)


@pytest.mark.parametrize('name', CLASSIFICATION)
def test_default_classifiers(name):
    X, y = _load(name)
    peer = _score(SVC(), X, y, True)
    score = _score(KOSELMClassifier(), X, y, True)
    assert score > peer - TOLERANCE, (score, peer)
    assert _score(OSELMClassifier(random_state=0), X, y, True) == _score(ELMClassifier(random_state=0), X, y, True)


@pytest.mark.parametrize('cls', [KOSELMRegressor, KOSELMClassifier])
@pytest.mark.parametrize('sparsification', ['fb', 'window'])
@pytest.mark.parametrize('C', [3e11, 1e12])
def test_fb_and_window_finite_at_huge_C(cls, sparsification, C):
    """Singular kernel matrices at C near 1/eps (the linear kernel on raw features, the rbf kernel on moons): finite,
    with both signs; the answer itself is at the mercy of rounding there, as the batch solve's is."""
    from sklearn.datasets import load_breast_cancer
    Xb, yb = load_breast_cancer(return_X_y=True)
    Xm, ym = make_moons(400, noise=0.1, random_state=0)
    for X, y, kw in ((Xb, yb, dict(kernel='linear')), (Xm, ym, dict(gamma=0.5))):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            target = y if cls is KOSELMClassifier else 2.0 * y - 1
            est = cls(C=C, sparsification=sparsification, budget=50, **kw).fit(X, target)
        out = est.decision_function(X) if cls is KOSELMClassifier else est.predict(X)
        assert np.isfinite(out).all() and np.isfinite(est.coef_).all()
        assert min(np.mean(out > 0), np.mean(out < 0)) > 0.15           # not one class (accuracy is rounding's)


def test_fb_does_not_drift_along_a_stationary_stream():
    "After 60,000 samples the recursion equals a fresh solve on its dictionary; without noise the error holds."
    rng = np.random.default_rng(3)
    f = lambda X: np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] - X[:, 3] ** 2
    Xt = rng.uniform(size=(1000, 8))
    est = KOSELMRegressor(gamma=0.5, C=100.0, sparsification='fb', budget=100, fit_intercept=False)
    nrmse, seen = {}, 0
    for n in (6000, 60000):
        while seen < n:
            X = rng.uniform(size=(2000, 8))
            est.partial_fit(X, f(X))
            seen += 2000
        nrmse[n] = np.sqrt(np.mean((est.predict(Xt) - f(Xt)) ** 2)) / f(Xt).std()
    D = est.dictionary_
    fresh = kernel_ridge_solve(compute_kernel(D, D, 'rbf', gamma=0.5), f(D), 100.0)
    np.testing.assert_allclose(est.coef_, fresh, rtol=0, atol=1e-8 * np.abs(fresh).max())
    assert nrmse[60000] < 1.1 * nrmse[6000]


@pytest.mark.parametrize('fn, args, name', [
    (oselm_init, lambda sp: (sp, np.ones(3)), 'H'), (oselm_init, lambda sp: (np.eye(3), sp), 'T'),
    (oselm_coef, lambda sp: (sp, np.ones((3, 1))), 'R'),
    (oselm_update, lambda sp: (np.eye(3), np.ones((3, 1)), sp, np.ones(3)), 'H')])
def test_oselm_functions_refuse_sparse_input_by_name(fn, args, name):
    import scipy.sparse
    with pytest.raises(TypeError, match=f'{name} must be a dense array'):
        fn(*args(scipy.sparse.csr_matrix(np.eye(3))))


@pytest.mark.parametrize('kw', [dict(ald_threshold=0.01, budget=12), dict(sparsification='fb', budget=12),
                                dict(sparsification='window', budget=12), dict(sparsification=None)])
def test_one_row_fast_path_equals_fit_and_refuses_non_finite_rows(kw):
    X, Y = _data(n=80, n_out=1)
    a = KOSELMRegressor(C=10.0, **kw).fit(X[:20], Y[:20, 0])
    snap = pickle.dumps(a)
    for bad in (np.nan, np.inf):
        row = X[20:21].copy()
        row[0, 1] = bad
        with pytest.raises(ValueError, match='NaN|infinity'):
            a.partial_fit(row, Y[20:21, 0])
        with pytest.raises(ValueError, match='NaN|infinity'):
            a.partial_fit(X[20:21], np.array([bad]))
        assert pickle.dumps(a) == snap                       # refused by the recursion before it changed anything
    for i in range(20, 80):
        a.partial_fit(X[i:i + 1], Y[i:i + 1, 0])              # the fast path, one row at a time
    b = KOSELMRegressor(C=10.0, **kw).fit(X, Y[:, 0])
    assert a.n_samples_seen_ == 80
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-12, atol=1e-12)


def test_fast_path_hands_odd_input_to_the_full_validation():
    X, Y = _data(n=40, n_out=2)
    a = KOSELMRegressor(C=10.0).fit(X[:20], Y[:20])
    b = KOSELMRegressor(C=10.0).fit(X[:20], Y[:20])
    a.partial_fit(X[20:30].tolist(), Y[20:30].astype(np.float32))           # converted by the full path
    b.partial_fit(X[20:30], Y[20:30].astype(np.float32).astype(np.float64))
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    with pytest.raises(ValueError, match='output'):
        a.partial_fit(X[30:31], Y[30:31, :1])
    a.set_params(gamma=3.0)
    with pytest.raises(ValueError, match='gamma'):
        a.partial_fit(X[30:31], Y[30:31])


def test_recursions_check_their_rows_and_the_compile_notice_is_silent_once_compiled():
    import io
    from kelm_nb import kos_elm
    ok = np.ones((3, 2))
    assert kos_elm._all_finite(ok, ok[:, :1].copy()) and not kos_elm._all_finite(ok, np.array([[np.nan]]))
    KOSELMRegressor().fit(ok, np.ones(3))
    buf = io.StringIO()
    assert not kos_elm._kos_compile_notice(kos_elm._MODE_ALD, buf) and buf.getvalue() == ''


def _compiled_signatures():
    "{name: number of compiled specialisations} of every numba dispatcher in kelm_nb.kos_elm."
    from numba.core.registry import CPUDispatcher
    return {name: len(f.signatures) for name, f in vars(kos_elm).items() if isinstance(f, CPUDispatcher)}


@pytest.mark.parametrize('kw', [dict(budget=30), dict(sparsification='fb', budget=30)])
def test_odd_array_layouts_compile_nothing_new(kw):
    """A read-only (memory-mapped) or Fortran-ordered batch is copied into the compiled loops' layout: after one fit
    and predict on plain arrays, fits and predictions on the odd layouts add no numba specialisation."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 3)), rng.normal(size=60)
    plain = KOSELMRegressor(**kw).fit(X, y)
    plain.partial_fit(X[:1], y[:1]).predict(X)
    before = _compiled_signatures()
    X_ro, y_ro = X.copy(), y.copy()
    X_ro.flags.writeable = y_ro.flags.writeable = False
    for Xo, yo in ((X_ro, y_ro), (np.asfortranarray(X), y)):
        est = KOSELMRegressor(**kw).fit(Xo, yo)
        est.partial_fit(Xo[:1], yo[:1])
        np.testing.assert_array_equal(est.predict(Xo), plain.predict(X))
    assert _compiled_signatures() == before

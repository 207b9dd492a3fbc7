"Tests of kelm_nb.kos_elm: scikit-learn checks, jitted recursions (float64/float32) against batch oracles, bad input."
import pickle

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from kelm_nb.core import ELMRegressor, KernelELMClassifier, KernelELMRegressor, compute_kernel, kernel_ridge_solve
from kelm_nb.kos_elm import (NB_KERNELS, KOSELMClassifier, KOSELMRegressor, OSELMClassifier, OSELMRegressor,
                             ald_krls_batch, fb_krls_batch, kos_stream, krls_batch, nb_kernel_matrix, oselm_init,
                             oselm_update)

ESTIMATORS = [
    KOSELMRegressor(), KOSELMRegressor(kernel='laplacian', sparsification='ald', ald_threshold=0.05, budget=30),
    KOSELMRegressor(sparsification='fb', budget=40),
    KOSELMClassifier(sparsification='ald', ald_threshold=0.05), KOSELMClassifier(sparsification='fb', budget=40),
    OSELMRegressor(n_hidden=30), OSELMClassifier(n_hidden=30),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _data(n=120, d=3, n_out=2, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    Y = np.c_[np.sin(5 * X.sum(1)), X[:, 0] ** 2][:, :n_out] + 0.05 * rng.normal(size=(n, n_out))
    return X.astype(dtype), Y


@pytest.mark.parametrize('dtype', [np.float64, np.float32])
@pytest.mark.parametrize('kernel', sorted(NB_KERNELS))
def test_nb_kernel_matches_core(dtype, kernel):
    rng = np.random.default_rng(1)
    X, Z = rng.normal(size=(9, 4)).astype(dtype), rng.normal(size=(6, 4)).astype(dtype)
    K = nb_kernel_matrix(X, Z, NB_KERNELS[kernel], 0.4, 3.0, 1.0)
    ref = compute_kernel(X.astype(np.float64), Z.astype(np.float64), kernel, gamma=0.4, degree=3, coef0=1.0)
    np.testing.assert_allclose(K, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize('dtype', [np.float64, np.float32])
def test_krls_batch_equals_kernel_elm(dtype):
    X, Y = _data(dtype=dtype)
    n, C, g = len(X), 20.0, 1.5
    D, Q, alpha, idx = np.zeros((n, 3)), np.zeros((n, n)), np.zeros((n, 2)), np.zeros(n, np.int64)
    m = krls_batch(X[:50], Y[:50], D, Q, alpha, idx, 0, 0, C, 0, g, 3.0, 1.0)
    m = krls_batch(X[50:], Y[50:], D, Q, alpha, idx, m, 50, C, 0, g, 3.0, 1.0)
    K = compute_kernel(X.astype(np.float64), X.astype(np.float64), 'rbf', gamma=g)
    ref = kernel_ridge_solve(K, Y, C)
    assert m == n
    np.testing.assert_allclose(alpha, ref, rtol=1e-8, atol=1e-8 * np.abs(ref).max())
    assert np.array_equal(Q, Q.T)


@pytest.mark.parametrize('dtype', [np.float64, np.float32])
def test_ald_batch_threshold_zero_is_table_one(dtype):
    X, Y = _data(n=50, dtype=dtype)
    C, g, cap = 20.0, 1.5, 64
    D, Ki, P, alpha, idx = (np.zeros((cap, 3)), np.zeros((cap, cap)), np.zeros((cap, cap)), np.zeros((cap, 2)),
                            np.zeros(cap, np.int64))
    t, m = ald_krls_batch(X, Y, D, Ki, P, alpha, idx, 0, 0, 0.0, cap, 1.0 / C, 0, g, 3.0, 1.0)
    assert (t, m) == (50, 50)
    ref = kernel_ridge_solve(compute_kernel(X.astype(np.float64), X.astype(np.float64), 'rbf', gamma=g), Y, C)
    np.testing.assert_allclose(alpha[:m], ref, rtol=1e-7, atol=1e-7 * np.abs(ref).max())
    # a full buffer stops the batch early with the state untouched
    D2, Ki2, P2, a2, i2 = np.zeros((4, 3)), np.zeros((4, 4)), np.zeros((4, 4)), np.zeros((4, 2)), np.zeros(4, np.int64)
    t, m = ald_krls_batch(X, Y, D2, Ki2, P2, a2, i2, 0, 0, 0.0, 100, 1.0 / C, 0, g, 3.0, 1.0)
    assert (t, m) == (4, 4)


@pytest.mark.parametrize('dtype', [np.float64, np.float32])
def test_fb_batch_equals_kernel_elm_on_dictionary(dtype):
    X, Y = _data(n=200, dtype=dtype)
    F, C, g = 25, 20.0, 1.5
    D, Q, alpha, Yd, idx = (np.zeros((F + 1, 3)), np.zeros((F + 1, F + 1)), np.zeros((F + 1, 2)), np.zeros((F + 1, 2)),
                            np.zeros(F + 1, np.int64))
    m = fb_krls_batch(X, Y, D, Q, alpha, Yd, idx, 0, 0, F, C, 0, g, 3.0, 1.0)
    assert m == F
    np.testing.assert_array_equal(D[:m], X[idx[:m]].astype(np.float64))
    np.testing.assert_array_equal(Yd[:m], Y[idx[:m]])
    ref = kernel_ridge_solve(compute_kernel(D[:m], D[:m], 'rbf', gamma=g), Yd[:m], C)
    np.testing.assert_allclose(alpha[:m], ref, rtol=1e-8, atol=1e-8 * np.abs(ref).max())


def test_ald_closed_form_oracle():
    "Regularised ALD-KRLS equals (A'A K_D + I/C)^-1 A'y with A rebuilt from the dictionaries at arrival times."
    X, Y = _data(n=150)
    C, g = 30.0, 1.5
    est = KOSELMRegressor(gamma=g, C=C, sparsification='ald', ald_threshold=0.02).fit(X, Y)
    idx = est.dictionary_indices_
    assert 5 < len(idx) < len(X)
    A = np.zeros((len(X), len(idx)))
    for t in range(len(X)):
        j = np.searchsorted(idx, t, side='right')
        if j and idx[j - 1] == t:
            A[t, j - 1] = 1.0
        elif j:
            Dt = X[idx[:j]]
            A[t, :j] = np.linalg.solve(compute_kernel(Dt, Dt, 'rbf', gamma=g), compute_kernel(Dt, X[t:t + 1], 'rbf', gamma=g))[:, 0]
    KD = compute_kernel(X[idx], X[idx], 'rbf', gamma=g)
    ref = np.linalg.solve(A.T @ A @ KD + np.eye(len(idx)) / C, A.T @ Y)
    np.testing.assert_allclose(est.coef_, ref, rtol=1e-7, atol=1e-8 * np.abs(ref).max())


def test_estimator_oracles():
    X, Y = _data(n=300, d=4)
    Xq = _data(n=40, d=4, seed=5)[0]
    np.testing.assert_allclose(KOSELMRegressor(gamma=0.7, C=50.0).fit(X, Y).predict(Xq),
                               KernelELMRegressor(gamma=0.7, C=50.0).fit(X, Y).predict(Xq), rtol=1e-8, atol=1e-9)
    fb = KOSELMRegressor(gamma=0.7, C=50.0, sparsification='fb', budget=40).fit(X, Y)
    np.testing.assert_allclose(fb.predict(Xq), KernelELMRegressor(gamma=0.7, C=50.0).fit(
        fb.dictionary_, Y[fb.dictionary_indices_]).predict(Xq), rtol=1e-8, atol=1e-9)
    ald = KOSELMRegressor(gamma=0.7, C=50.0, sparsification='ald', ald_threshold=0.0).fit(X[:60], Y[:60])
    np.testing.assert_allclose(ald.predict(Xq), KOSELMRegressor(gamma=0.7, C=50.0).fit(X[:60], Y[:60]).predict(Xq),
                               rtol=1e-7, atol=1e-7)
    capped = KOSELMRegressor(gamma=0.7, C=50.0, sparsification='ald', ald_threshold=0.0, budget=17).fit(X, Y)
    assert capped.dictionary_.shape == (17, 4)
    np.testing.assert_allclose(OSELMRegressor(n_hidden=50, C=10.0, initial_size=20, chunk_size=33, random_state=3).fit(X, Y).predict(Xq),
                               ELMRegressor(n_hidden=50, C=10.0, random_state=3).fit(X, Y).predict(Xq), rtol=1e-7, atol=1e-8)
    yc = np.where(Y[:, 0] > 0, 'a', 'b')
    np.testing.assert_allclose(KOSELMClassifier(gamma=0.7, C=50.0).fit(X, yc).decision_function(Xq),
                               KernelELMClassifier(gamma=0.7, C=50.0).fit(X, yc).decision_function(Xq), rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize('est', [KOSELMRegressor(C=10.0), KOSELMRegressor(C=10.0, sparsification='ald', ald_threshold=0.05),
                                 KOSELMRegressor(C=10.0, sparsification='fb', budget=30),
                                 OSELMRegressor(n_hidden=20, C=10.0, random_state=0)])
def test_any_split_equals_fit(est):
    X, Y = _data(n=200)
    whole = est.fit(X, Y).predict(X)
    rng = np.random.default_rng(2)
    cuts = np.sort(rng.choice(np.arange(1, 200), size=9, replace=False))
    est2 = type(est)(**est.get_params())
    for b in np.split(np.arange(200), cuts):
        est2.partial_fit(X[b], Y[b])
    np.testing.assert_allclose(est2.predict(X), whole, rtol=1e-10, atol=1e-12)
    assert est2.n_samples_seen_ == 200


def test_long_stream_stays_sound():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(3000, 8))
    y = np.sin(4 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=3000)
    for params in (dict(sparsification='ald', ald_threshold=0.02, budget=150), dict(sparsification='fb', budget=100)):
        est = KOSELMRegressor(gamma=1.0, C=1000.0, **params)
        for b in np.array_split(np.arange(3000), 5):
            est.partial_fit(X[b], y[b])
        st = est._state
        m = st['m']
        assert np.array_equal(st['M1'][:m, :m], st['M1'][:m, :m].T)
        assert np.all(np.isfinite(est.coef_))
        assert np.mean((est.predict(X) - y) ** 2) < 0.3 * np.var(y)
        if params['sparsification'] == 'fb':
            K = compute_kernel(est.dictionary_, est.dictionary_, 'rbf', gamma=1.0)
            np.testing.assert_allclose(st['M1'][:m, :m] @ (K + np.eye(m) / 1000.0), np.eye(m), atol=1e-6)


def _snapshot(est):
    out = {}
    for k, v in est.__dict__.items():
        out[k] = {kk: np.copy(vv) for kk, vv in v.items()} if isinstance(v, dict) else (np.copy(v) if isinstance(v, np.ndarray) else v)
    return out


def _same(a, b):
    assert a.keys() == b.keys()
    for k in a:
        if isinstance(a[k], dict):
            _same(a[k], b[k])
        elif isinstance(a[k], np.ndarray):
            np.testing.assert_array_equal(a[k], b[k])
        elif not hasattr(a[k], 'get_params'):
            assert a[k] == b[k], k


@pytest.mark.parametrize('cls,kw', [(KOSELMRegressor, dict(sparsification='ald')), (KOSELMRegressor, dict(sparsification='fb', budget=20)),
                                    (KOSELMRegressor, {}), (OSELMRegressor, dict(n_hidden=20, random_state=0))])
def test_bad_partial_fit_leaves_model_untouched(cls, kw):
    X, Y = _data(n=100)
    est = cls(C=10.0, **kw).partial_fit(X[:60], Y[:60])
    snap = _snapshot(est)
    X_nan = X[60:].copy(); X_nan[2, 0] = np.nan
    X_inf = X[60:].copy(); X_inf[1, 1] = np.inf
    with pytest.raises(ValueError, match='features'):
        est.partial_fit(X[60:, :2], Y[60:])
    with pytest.raises(ValueError, match='NaN'):
        est.partial_fit(X_nan, Y[60:])
    with pytest.raises(ValueError, match='infinity'):
        est.partial_fit(X_inf, Y[60:])
    with pytest.raises(ValueError, match='different numbers of samples'):
        est.partial_fit(X[60:], Y[61:])
    with pytest.raises(ValueError, match='output'):
        est.partial_fit(X[60:], Y[60:, :1])
    _same(snap, _snapshot(est))
    bad = [('C', 0.0), ('C', -1.0)] + ([('ald_threshold', -0.1), ('budget', 0), ('sparsification', 'foo'), ('kernel', 'sigmoid')]
                                       if cls is KOSELMRegressor else [('chunk_size', 0)])
    for name, value in bad:
        est.set_params(**{name: value})
        with pytest.raises(ValueError, match=name):
            est.partial_fit(X[60:], Y[60:])
        with pytest.raises(ValueError, match=name):
            est.fit(X, Y)
        est.set_params(**{name: cls(**kw).get_params()[name] if name != 'C' else 10.0})
        _same(snap, _snapshot(est))
    est.partial_fit(X[60:], Y[60:])   # still usable, and equal to fit on everything
    np.testing.assert_allclose(est.predict(X), cls(C=10.0, **kw).fit(X, Y).predict(X), rtol=1e-10, atol=1e-12)


def test_bad_hyper_parameters():
    X, Y = _data()
    with pytest.raises(ValueError, match='budget'):
        KOSELMRegressor(sparsification='fb').fit(X, Y)
    with pytest.raises(ValueError, match='budget'):
        KOSELMRegressor(budget=10).fit(X, Y)
    with pytest.raises(ValueError, match='gamma'):
        KOSELMRegressor(gamma=-1.0).fit(X, Y)
    with pytest.raises(TypeError, match='budget'):
        KOSELMRegressor(sparsification='fb', budget=2.5).fit(X, Y)
    with pytest.raises(ValueError, match='n_hidden'):
        OSELMRegressor(n_hidden=50, C=None, initial_size=10).fit(X, Y)
    with pytest.raises(ValueError, match='X'):
        KOSELMRegressor().fit(X[:, 0], Y)
    with pytest.raises(ValueError, match='classes'):
        KOSELMClassifier().partial_fit(X, Y[:, 0] > 0)
    with pytest.raises(ValueError, match='classes'):
        OSELMClassifier().partial_fit(X, Y[:, 0] > 0)
    clf = KOSELMClassifier(sparsification='fb', budget=10).partial_fit(X, Y[:, 0] > 0, classes=[False, True])
    with pytest.raises(ValueError, match='not in classes'):
        clf.partial_fit(X[:3], np.array([2, 0, 1]))
    with pytest.raises(ValueError, match='classes'):
        clf.partial_fit(X[:3], np.array([True, False, True]), classes=[0, 1, 2])


@pytest.mark.parametrize('dtype', [np.float64, np.float32])
def test_oselm_functions(dtype):
    rng = np.random.default_rng(0)
    H = rng.normal(size=(120, 15)).astype(dtype)
    T = rng.normal(size=(120, 2))
    P, beta = oselm_init(H[:10], T[:10], C=5.0)
    P, beta = oselm_update(P, beta, H[10:], T[10:])
    H64 = H.astype(np.float64)
    ref = np.linalg.solve(H64.T @ H64 + np.eye(15) / 5.0, H64.T @ T)
    np.testing.assert_allclose(beta, ref, rtol=1e-8, atol=1e-10)


def test_kos_stream_and_pickle():
    X, Y = _data(n=80)
    s1 = kos_stream(None, X[:30], Y[:30], 0, 'ald', 10.0, 0, 1.0, 3.0, 1.0, 0.01, None)
    s2 = kos_stream(s1, X[30:], Y[30:], 30, 'ald', 10.0, 0, 1.0, 3.0, 1.0, 0.01, None)
    s_all = kos_stream(None, X, Y, 0, 'ald', 10.0, 0, 1.0, 3.0, 1.0, 0.01, None)
    assert s1['m'] <= s2['m'] == s_all['m']
    np.testing.assert_array_equal(s2['alpha'][:s2['m']], s_all['alpha'][:s_all['m']])
    est = KOSELMRegressor(sparsification='fb', budget=20).fit(X, Y)
    est2 = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(est2.predict(X), est.predict(X))
    est2.partial_fit(X[:5], Y[:5])
    est.partial_fit(X[:5], Y[:5])
    np.testing.assert_array_equal(est2.predict(X), est.predict(X))


def test_changing_the_recursion_midstream_is_refused():
    X, Y = _data(n=60)
    est = KOSELMRegressor(C=10.0).partial_fit(X[:30], Y[:30])
    est.set_params(sparsification='fb', budget=5)
    with pytest.raises(ValueError, match='sparsification'):
        est.partial_fit(X[30:], Y[30:])
    est.set_params(sparsification=None, budget=None, C=3.0)
    with pytest.raises(ValueError, match='C'):
        est.partial_fit(X[30:], Y[30:])
    est.set_params(C=10.0).partial_fit(X[30:], Y[30:])
    np.testing.assert_allclose(est.predict(X), KOSELMRegressor(C=10.0).fit(X, Y).predict(X), rtol=1e-10, atol=1e-12)
    est.set_params(sparsification='ald').fit(X, Y)   # fit restarts with the new recursion
    assert est.n_samples_seen_ == 60

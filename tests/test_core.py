"Estimator checks, bad input and the jitted kernels of `kelm_nb.core`, called through the installed package."

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_moons
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_classifiers_train, parametrize_with_checks

from kelm_nb.core import (_THREADED_POTRF_MAX, ACTIVATIONS, ELMClassifier, ELMRegressor, KernelELMClassifier,
                          KernelELMRegressor, NystroemMap, RandomHiddenLayer, RBFHiddenLayer,
                          _activate_inplace, _nystrom_solve,
                          _ridge_from_normal_equations, _sigmoid_rows, _threadpool_controller, check_memory,
                          compute_kernel, hidden_output, kernel_ridge_solve, normal_equations, ridge_solve,
                          spd_solve)
from kelm_nb.datasets import load_dataset
from kelm_nb.esvr import ESVR, LSSVR
from kelm_nb.kos_elm import KOSELMRegressor


@parametrize_with_checks([RandomHiddenLayer(20, random_state=0), ELMRegressor(30, random_state=0),
                          ELMRegressor(30, C=10.0, random_state=0), ELMClassifier(30, C=10.0, random_state=0),
                          KernelELMRegressor(), KernelELMClassifier(C=10.0),
                          # both hidden layers, either C
                          RBFHiddenLayer(20, random_state=0), ELMRegressor(30, hidden_layer='rbf', random_state=0),
                          ELMClassifier(30, C=1.0, hidden_layer='random', random_state=0),
                          ELMClassifier(30, hidden_layer='random', random_state=0),
                          # the default constructors and the precomputed and Nystroem variants
                          ELMRegressor(), ELMClassifier(), KernelELMClassifier(),
                          KernelELMRegressor(kernel='precomputed'), KernelELMClassifier(kernel='precomputed'),
                          KernelELMRegressor(solver='nystrom', n_components=20, random_state=0),
                          KernelELMClassifier(solver='nystrom', n_components=20, random_state=0)],
                         expected_failed_checks=lambda est: {
                             'check_decision_proba_consistency': 'the check fits a non-square X as a precomputed '
                                                                 'kernel'} if est.get_params().get('kernel') ==
                         'precomputed' and hasattr(est, 'predict_proba') else {})
def test_sklearn_compatible(estimator, check):
    if getattr(check, 'func', check).__name__ == 'check_classifiers_train':
        estimator = _without_probabilities(estimator)      # its other assertions all stay
    check(estimator)


def _no_probabilities(self):
    raise AttributeError('predict_proba is hidden from check_classifiers_train')


def _without_probabilities(estimator):
    """`estimator` as an instance of a subclass without `predict_proba`: like `SVC(probability=True)`, whose Platt
    scaling scikit-learn exempts, the argmax of calibrated probabilities may differ from `predict` near a boundary
    (documented; `test_probabilities` checks the rows, the monotone link and the agreement rate instead)."""
    cls = type(estimator)
    if not hasattr(cls, 'predict_proba'):
        return estimator
    hidden = type(cls.__name__, (cls,), {'predict_proba': property(_no_probabilities),
                                         'predict_log_proba': property(_no_probabilities)})
    return hidden(**estimator.get_params())


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


def test_sigmoid_rows_fused():
    "The jitted float64 sigmoid pass (product and activation) against NumPy, on wide inputs and in chunks."
    z = np.linspace(-750.0, 750.0, 30001)[:, None]            # exact pre-activations: the activation alone
    out = np.empty_like(z)
    scratch = np.empty(1)
    _sigmoid_rows(z, np.ones((1, 1)), np.zeros(1), out, scratch, scratch.view(np.int64), np.zeros(1))
    with np.errstate(over='ignore'):
        np.testing.assert_allclose(out, 1 / (1 + np.exp(-z)), rtol=4e-15, atol=1e-300)
    rng = np.random.default_rng(2)
    X, W, b = rng.normal(size=(700, 6)), rng.normal(size=(6, 300)), rng.normal(size=300)
    ref = 1 / (1 + np.exp(-(X @ W + b)))
    # the product sums its terms in another order than BLAS: |z| ulps of z become relative errors of exp(-z)
    np.testing.assert_allclose(hidden_output(X, W, b, 'sigmoid'), ref, rtol=1e-13)
    H32 = hidden_output(X.astype(np.float32), W, b, 'sigmoid')          # float32 keeps the ufunc path and its dtype
    assert H32.dtype == np.float32
    np.testing.assert_allclose(H32, ref, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize('landmarks', ['distinct', 'duplicated'])
@pytest.mark.parametrize('fit_intercept', [True, False])
def test_nystrom_one_cholesky(landmarks, fit_intercept):
    "One jittered Cholesky gives the predictions of the eigendecomposition form, also on a singular landmark kernel."
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(400, 5)), rng.normal(size=400)
    Z = X[:60] if landmarks == 'distinct' else np.vstack([X[:30], X[:30]])
    kernel = lambda A, B: compute_kernel(A, B, 'rbf', gamma=0.1)
    ne = normal_equations(lambda A: kernel(A, Z), X, y, len(Z))
    w, b, factor = _nystrom_solve(ne, kernel(Z, Z), 10.0, fit_intercept)
    phi = NystroemMap(kernel, Z)
    stats = normal_equations(phi, X, y, phi.normalization.shape[1])
    beta, b0 = _ridge_from_normal_equations(stats, 10.0, 'both' if fit_intercept else 'none')
    Xq = rng.normal(size=(100, 5))
    p, p0 = kernel(Xq, Z) @ w + b, phi(Xq) @ beta + b0
    np.testing.assert_allclose(p, p0, rtol=0, atol=1e-7 * np.abs(p0).max())
    assert np.array_equal(np.triu(factor, 1), np.zeros_like(factor))      # a lower factor (for the LOO scores)


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


@pytest.mark.parametrize('activation', ['sigmoid', 'tanh', 'hardlim'])
def test_elm_fit_statistics_match_the_generic_path(monkeypatch, activation):
    """The in-memory fit's pre-shifted, reused-buffer statistics (NumPy activations, float64) against the generic
    `normal_equations(layer.transform, ...)` over several blocks ('hardlim': the generic path itself); float32
    input agrees with float64."""
    import kelm_nb.core as core
    rng = np.random.default_rng(5)
    X = rng.normal(size=(1000, 4))
    Y = np.c_[np.sin(X[:, 0]), X[:, 1] * X[:, 2]]
    monkeypatch.setattr(core, 'block_rows', lambda width, max_bytes=0: 300)   # 4 blocks, a short last one
    fast = ELMRegressor(60, activation=activation, C=50.0, random_state=0).fit(X, Y)
    monkeypatch.setattr(core, '_layer_statistics',
                        lambda layer, X, T, width: core.normal_equations(layer.transform, X, T, width))
    generic = ELMRegressor(60, activation=activation, C=50.0, random_state=0).fit(X, Y)
    np.testing.assert_allclose(fast.coef_, generic.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(fast.intercept_, generic.intercept_, rtol=1e-8, atol=1e-10)
    single = ELMRegressor(60, activation=activation, C=50.0, random_state=0).fit(X.astype(np.float32), Y)
    np.testing.assert_allclose(single.predict(X), fast.predict(X), rtol=1e-3, atol=1e-3)


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


# ------------------------------------------------------------ defaults, overflow, memory and threads, clear errors
def _housing_split():
    X, y = load_dataset('housing')
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(X))
    return X[idx[:350]], y[idx[:350]], X[idx[350:]], y[idx[350:]]


@pytest.mark.parametrize('n_hidden', [300, 500])
def test_elm_default_with_many_units_is_regularised(n_hidden):
    "More units need regularisation: unregularised, 300 / 500 units give test R² of -2.8 / -4.6 on housing."
    Xtr, ytr, Xte, yte = _housing_split()
    r2 = make_pipeline(StandardScaler(), ELMRegressor(n_hidden, random_state=0)).fit(Xtr, ytr).score(Xte, yte)
    assert r2 > 0.7, r2


def test_float32_queries_give_the_float64_labels():
    """Float32 queries of a float64 fit give its labels (a pseudo-inverse's ~5e9 weights would take iris from 0.963
    to 0.297)."""
    X, y = load_iris(return_X_y=True)
    clf = ELMClassifier(random_state=0).fit(X, y)
    np.testing.assert_array_equal(clf.predict(X.astype(np.float32)), clf.predict(X))
    assert np.abs(clf.coef_).max() < 1e3                       # not the ~5e9 weights of the pseudo-inverse
    check_classifiers_train('ELMClassifier', _without_probabilities(ELMClassifier(random_state=0)),
                            readonly_memmap=False, X_dtype='float32')


def test_overflowing_hidden_layer_is_an_error_at_every_size():
    rng = np.random.default_rng(0)
    for n in (300, 5000):
        X = rng.uniform(0, 1e4, size=(n, 3))
        y = rng.normal(size=n)
        with pytest.raises(ValueError, match='NaN or infinity'):
            ELMRegressor(20, activation='exp', random_state=0).fit(X, y)
        with pytest.raises(ValueError, match='NaN or infinity'):
            ESVR(n_hidden=20, activation='exp', random_state=0).fit(X, y)


def test_non_integer_degree_is_refused():
    X, y = make_moons(50, random_state=0)
    for est in (KernelELMRegressor(kernel='poly', degree=2.5), KOSELMRegressor(kernel='poly', degree=2.5)):
        with pytest.raises((ValueError, TypeError), match='degree'):
            est.fit(X, y.astype(float))


def test_a_gram_that_cannot_fit_is_refused_with_its_size(monkeypatch):
    import kelm_nb.core as core
    monkeypatch.setattr(core, '_memory_limits', lambda: {'MemAvailable': 2 * 2 ** 30})   # pretend 2 GiB are free
    X = np.zeros((40_000, 2), dtype=np.float32)
    with pytest.raises(ValueError, match=r'needs \d+ bytes \(11\.9 GiB\) but 2147483648 bytes'):
        KernelELMRegressor().fit(X, np.zeros(40_000))
    with pytest.raises(ValueError, match='needs'):
        check_memory(3 * 2 ** 30, 'a big matrix')


def test_large_cholesky_runs_on_one_blas_thread(monkeypatch):
    "OpenBLAS's threaded potrf segfaults from N = 16 000 on two threads: spd_solve factors large matrices on one."
    import kelm_nb.core as core
    seen = []
    real_potrf = core.scipy.linalg.get_lapack_funcs

    def spy(names, arrays):
        (potrf,) = real_potrf(names, arrays)
        def wrapped(*a, **k):
            seen.append({p['internal_api']: p['num_threads'] for p in _threadpool_controller().info()
                         if p['user_api'] == 'blas'})
            return potrf(*a, **k)
        return (wrapped,)
    monkeypatch.setattr(core.scipy.linalg, 'get_lapack_funcs', spy)
    monkeypatch.setattr(core, '_THREADED_POTRF_MAX', 50)
    A = np.eye(60) * 2.0
    spd_solve(A, np.ones(60))
    assert seen and all(n == 1 for n in seen[-1].values())


@pytest.mark.slow
def test_cholesky_at_16000_does_not_crash():
    "The full-size case (2 GB, about a minute on one thread): the process survives and the answer is right."
    n = 16_000
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 4))
    from sklearn.metrics.pairwise import rbf_kernel
    K = rbf_kernel(X, gamma=0.5)
    K.flat[::n + 1] += 1.0
    b = rng.normal(size=n)
    x = spd_solve(K, b)
    np.testing.assert_allclose(K @ x, b, rtol=1e-6, atol=1e-6)
    assert n >= _THREADED_POTRF_MAX


def test_kernel_predictions_in_bounded_memory(monkeypatch):
    "Predictions never build the whole n_query x n_train kernel: at most PREDICT_CHUNK_BYTES at once."
    import kelm_nb.core as core
    X, y = make_moons(500, random_state=0)
    model = KernelELMRegressor().fit(X, y.astype(float))
    widest = []
    real = core.compute_kernel
    monkeypatch.setattr(core, 'compute_kernel', lambda A, Z, *a, **k: widest.append(A.shape[0]) or real(A, Z, *a, **k))
    monkeypatch.setattr(core, 'PREDICT_CHUNK_BYTES', 500 * 8 * 100)
    full = model.predict(np.tile(X, (4, 1)))
    assert max(widest) <= 100 and full.shape == (2000,)


def test_clear_errors():
    X, y = make_moons(40, random_state=0)
    with pytest.raises(ValueError, match='y must be numeric'):
        ELMRegressor().fit(X, np.array(['a', 'b'] * 20))
    with pytest.raises(ValueError, match='weight_range'):
        ELMRegressor(weight_range=(1.0,)).fit(X, y)
    K = (np.abs(X @ X.T) * 10).astype(int)
    KernelELMRegressor(kernel='precomputed').fit(K, y.astype(float))           # an integer Gram matrix is fine
    with pytest.raises(ValueError) as e:
        LSSVR(kernel='precomputed').fit(X, y.astype(float))
    assert 'square' in str(e.value)


_RLIMIT_CHILD = r'''
import resource
import numpy as np
from kelm_nb import KernelELMRegressor
from kelm_nb.core import _memory_limits
size = int(open('/proc/self/statm').read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (size + 2 ** 31, resource.getrlimit(resource.RLIMIT_AS)[1]))
print('BINDING', min(_memory_limits().items(), key=lambda kv: kv[1])[0])
X = np.random.default_rng(0).normal(size=(20000, 2))
KernelELMRegressor().fit(X[:1500], X[:1500, 0])           # a plan that fits under the limit runs
try:
    KernelELMRegressor().fit(X, X[:, 0])                   # K alone is 3.2 GB: more than the 2 GB left
except ValueError as e:
    print('VALUEERROR', e)
'''


def test_memory_guard_reads_the_address_space_limit():
    "Under RLIMIT_AS the kernel ELM refuses a Gram matrix that cannot fit with a ValueError, not numpy's MemoryError."
    import subprocess
    import sys
    out = subprocess.run([sys.executable, '-c', _RLIMIT_CHILD], capture_output=True, text=True, timeout=300)
    assert 'Unable to allocate' not in out.stdout + out.stderr
    assert 'VALUEERROR' in out.stdout, out.stderr
    message = out.stdout.split('VALUEERROR', 1)[1]
    assert 'bytes' in message and 'are available' in message and "solver='nystrom'" in message
    if 'BINDING RLIMIT_AS' in out.stdout:       # where the machine has more than 2 GB free, RLIMIT_AS binds
        assert 'the tightest limit: RLIMIT_AS' in message


@pytest.mark.parametrize('estimator', [ELMClassifier(random_state=0), KernelELMClassifier(),
                                       KernelELMClassifier(solver='nystrom', n_components=50, random_state=0),
                                       ELMClassifier(40, C=None, random_state=0)],
                         ids=['ELM', 'KernelELM', 'Nystroem', 'ELM-pinv'])
def test_probabilities(estimator):
    "Rows sum to one; for two classes the argmax is a threshold of the decision value; neg_log_loss is finite."
    from sklearn.model_selection import cross_val_score
    X, y = make_moons(300, noise=0.3, random_state=0)
    est = estimator.fit(X, y)
    P, d = est.predict_proba(X), est.decision_function(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    order = np.argsort(d)
    assert np.all(np.diff(P[order, 1]) >= -1e-12)
    assert (P.argmax(axis=1) == est.predict(X)).mean() > 0.95    # may differ near the boundary, as SVC's
    np.testing.assert_allclose(np.exp(est.predict_log_proba(X)), P, rtol=1e-12)
    loss = -cross_val_score(estimator, X, y, cv=3, scoring='neg_log_loss').mean()
    assert np.isfinite(loss) and loss < 0.5
    assert not hasattr(est, '_loo_state')


def test_dask_classifier_does_not_compute_the_labels(monkeypatch):
    "The classes of a Dask fit come from Dask's unique; the labels are fetched only for the calibration sample."
    import dask.array as da
    X, y = make_moons(6000, noise=0.3, random_state=0)
    fetched = []
    real = np.asarray
    dy = da.from_array(y, chunks=1000)
    compute = da.Array.compute
    monkeypatch.setattr(da.Array, 'compute', lambda self, **kw: fetched.append(self.shape) or compute(self, **kw))
    for params in (dict(hidden_layer='random', C=1.0), dict(hidden_layer='rbf')):   # 'rbf' computes its 50 centres
        est = ELMClassifier(50, random_state=0, **params).fit(da.from_array(X, chunks=(1000, 2)), dy)
        assert (6000,) not in fetched and real(est.classes_).tolist() == [0, 1]
        ref = ELMClassifier(50, random_state=0, **params).fit(X, y)
        assert est.C_ == ref.C_
        if params['hidden_layer'] == 'random':
            np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-10, atol=1e-12)
        else:    # Gaussian features on 50 centres are closer to collinear: the summation order shows at 3e-10
            np.testing.assert_array_equal(est.hidden_layer_.centres_, ref.hidden_layer_.centres_)
            np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-9, atol=1e-9 * np.abs(ref.coef_).max())
        np.testing.assert_allclose(est.predict_proba(X[:50]), ref.predict_proba(X[:50]), atol=0.02)
    assert (50, 2) in fetched and (6000, 2) not in fetched


def test_sparse_and_non_finite_weights_are_refused():
    import scipy.sparse
    from kelm_nb.core import hidden_output
    W = np.ones((3, 4))
    with pytest.raises(TypeError, match='X is a sparse matrix'):
        hidden_output(scipy.sparse.eye(3, format='csr'), W, np.zeros(4), 'sigmoid')
    W[1, 2] = np.nan
    with pytest.raises(ValueError, match='W contains NaN'):
        hidden_output(np.ones((2, 3)), W, np.zeros(4), 'sigmoid')
    with pytest.raises(TypeError, match='[Ss]parse'):
        ELMClassifier(10).fit(scipy.sparse.eye(20, 3, format='csr'), np.arange(20) % 2)


def test_memory_limits_read_the_cgroup(monkeypatch):
    "A cgroup v2 limit (memory.max less memory.current) counts, and the tightest limit binds check_memory."
    import kelm_nb.core as core
    real = core._read_int
    fake = {'/sys/fs/cgroup/memory.max': 3 * 2 ** 30, '/sys/fs/cgroup/memory.current': 2 ** 30}
    monkeypatch.setattr(core, '_read_int', lambda path: fake[path] if path in fake else real(path))
    assert core._memory_limits()['cgroup memory limit'] == 2 * 2 ** 30
    assert core.available_memory() <= 2 * 2 ** 30
    with pytest.raises(ValueError, match='the tightest limit: cgroup memory limit'):
        check_memory(2 * 2 ** 30, 'a 2 GiB plan')


def test_a_class_without_rows_leaves_no_probabilities():
    "A class named in fit_blocks' classes but absent from the data: the fit works, predict_proba is refused, warned."
    X, y = make_moons(200, noise=0.3, random_state=0)
    with pytest.warns(UserWarning, match=r"classes \[2\] have no row"):
        est = ELMClassifier(20, random_state=0).fit_blocks([(X[:100], y[:100]), (X[100:], y[100:])], classes=[0, 1, 2])
    assert est.predict(X).shape == (200,) and not hasattr(est, 'calibration_')
    with pytest.raises(Exception, match='calibration_|not fitted'):
        est.predict_proba(X)


def test_kernel_product_refuses_non_finite_input():
    "An infinity in the queries, the training rows or the coefficients is a ValueError naming that argument."
    from kelm_nb.core import kernel_product
    rng = np.random.default_rng(0)
    X, Z, coef = rng.normal(size=(6, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    linear = lambda A, B: A @ B.T
    for name, args in (('X', (X * np.inf, Z, coef)), ('Z', (X, np.where(Z > 1, np.nan, Z), coef)),
                       ('coef', (X, Z, np.full_like(coef, -np.inf)))):
        with pytest.raises(ValueError, match=f'^{name} contains NaN or infinity'):
            kernel_product(linear, *args)
    with pytest.raises(ValueError, match='the product overflows'):
        kernel_product(lambda A, B: np.full((len(A), len(B)), 1e300), X, Z, coef * 1e10)
    with pytest.raises(ValueError, match='the kernel returns NaN'):
        kernel_product(lambda A, B: np.full((len(A), len(B)), np.nan), X, Z, coef)
    np.testing.assert_allclose(kernel_product(linear, X, Z, coef, max_bytes=8), X @ Z.T @ coef, rtol=1e-12)


@pytest.mark.parametrize('kernel', [np.eye(3), [[1.0]], None, 3.0])
def test_compute_kernel_names_what_a_kernel_may_be(kernel):
    "An array (a Gram matrix), a list or a number as `kernel` is a TypeError saying a name or a callable is needed."
    X = np.ones((3, 2))
    with pytest.raises(TypeError, match=r"kernel must be a name of \[.*'rbf'.*\] or a callable"):
        compute_kernel(X, X, kernel)


def test_compute_kernel_refuses_precomputed():
    "compute_kernel has no Gram matrix to build for 'precomputed' (the estimators take it as X): the error says so."
    with pytest.raises(ValueError, match="estimators also take 'precomputed': the Gram matrix passed as X"):
        compute_kernel(np.ones((3, 2)), np.ones((3, 2)), 'precomputed')


@pytest.mark.parametrize('kernel_params', ['foo', [('gamma', 1.0)], 1.0])
def test_kernel_params_must_be_a_dict(kernel_params):
    "A non-dict `kernel_params` is a TypeError naming it, in the function and in the estimators."
    X, y = make_moons(30, random_state=0)
    with pytest.raises(TypeError, match='kernel_params must be a dict'):
        compute_kernel(X, X, 'rbf', kernel_params=kernel_params)
    for est in (KernelELMRegressor(kernel_params=kernel_params), KernelELMClassifier(kernel_params=kernel_params)):
        with pytest.raises(TypeError, match="'kernel_params' parameter"):
            est.fit(X, y)


def _complex_kernel(A, B):
    return (A @ B.T) * (1 + 1j)


@pytest.mark.parametrize('solver', ['exact', 'nystrom'])
@pytest.mark.parametrize('cls', [KernelELMRegressor, KernelELMClassifier])
def test_complex_kernel_is_refused_by_name(cls, solver):
    "A callable returning complex values: a TypeError naming the kernel, no ComplexWarning, the model unchanged."
    import warnings
    X, y = make_moons(40, random_state=0)
    est = cls(kernel=_complex_kernel, solver=solver, n_components=10)
    with warnings.catch_warnings():
        warnings.simplefilter('error')                      # a ComplexWarning would fail here
        with pytest.raises(TypeError, match='kernel _complex_kernel returned complex values'):
            est.fit(X, y)
        with pytest.raises(TypeError, match='kernel _complex_kernel returned complex values'):
            compute_kernel(X, X, _complex_kernel)
        from kelm_nb.core import kernel_product
        with pytest.raises(TypeError, match='kernel _complex_kernel returned complex values'):
            kernel_product(_complex_kernel, X, X, np.ones(len(X)))
    assert not hasattr(est, 'dual_coef_')


def test_a_kernel_changing_to_complex_after_fit_is_refused_in_predict():
    "The prediction path (kernel_product) checks each block the kernel returns, too."
    X, y = make_moons(40, random_state=0)
    calls = []
    def flaky(A, B):
        calls.append(1)
        return (A @ B.T) * (1j if len(calls) > 1 else 1)
    est = KernelELMRegressor(kernel=flaky).fit(X, y)
    with pytest.raises(TypeError, match='kernel flaky returned complex values'):
        est.predict(X)


@pytest.mark.parametrize('params, match', [
    (dict(hidden_layer='gauss'), "'hidden_layer' parameter"), (dict(hidden_layer=None), "'hidden_layer' parameter"),
    (dict(gamma=0.0), "'gamma' parameter"), (dict(gamma=-1.0), "'gamma' parameter"),
    (dict(gamma='mean'), "'gamma' parameter"), (dict(gamma=np.inf), 'gamma'), (dict(gamma=np.nan), 'gamma'),
    (dict(C='best'), "'C' parameter"), (dict(C=0.0), "'C' parameter")])
@pytest.mark.parametrize('cls', [ELMClassifier, ELMRegressor])
def test_hidden_layer_and_gamma_bad_values(cls, params, match):
    "Each bad value is a ValueError naming its parameter, for either layer (validated whether used or not)."
    X, y = make_moons(60, noise=0.3, random_state=0)
    for layer in ('rbf', 'random'):
        est = cls(20, random_state=0, **{'hidden_layer': layer, **params})
        with pytest.raises(ValueError, match=match):
            est.fit(X, y)
    with pytest.raises(ValueError, match="'gamma' parameter"):
        RBFHiddenLayer(gamma=-2.0).fit(X)


def test_auto_c_is_for_classifiers_only():
    "C='auto' relies on ±1 targets: a regressor refuses it by name."
    X, y = make_moons(60, noise=0.3, random_state=0)
    with pytest.raises(ValueError, match="'C' parameter"):
        ELMRegressor(20, C='auto').fit(X, y)
    from kelm_nb.core import _AUTO_CS
    assert ELMClassifier(20, random_state=0).fit(X, y).C_ in _AUTO_CS
    assert ELMClassifier(20, C=2.0, random_state=0).fit(X, y).C_ == 2.0


def test_rbf_layer_is_the_gaussian_kernel_on_its_centres():
    "The layer's features are rbf_kernel(X, centres, gamma_); the centres are distinct training rows."
    from sklearn.metrics.pairwise import rbf_kernel
    X = np.random.default_rng(0).normal(size=(400, 5))
    layer = RBFHiddenLayer(120, random_state=1).fit(X)
    assert layer.centres_.shape == (120, 5) and len(np.unique(layer.centres_, axis=0)) == 120
    assert all((X == c).all(axis=1).any() for c in layer.centres_)
    np.testing.assert_allclose(layer.gamma_, 1.0 / (5 * layer.centres_.var()), rtol=1e-12)
    np.testing.assert_allclose(layer.transform(X), rbf_kernel(X, layer.centres_, gamma=layer.gamma_), rtol=1e-10,
                               atol=1e-13)


def test_auto_c_is_the_same_from_fit_blocks_and_fit():
    "GCV needs only the sums: fit and fit_blocks choose the same C and give the same model (random layer)."
    X, y = make_moons(3000, noise=0.3, random_state=0)
    est = ELMClassifier(80, hidden_layer='random', random_state=0)
    ref = est.fit(X, y)
    blk = ELMClassifier(80, hidden_layer='random', random_state=0).fit_blocks(
        [(X[s:s + 700], y[s:s + 700]) for s in range(0, 3000, 700)], classes=[0, 1])
    assert blk.C_ == ref.C_
    np.testing.assert_allclose(blk.coef_, ref.coef_, rtol=1e-9, atol=1e-9 * np.abs(ref.coef_).max())


@pytest.mark.parametrize('name', ['splice', 'sonar', 'flare_solar'])
def test_classifier_default_matches_svc(name):
    """`ELMClassifier()` on bundled sets (at most 1000 rows, stratified, standardised, stratified 5-fold CV): accuracy
    at least the majority rate and at most 3 points under `SVC()` (the random sigmoid layer with C=1 was 5.1 points
    under on splice; the Gaussian layer with C=10 3.5 points under on flare_solar)."""
    from sklearn.dummy import DummyClassifier
    from sklearn.model_selection import StratifiedKFold, cross_val_score, train_test_split
    from sklearn.svm import SVC
    X, y = load_dataset(name)
    if len(y) > 1000:
        X, _, y, _ = train_test_split(X, y, train_size=1000, stratify=y, random_state=0)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    score = lambda est: cross_val_score(make_pipeline(StandardScaler(), est), X, y, cv=cv).mean()
    ours, svc, majority = score(ELMClassifier(random_state=0)), score(SVC()), score(DummyClassifier())
    assert ours >= majority and ours >= svc - 0.03, (ours, svc, majority)

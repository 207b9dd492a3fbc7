"Estimator checks, oracles, numerics and bad input of `kelm_nb.esvr`, called through the installed package."
import warnings
import numpy as np
import pytest
import scipy.linalg
from sklearn.linear_model import RidgeCV
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.utils.estimator_checks import parametrize_with_checks

from kelm_nb.core import ELMRegressor, KernelELMRegressor, RandomHiddenLayer, compute_kernel, ridge_solve
from kelm_nb.esvr import (ELMRegressorCV, ESVR, ESVRCV, LSSVR, PAPER_NU_GRID, augment, esvr_dual, esvr_nu_path,
                          esvr_primal, esvr_solve, lssvr_path, lssvr_solve)
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Ridge
from sklearn.metrics import r2_score
from sklearn.model_selection import ShuffleSplit
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR
from kelm_nb.datasets import list_datasets, load_dataset


@parametrize_with_checks([ESVR(), LSSVR(), ESVRCV(), ELMRegressorCV(), LSSVR(kernel='precomputed'),
                          ESVR(20, nu=100.0, solver='dual', random_state=0), ESVR(None, nu=10.0),
                          ESVRCV(nus=[0.1, 10.0], n_hidden=20, cv=3, random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _data(m=50, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (m, d))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.05 * rng.standard_normal(m)
    return X, y


def _stacked_lstsq(H, T, nu):
    E = np.hstack([H, -np.ones((H.shape[0], 1))])
    A = np.vstack([E, np.eye(E.shape[1]) / np.sqrt(nu)])
    return scipy.linalg.lstsq(A, np.concatenate([T, np.zeros((E.shape[1],) + T.shape[1:])]))[0]


def _u(est):
    "[w; r] of a fitted ESVR."
    return np.concatenate([est.coef_, np.atleast_1d(-np.asarray(est.intercept_))[None]], axis=0) \
        if est.coef_.ndim == 2 else np.append(est.coef_, -est.intercept_)


@pytest.mark.parametrize('dtype', [np.float64, np.float32])
@pytest.mark.parametrize('shape', [(60, 15), (12, 30)])
@pytest.mark.parametrize('nu', [2.0 ** -10, 1.0, 2.0 ** 8])
def test_eq8_eq9_and_stacked_oracle(dtype, shape, nu):
    rng = np.random.default_rng(1)
    H = rng.standard_normal(shape).astype(dtype)
    T = rng.standard_normal((shape[0], 2))
    u8, u9 = esvr_dual(H, T, nu), esvr_primal(H, T, nu)
    ref = _stacked_lstsq(H.astype(np.float64), T, nu)
    tol = 1e-8   # float32 input is exact in float64: the solve is float64
    np.testing.assert_allclose(u8, u9, rtol=tol, atol=tol * np.abs(ref).max())
    np.testing.assert_allclose(u9, ref, rtol=tol, atol=tol * np.abs(ref).max())
    assert u9.dtype == np.float64 and u9.shape == (shape[1] + 1, 2)
    u, form = esvr_solve(H, T[:, 0], nu)
    assert form == ('dual' if shape[0] < shape[1] + 1 else 'primal') and u.shape == (shape[1] + 1,)


def _svd_solution(H, T, nu):
    U, s, Vt = np.linalg.svd(augment(H), full_matrices=False)
    return Vt.T @ ((s / (s ** 2 + 1.0 / nu)) * (U.T @ T)), s


@pytest.mark.whole
@pytest.mark.parametrize('m, p', [(300, 80), (80, 250)])   # eq. 9 trusted, eq. 8 trusted
def test_auto_form_accurate_over_the_whole_paper_grid(m, p):
    "Up to nu = 2^25 the form 'auto' picks stays within the backward-stable bound of its (full-rank) system."
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (m, 8))
    T = np.sin(X.sum(axis=1))
    H = RandomHiddenLayer(p, weight_range=(-1.0, 1.0), random_state=0).fit(X).transform(X)
    eps = np.finfo(float).eps
    for nu in PAPER_NU_GRID:
        ref, s = _svd_solution(H, T, nu)
        u, form = esvr_solve(H, T, nu)
        assert form == ('primal' if m >= p + 1 else 'dual')
        kappa = (s[0] ** 2 + 1 / nu) / (s[-1] ** 2 + 1 / nu)
        err = np.linalg.norm(u - ref) / np.linalg.norm(ref)
        assert err <= 100 * eps * kappa and err <= 1e-5, (nu, err, kappa)
        other = esvr_dual(H, T, nu) if form == 'primal' else esvr_primal(H, T, nu)
        E = augment(H)   # both forms give the same fitted values to 1e-5 over the whole grid
        np.testing.assert_allclose(E @ other, E @ u, rtol=0, atol=1e-5 * np.abs(E @ ref).max())


def test_augment():
    H = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(augment(H), [[0, 1, -1], [2, 3, -1], [4, 5, -1]])
    assert augment(H.astype(np.float32)).dtype == np.float32


def test_nu_limits_and_monotone_training_error():
    rng = np.random.default_rng(2)
    H = rng.standard_normal((40, 10))
    T = rng.standard_normal(40)
    u_ls = np.linalg.lstsq(augment(H), T, rcond=None)[0]
    gaps = [np.linalg.norm(esvr_primal(H, T, nu) - u_ls) for nu in 10.0 ** np.arange(0, 11, 2)]
    assert all(b < a for a, b in zip(gaps, gaps[1:])) and gaps[-1] < 1e-8 * np.linalg.norm(u_ls)
    errs = [np.linalg.norm(augment(H) @ esvr_primal(H, T, nu) - T) for nu in PAPER_NU_GRID]
    assert np.all(np.diff(errs) <= 1e-9 * np.array(errs[:-1]))


@pytest.mark.parametrize('n_hidden', [10, 60])   # m = 40: primal and dual
def test_estimator_matches_core_solvers(n_hidden):
    X, y = _data(60)
    Xtr, ytr, Xte = X[:40], y[:40], X[40:]
    est = ESVR(n_hidden, nu=3.0, random_state=0).fit(Xtr, ytr)
    H = est.hidden_layer_.transform(Xtr)
    u = ridge_solve(augment(H), ytr, 3.0)              # regularised ELM on [H, -e], C = nu
    np.testing.assert_allclose(_u(est), u, rtol=1e-7, atol=1e-9 * np.abs(u).max())
    layer = est.hidden_layer_
    kelm = KernelELMRegressor(C=3.0, kernel=lambda A, B: layer.transform(A) @ layer.transform(B).T + 1,
                              fit_intercept=False)
    np.testing.assert_allclose(est.predict(Xte), kelm.fit(Xtr, ytr).predict(Xte), rtol=1e-7, atol=1e-8)
    other = ESVR(n_hidden, nu=3.0, solver='dual' if est.solver_ == 'primal' else 'primal', random_state=0)
    np.testing.assert_allclose(other.fit(Xtr, ytr).predict(Xte), est.predict(Xte), rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize('params', [{}, {'weight_range': (-1.0, 1.0), 'bias_range': (0.0, 1.0)},
                                    {'distribution': 'normal'}, {'distribution': 'normal', 'weight_scale': 2.0,
                                                                 'bias_scale': 0.5}, {'activation': 'tanh'}])
def test_fit_draws_the_hidden_layer_of_random_hidden_layer(params):
    """`fit` draws its layer itself (without validating again): the layer `RandomHiddenLayer.fit` draws, for a seed
    and for a generator, with a DataFrame's feature names kept on the estimator only."""
    import pandas as pd
    X, y = _data(40)
    for seed in (0, 3):
        for random_state in (seed, np.random.RandomState(seed)):
            est = ESVR(15, random_state=random_state, **params).fit(X, y)
            ref = RandomHiddenLayer(15, random_state=seed if isinstance(random_state, int)
                                    else np.random.RandomState(seed), **params).fit(X)
            np.testing.assert_array_equal(est.hidden_layer_.weights_, ref.weights_)
            np.testing.assert_array_equal(est.hidden_layer_.biases_, ref.biases_)
            assert est.hidden_layer_.n_features_in_ == 3
    frame = ESVR(15, random_state=0, **params).fit(pd.DataFrame(X, columns=['a', 'b', 'c']), y)
    assert list(frame.feature_names_in_) == ['a', 'b', 'c'] and not hasattr(frame.hidden_layer_, 'feature_names_in_')
    np.testing.assert_array_equal(frame.predict(pd.DataFrame(X, columns=['a', 'b', 'c'])),
                                  ESVR(15, random_state=0, **params).fit(X, y).predict(X))


def test_linear_esvr_and_multioutput():
    X, y = _data(50)
    Y = np.column_stack([y, X[:, 2] - y])
    lin = ESVR(None, nu=5.0).fit(X, Y)
    u = _stacked_lstsq(X, Y, 5.0)
    np.testing.assert_allclose(np.vstack([lin.coef_, -lin.intercept_]), u, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(lin.predict(X), X @ u[:-1] - u[-1], rtol=1e-10)
    single = ESVR(None, nu=5.0).fit(X, Y[:, 1])
    np.testing.assert_allclose(single.predict(X), lin.predict(X)[:, 1], rtol=1e-10)


@pytest.mark.parametrize('activation', ['sigmoid', 'tanh', 'sin', 'exp', 'relu', 'linear', 'erf', 'rbf', 'hardlim'])
def test_blockwise_fit_equals_one_shot(activation):
    "Several row blocks of eq. 9 (and the activations computed by NumPy ufuncs) equal ridge_solve on the whole [H, -e]."
    X, y = _data(15000, 4)                          # 300 nodes: blocks of 6967 rows, so three blocks
    Y = np.column_stack([y, -y ** 2])
    for T in (y, Y):
        est = ESVR(300, nu=2.0 ** 8, activation=activation, random_state=3).fit(X, T)
        assert est.solver_ == 'primal'
        ref = esvr_primal(est.hidden_layer_.transform(X), T, 2.0 ** 8)
        if activation in ('sigmoid', 'tanh', 'sin'):   # elsewhere H is nearly rank-deficient: compare predictions
            np.testing.assert_allclose(_u(est), ref, rtol=1e-6, atol=1e-8 * np.abs(ref).max())
        expected = est.hidden_layer_.transform(X[:50]) @ ref[:-1] - ref[-1]
        np.testing.assert_allclose(est.predict(X[:50]), expected, rtol=1e-7, atol=1e-8 * np.abs(expected).max())


def test_float32_input():
    X, y = _data(50)
    a = ESVR(15, nu=4.0, random_state=0).fit(X.astype(np.float32), y)
    b = ESVR(15, nu=4.0, random_state=0).fit(X, y)
    np.testing.assert_allclose(a.predict(X.astype(np.float32)), b.predict(X), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(b.predict(X.astype(np.float32)), b.predict(X.astype(np.float32).astype(float)))


@pytest.mark.parametrize('n', [50, 300, 20000])   # eq. 8, eq. 9 in one block, eq. 9 over several blocks
def test_overflowing_hidden_layer_is_an_error_for_every_size(n):
    X = np.random.default_rng(1).normal(0, 1000, (n, 3))
    with pytest.raises(ValueError, match='overflow'):
        ESVR(activation='exp', random_state=0).fit(X, X[:, 0])
    with pytest.raises(ValueError, match='overflow'):
        ESVRCV(n_hidden=20, activation='exp', random_state=0).fit(X[:300], X[:300, 0])
    model = ESVR(20, activation='exp', random_state=0).fit(X[:300] / 1000, X[:300, 0])
    with pytest.raises(ValueError, match='overflow'):
        model.predict(X[:3])


@pytest.mark.parametrize('n_hidden', [10, 80])
def test_sample_weight_is_repetition(n_hidden):
    X, y = _data(40)
    w = np.ones(40)
    w[:5], w[35:] = 3.0, 0.0
    rows = np.r_[np.arange(35), np.arange(5), np.arange(5)]
    a = ESVR(n_hidden, nu=8.0, random_state=0).fit(X, y, sample_weight=w)
    b = ESVR(n_hidden, nu=8.0, random_state=0).fit(X[rows], y[rows])
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-9, atol=1e-10)
    c = ESVR(n_hidden, nu=8.0, random_state=0).fit(X, y, sample_weight=np.full(40, 1.0))
    np.testing.assert_array_equal(c.predict(X), ESVR(n_hidden, nu=8.0, random_state=0).fit(X, y).predict(X))
    with pytest.raises(ValueError, match='sample_weight'):
        ESVR(n_hidden).fit(X, y, sample_weight=-w)
    with pytest.raises(ValueError):
        ESVR(n_hidden).fit(X, y, sample_weight=w[:5])


@pytest.mark.parametrize('gamma_reg', [2.0 ** -4, 1.0, 2.0 ** 10])
def test_lssvr_against_bordered_system(gamma_reg):
    X, y = _data(40)
    K = compute_kernel(X, X, 'rbf', gamma=1.5)
    alpha, b = lssvr_solve(K, y, gamma_reg)
    Big = np.zeros((41, 41))
    Big[0, 1:], Big[1:, 0], Big[1:, 1:] = 1, 1, K + np.eye(40) / gamma_reg
    ref = np.linalg.solve(Big, np.concatenate([[0.0], y]))
    np.testing.assert_allclose(b, ref[0], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(alpha, ref[1:], rtol=1e-7, atol=1e-9 * np.abs(ref).max())
    est = LSSVR(gamma_reg=gamma_reg, gamma=1.5).fit(X, y)
    np.testing.assert_allclose(est.predict(X[:5]), K[:5] @ ref[1:] + ref[0], rtol=1e-7, atol=1e-8)
    pre = LSSVR(gamma_reg=gamma_reg, kernel='precomputed').fit(K, y)
    np.testing.assert_allclose(pre.predict(K[:5]), est.predict(X[:5]), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize('params, X_bad, y_bad, match', [
    ({'nu': 0.0}, None, None, 'nu'), ({'nu': -2.0}, None, None, 'nu'), ({'nu': np.inf}, None, None, 'nu'),
    ({'n_hidden': 0}, None, None, 'n_hidden'), ({'solver': 'svd'}, None, None, 'solver'),
    ({'nu': -1.0}, 'wide', None, 'nu'), ({'weight_range': (1, 0)}, 'wide', None, 'weight_range'),
    ({}, 'nan', None, 'X'), ({}, None, 'inf', 'y'), ({}, None, 'short', 'X and y'), ({}, '1d', None, 'X'),
    ({}, 'empty', None, 'X'), ({}, None, 'text', 'y')])
def test_bad_input_leaves_model_untouched(params, X_bad, y_bad, match):
    X, y = _data(30)
    est = ESVR(8, random_state=0).fit(X, y)
    before = (est.coef_.copy(), est.intercept_, est.n_features_in_, est.predict(X))
    Xb = {'nan': np.where(X > 0.8, np.nan, X), '1d': X[:, 0], 'empty': X[:0], 'wide': np.hstack([X, X]),
          None: X}[X_bad]
    yb = {'inf': np.append(y[:-1], np.inf), 'short': y[:-1], 'text': np.array(['a'] * 30), None: y}[y_bad]
    if X_bad == 'empty': yb = y[:0]
    with pytest.raises((ValueError, TypeError), match=match):
        est.set_params(**params).fit(Xb, yb)
    np.testing.assert_array_equal(est.coef_, before[0])
    assert est.intercept_ == before[1] and est.n_features_in_ == before[2]
    np.testing.assert_array_equal(est.set_params(**ESVR(8, random_state=0).get_params()).predict(X), before[3])


def test_bad_input_functions():
    H = np.ones((5, 3))
    with pytest.raises(ValueError, match='nu'): esvr_primal(H, np.ones(5), 0)
    with pytest.raises(ValueError, match='T has 4 rows'): esvr_dual(H, np.ones(4), 1.0)
    with pytest.raises(ValueError, match='T contains NaN'): esvr_primal(H, np.full(5, np.nan), 1.0)
    with pytest.raises(ValueError, match='solver'): esvr_solve(H, np.ones(5), 1.0, solver='x')
    with pytest.raises(ValueError, match='H'): esvr_primal(np.ones(5), np.ones(5), 1.0)
    with pytest.raises(ValueError, match='K must be a square'): lssvr_solve(np.ones((3, 4)), np.ones(3), 1.0)
    with pytest.raises(ValueError, match='gamma_reg'): LSSVR(gamma_reg=-1).fit(np.ones((4, 2)), np.ones(4))
    with pytest.raises(ValueError, match='X'):
        ESVR(5, random_state=0).fit(np.ones((4, 2)), np.ones(4)).predict(np.ones((2, 3)))
    with pytest.raises(ValueError, match='nus'): esvr_nu_path(H, np.ones(5), H, [1.0, -1.0])
    with pytest.raises(ValueError, match='H_val'): esvr_nu_path(H, np.ones(5), np.ones((2, 4)), [1.0])
    with pytest.raises(ValueError, match='gamma_regs'): lssvr_path(np.eye(3), np.ones(3), np.eye(3), [])
    with pytest.raises(ValueError, match='nus'): ESVRCV(nus=[0.0]).fit(np.ones((4, 2)), np.ones(4))
    with pytest.raises(ValueError, match='Cs'): ELMRegressorCV(Cs=[np.nan]).fit(np.ones((4, 2)), np.ones(4))
    with pytest.raises(ValueError, match='n_hidden'): ELMRegressorCV(n_hidden=None).fit(np.ones((4, 2)), np.ones(4))
    with pytest.raises(ValueError, match='features'):
        LSSVR(kernel='precomputed').fit(np.eye(4), np.arange(4.0)).predict(np.ones((2, 3)))
    with pytest.raises(ValueError, match="'precomputed'"):            # listed in the message, and accepted
        LSSVR(kernel='nope').fit(np.ones((4, 2)), np.ones(4))


@pytest.mark.parametrize('dtype', [np.float64, np.float32])
def test_regularisation_paths_match_estimators(dtype):
    X, y = _data(60)
    Y = np.column_stack([y, np.cos(y)])
    H = RandomHiddenLayer(25, random_state=0).fit(X).transform(X).astype(dtype)
    grid = 2.0 ** np.array([-8.0, 0.0, 8.0])
    K = compute_kernel(X, X, 'rbf', gamma=0.7).astype(dtype)
    for T in (y, Y):
        P = esvr_nu_path(H[:40], T[:40], H[40:], grid)
        assert P.shape == (20, 3) + T.shape[1:]
        for j, nu in enumerate(grid):
            u = esvr_primal(H[:40], T[:40], nu)
            np.testing.assert_allclose(P[:, j], H[40:] @ u[:-1] - u[-1], rtol=1e-6, atol=1e-7)
        P = lssvr_path(K[:40, :40], T[:40], K[40:, :40], grid)
        for j, g in enumerate(grid):
            ref = LSSVR(gamma_reg=g, kernel='precomputed').fit(K[:40, :40], T[:40]).predict(K[40:, :40])
            np.testing.assert_allclose(P[:, j], ref, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize('cls, center', [(ESVRCV, False), (ELMRegressorCV, True)])
@pytest.mark.parametrize('n_hidden', [20, 150])       # primal and dual leave-one-out (100 rows)
def test_loo_curve_equals_ridgecv(cls, center, n_hidden):
    X, y = _data(100, 4)
    Y = np.column_stack([y, X[:, 0]])
    grid = 2.0 ** np.arange(-8, 17, 3)
    for T in (y, Y):
        model = cls(grid, n_hidden=n_hidden, random_state=0).fit(X, T)
        H = model.hidden_layer_.transform(X)
        F = H if center else augment(H)
        ridge = RidgeCV(alphas=1 / grid, fit_intercept=center, store_cv_results=True).fit(F, T)
        np.testing.assert_allclose(model.mse_path_, ridge.cv_results_.reshape(100, -1, len(grid)).mean(axis=(0, 1)),
                                   rtol=1e-6)
        assert model.best_score_ == -model.mse_path_.min()


@pytest.mark.parametrize('n_hidden, cv', [(20, 4), (150, KFold(3, shuffle=True, random_state=1))])
@pytest.mark.parametrize('cls, plain, param, chosen',
                         [(ESVRCV, ESVR, 'nu', 'nu_'), (ELMRegressorCV, ELMRegressor, 'C', 'C_')])
def test_kfold_curve_and_choice_equal_gridsearch(n_hidden, cv, cls, plain, param, chosen):
    X, y = _data(120, 4)
    grid = 2.0 ** np.arange(-8, 17, 3)
    ours = cls(grid, n_hidden=n_hidden, cv=cv, random_state=0).fit(X, y)
    gs = GridSearchCV(plain(n_hidden, random_state=0), {param: list(grid)}, cv=cv,
                      scoring='neg_mean_squared_error').fit(X, y)
    np.testing.assert_allclose(ours.mse_path_, -gs.cv_results_['mean_test_score'], rtol=1e-6)
    assert getattr(ours, chosen) == gs.best_params_[param]
    np.testing.assert_allclose(ours.predict(X), gs.best_estimator_.predict(X), rtol=1e-9, atol=1e-9)


def test_cv_refit_is_the_plain_estimator():
    X, y = _data(200, 4)
    model = ESVRCV(n_hidden=30, random_state=0).fit(X, y)
    plain = ESVR(30, nu=model.nu_, random_state=0).fit(X, y)
    np.testing.assert_array_equal(model.predict(X), plain.predict(X))
    assert model.solver_ == plain.solver_ and len(model.nus_) == 3      # RidgeCV's default grid


def test_overflow_in_float64_is_a_clear_error():
    "Inputs of extreme magnitude: products overflow; every public entry point says so instead of returning NaN."
    rng = np.random.default_rng(0)
    H, T = rng.normal(size=(20, 3)) * 1e160, rng.normal(size=20)
    for solve in (esvr_primal, esvr_dual):
        with pytest.raises(ValueError, match='too large'):
            solve(H, T, 1e-3)
    with pytest.raises(ValueError, match='too large'):
        esvr_nu_path(H, T, H, [1.0])
    with np.errstate(over='ignore'), pytest.raises(ValueError, match='K_train'):
        lssvr_path(H @ H.T, T, H @ H.T, [1.0])                 # the Gram matrix itself overflowed
    X = rng.normal(size=(10, 2)) * 1e300
    with pytest.raises(ValueError, match='overflow'):             # the kernels' guard on huge rows
        LSSVR().fit(X[:1], T[:1]).predict(X[1:3])
    alpha, b = lssvr_solve(np.eye(3), np.ones(3), 1.0)      # (array, float): checked one by one
    assert np.isfinite(alpha).all() and b == 1.0


# ------------------------------------------------------------ defaults against scikit-learn's default peers
# Defaults are part of correctness: `ESVR()` and `LSSVR()` with their default parameters, in a StandardScaler
# pipeline, must be within a few R² points of scikit-learn's default peers on every bundled regression set.
REGRESSION_SETS = [d['name'] for d in list_datasets('regression')]
ESTIMATORS = {'ESVR': ESVR(random_state=0), 'ESVRCV': ESVRCV(random_state=0), 'LSSVR': LSSVR(), 'Ridge': Ridge(),
              'KernelRidge_rbf': KernelRidge(kernel='rbf'), 'SVR': SVR()}
TOLERANCE = 0.05   # "within a few points" of R²


def _mean_r2(name, max_rows=1500, n_splits=5):
    X, y = load_dataset(name)
    if len(y) > max_rows:
        keep = np.random.default_rng(0).permutation(len(y))[:max_rows]
        X, y = X[keep], y[keep]
    scores = {k: [] for k in ESTIMATORS}
    for train, test in ShuffleSplit(n_splits, test_size=1 / 3, random_state=0).split(X):
        for k, est in ESTIMATORS.items():
            model = make_pipeline(StandardScaler(), est).fit(X[train], y[train])
            prediction = model.predict(X[test])
            assert np.all(np.isfinite(prediction)), (name, k)
            scores[k].append(r2_score(y[test], prediction))
    return {k: float(np.mean(v)) for k, v in scores.items()}


@pytest.mark.parametrize('name', REGRESSION_SETS)
def test_defaults_within_a_few_points_of_sklearn(name):
    r = _mean_r2(name)
    assert r['ESVR'] >= max(r['Ridge'], r['KernelRidge_rbf'], r['SVR']) - TOLERANCE, r
    assert r['ESVRCV'] >= max(r['Ridge'], r['KernelRidge_rbf'], r['SVR']) - TOLERANCE, r
    assert r['LSSVR'] >= max(r['KernelRidge_rbf'], r['SVR']) - TOLERANCE, r     # the kernel peers


def test_default_esvr_is_not_degenerate():
    "The default model is not a constant: it explains a smooth target almost fully."
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 5))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2]
    model = make_pipeline(StandardScaler(), ESVR(random_state=0)).fit(X[:400], y[:400])
    assert r2_score(y[400:], model.predict(X[400:])) > 0.8


# A bad value for every constructor parameter of every estimator of the module, whether the chosen configuration
# reads the parameter or not (a linear ESVR reads no activation, an 'rbf' LS-SVR no coef0 or degree).
_BAD_LAYER = {'n_hidden': 2.5, 'activation': 'foo', 'distribution': 'cauchy', 'weight_range': (np.nan, 1.0),
              'bias_range': (2.0, 1.0), 'weight_scale': -1.0, 'bias_scale': 'a', 'random_state': 'x'}
_BAD = {
    ESVR: ({'n_hidden': None}, {**_BAD_LAYER, 'nu': 'a', 'solver': 'qr'}),
    ESVRCV: ({'n_hidden': None}, {**_BAD_LAYER, 'nus': 'foo', 'cv': 'x', 'solver': 'qr'}),
    ELMRegressorCV: ({}, {**_BAD_LAYER, 'n_hidden': None, 'Cs': 'foo', 'cv': 1.5}),
    LSSVR: ({'kernel': 'rbf'}, {'gamma_reg': np.nan, 'kernel': 3, 'gamma': 0.0, 'degree': -1, 'coef0': 'a',
                                'kernel_params': 'foo'}),
}
_BAD_CASES = [(cls, name, value) for cls, (_, bad) in _BAD.items() for name, value in bad.items()]


def test_every_parameter_has_a_bad_value():
    import inspect
    for cls, (_, bad) in _BAD.items():
        assert set(bad) == set(inspect.signature(cls).parameters), cls.__name__
        assert set(cls._parameter_constraints) == set(bad), cls.__name__


@pytest.mark.parametrize('cls, name, value', _BAD_CASES, ids=[f'{c.__name__}-{n}' for c, n, _ in _BAD_CASES])
def test_every_parameter_validated_used_or_not(cls, name, value):
    X, y = _data(30)
    base = _BAD[cls][0]
    est = cls(**base).fit(X, y)
    before = est.predict(X)
    with pytest.raises((ValueError, TypeError), match=name):
        est.set_params(**{name: value}).fit(X, y)
    np.testing.assert_array_equal(est.set_params(**{name: cls().get_params()[name], **base}).predict(X), before)


def test_grid_strings_are_a_clear_error():
    X, y = _data(30)
    for est, name in ((ESVRCV(nus='foo'), 'nus'), (ELMRegressorCV(Cs='foo'), 'Cs')):
        with pytest.raises(ValueError, match=f"'{name}' parameter"):
            est.fit(X, y)


def test_complex_callable_kernel_is_refused():
    X, y = _data(20)
    with pytest.raises(TypeError, match='complex'):
        LSSVR(kernel=lambda A, B: (A @ B.T) * (1 + 1j)).fit(X, y)


def _svd_loo_mse(F, T, lam, center):
    "Leave-one-out MSE of ridge on features F by refitting without each row through an SVD (no normal equations)."
    errors = []
    for i in range(F.shape[0]):
        keep = np.arange(F.shape[0]) != i
        f_mean, t_mean = (F[keep].mean(axis=0), T[keep].mean()) if center else (0.0, 0.0)
        U, s, Vt = np.linalg.svd(F[keep] - f_mean, full_matrices=False)
        beta = Vt.T @ (s / (s ** 2 + lam) * (U.T @ (T[keep] - t_mean)))
        errors.append((T[i] - t_mean - (F[i] - f_mean) @ beta) ** 2)
    return np.mean(errors)


@pytest.mark.parametrize('cls, grid', [(ELMRegressorCV, 'Cs'), (ESVRCV, 'nus')])
@pytest.mark.parametrize('n, n_hidden', [(20, 100), (20, 10), (101, 100), (300, 30), (300, 100)])
def test_extreme_grid_values_give_a_finite_exact_loo_curve(cls, grid, n, n_hidden):
    "C or nu from 1e-12 to 1e12: the closed-form LOO curve is finite and equals refitting without each row."
    X, y = _data(n)
    values = [1e-12, 1.0, 1e12]
    est = cls(**{grid: values}, n_hidden=n_hidden, random_state=0).fit(X, y)
    assert np.isfinite(est.mse_path_).all()
    if n <= 101 or n_hidden == 30:
        H = est.hidden_layer_.transform(X)
        F, center = (H, True) if cls is ELMRegressorCV else (augment(H), False)
        want = [_svd_loo_mse(F, y, 1.0 / v, center) for v in values]
        np.testing.assert_allclose(est.mse_path_, want, rtol=1e-6)


@pytest.mark.parametrize('est', [ELMRegressorCV(), ESVRCV(), ELMRegressorCV(cv=3), ESVRCV(nus=[1.0], cv=2)])
def test_one_training_row_is_a_clear_error(est):
    with pytest.raises(ValueError, match='n_samples=1'):
        est.fit(np.ones((1, 3)), np.ones(1))


@pytest.mark.parametrize('solver', ['primal', 'dual'])
def test_shrunk_esvr_warns_by_name_with_the_measured_r2(solver):
    from kelm_nb.esvr import ShrinkageWarning
    X, y = _data(60)
    y = y + 10.0                                 # a mean the shrunk bias cannot reach
    with pytest.warns(ShrinkageWarning, match=r'nu=2\.98023e-08.*training R\^2 = -') as caught:
        est = ESVR(100 if solver == 'dual' else 20, nu=2.0 ** -25, solver=solver, random_state=0).fit(X, y)
    r2 = float(str(caught[0].message).split('R^2 = ')[1].split(')')[0])
    np.testing.assert_allclose(r2, r2_score(y, est.predict(X)), rtol=0.05)
    with pytest.warns(ShrinkageWarning):
        ESVR(20, nu=2.0 ** -25, random_state=0).fit(X, y, sample_weight=np.arange(60) % 3 + 1.0)
    with pytest.warns(ShrinkageWarning):
        ESVRCV(nus=[2.0 ** -25], n_hidden=20, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        ESVR(20, nu=1.0, random_state=0).fit(X, y)          # a sensible nu is silent


@pytest.mark.parametrize('params', [{}, {'n_hidden': None}, {'n_hidden': 40, 'nu': 50.0, 'activation': 'tanh'}])
@pytest.mark.parametrize('multi', [False, True])
def test_esvr_fits_dask_arrays_block_by_block(params, multi):
    "A Dask array is fitted from chunk sums (never computed whole) and predicted as a Dask array."
    da = pytest.importorskip('dask.array')
    X, y = _data(230, d=4)
    Y = np.column_stack([y, np.cos(y)]) if multi else y
    X_da = da.from_array(X, chunks=(37, 4))
    Y_da = da.from_array(Y, chunks=(37,) + Y.shape[1:])
    in_memory = ESVR(random_state=0, **params).fit(X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        on_dask = ESVR(random_state=0, **params).fit(X_da, Y_da)
    assert on_dask.solver_ == 'primal' and on_dask.n_features_in_ == 4
    pred = on_dask.predict(X_da)
    assert type(pred).__module__.startswith('dask.') and pred.shape == Y.shape
    assert pred.chunks[0] == X_da.chunks[0]
    np.testing.assert_allclose(pred.compute(), in_memory.predict(X), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(on_dask.predict(X), in_memory.predict(X), rtol=1e-8, atol=1e-10)
    numpy_y = ESVR(random_state=0, **params).fit(X_da, Y)                      # NumPy targets with Dask rows
    np.testing.assert_allclose(numpy_y.coef_, on_dask.coef_, rtol=1e-12, atol=1e-14)


def test_esvr_dask_fit_never_converts_the_whole_array(monkeypatch):
    "No step of fit or predict turns the Dask array into one NumPy array (np.asarray would load it whole)."
    da = pytest.importorskip('dask.array')
    X, y = _data(400, d=3)
    X_da, y_da = da.from_array(X, chunks=(50, 3)), da.from_array(y, chunks=50)

    def refuse(*args, **kwargs):
        raise AssertionError('the whole Dask array was converted to NumPy')
    monkeypatch.setattr(type(X_da), '__array__', refuse)
    with pytest.raises(AssertionError, match='converted'):
        np.asarray(X_da)
    pred = ESVR(20, random_state=0).fit(X_da, y_da).predict(X_da)
    monkeypatch.undo()
    np.testing.assert_allclose(pred.compute(), ESVR(20, random_state=0).fit(X, y).predict(X), rtol=1e-9)


def test_esvr_fit_blocks_equals_fit():
    X, y = _data(200)
    want = ESVR(30, nu=4.0, random_state=0).fit(X, y)
    got = ESVR(30, nu=4.0, random_state=0).fit_blocks((X[s:s + 33], y[s:s + 33]) for s in range(0, 200, 33))
    np.testing.assert_allclose(got.predict(X), want.predict(X), rtol=1e-9, atol=1e-12)
    assert not hasattr(got, '_block_moments')
    from kelm_nb.esvr import ShrinkageWarning
    with pytest.warns(ShrinkageWarning):
        ESVR(30, nu=2.0 ** -25, random_state=0).fit_blocks([(X[:100], y[:100] + 10), (X[100:], y[100:] + 10)])
    with pytest.raises(ValueError, match='classes'):
        ESVR(30).fit_blocks([(X, y)], classes=[0, 1])


def test_dask_input_errors_are_clear():
    da = pytest.importorskip('dask.array')
    X, y = _data(100)
    X_da, y_da = da.from_array(X, chunks=(25, 3)), da.from_array(y, chunks=25)
    for est in (ESVRCV(), ELMRegressorCV()):
        with pytest.raises(TypeError, match='in memory'):
            est.fit(X_da, y_da)
        est.fit(X, y)
        np.testing.assert_allclose(est.predict(X_da).compute(), est.predict(X), rtol=1e-12)
    with pytest.raises(TypeError, match='sample_weight'):
        ESVR().fit(X_da, y_da, sample_weight=np.ones(100))
    with pytest.raises(ValueError, match="solver='dual'"):
        ESVR(solver='dual').fit(X_da, y_da)
    with pytest.raises(ValueError, match='must have shape'):
        ESVR().fit(X_da, y_da[:-1])
    with pytest.raises(ValueError, match='NaN'):
        ESVR().fit(X_da, da.from_array(np.where(y > 1.5, np.nan, y), chunks=25))
    with pytest.raises(ValueError, match='NaN'):
        ESVR().fit(da.from_array(np.where(X > 0.9, np.nan, X), chunks=(25, 3)), y_da)
    fitted = ESVR(10, random_state=0).fit(X_da, y_da)
    with pytest.raises(ValueError, match='features'):
        fitted.predict(X_da[:, :2])

"Estimator checks, oracles and bad input of `kelm_nb.esvr`, called through the installed package."
import numpy as np
import pytest
import scipy.linalg
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from kelm_nb.core import KernelELMRegressor, RandomHiddenLayer, compute_kernel, ridge_solve
from kelm_nb.esvr import ESVR, LSSVR, augment, esvr_dual, esvr_primal, esvr_solve, lssvr_solve


@parametrize_with_checks([ESVR(20, random_state=0), ESVR(20, nu=100.0, solver='dual', random_state=0),
                          ESVR(None, nu=10.0), LSSVR(gamma_reg=10.0, gamma=0.5)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _data(m=50, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (m, d))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.05 * rng.standard_normal(m)
    return X, y


def _stacked_lstsq(H, T, nu):
    E = np.hstack([H, -np.ones((H.shape[0], 1))]); p1 = E.shape[1]
    A = np.vstack([E, np.eye(p1) / np.sqrt(nu)])
    return scipy.linalg.lstsq(A, np.concatenate([T, np.zeros((p1,) + T.shape[1:])]))[0]


@pytest.mark.parametrize('dtype', [np.float64, np.float32])
@pytest.mark.parametrize('shape', [(60, 15), (12, 30)])
@pytest.mark.parametrize('nu', [2.0 ** -10, 1.0, 2.0 ** 8])
def test_eq8_eq9_and_stacked_oracle(dtype, shape, nu):
    rng = np.random.default_rng(1)
    H = rng.standard_normal(shape).astype(dtype)
    T = rng.standard_normal((shape[0], 2))
    u8, u9 = esvr_dual(H, T, nu), esvr_primal(H, T, nu)
    ref = _stacked_lstsq(H.astype(np.float64), T, nu)
    tol = 1e-8 if dtype == np.float64 else 1e-5   # float32 input is exact in float64: the solve is float64
    np.testing.assert_allclose(u8, u9, rtol=tol, atol=tol * np.abs(ref).max())
    np.testing.assert_allclose(u9, ref, rtol=tol, atol=tol * np.abs(ref).max())
    assert u9.dtype == np.float64 and u9.shape == (shape[1] + 1, 2)
    u, form = esvr_solve(H, T[:, 0], nu)
    assert form == ('dual' if shape[0] < shape[1] + 1 else 'primal') and u.shape == (shape[1] + 1,)


def test_augment():
    H = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(augment(H), [[0, 1, -1], [2, 3, -1], [4, 5, -1]])
    assert augment(H.astype(np.float32)).dtype == np.float32


def test_nu_limits_and_monotone_training_error():
    rng = np.random.default_rng(2)
    H = rng.standard_normal((40, 10)); T = rng.standard_normal(40)
    u_ls = np.linalg.lstsq(augment(H), T, rcond=None)[0]
    gaps = [np.linalg.norm(esvr_primal(H, T, nu) - u_ls) for nu in 10.0 ** np.arange(0, 11, 2)]
    assert all(b < a for a, b in zip(gaps, gaps[1:])) and gaps[-1] < 1e-8 * np.linalg.norm(u_ls)
    errs = [np.linalg.norm(augment(H) @ esvr_primal(H, T, nu) - T) for nu in 2.0 ** np.arange(-25, 26)]
    assert np.all(np.diff(errs) <= 1e-9 * np.array(errs[:-1]))


@pytest.mark.parametrize('n_hidden', [10, 60])   # m = 40: primal and dual
def test_estimator_matches_core_solvers(n_hidden):
    X, y = _data(60)
    Xtr, ytr, Xte = X[:40], y[:40], X[40:]
    est = ESVR(n_hidden, nu=3.0, random_state=0).fit(Xtr, ytr)
    H = est.hidden_layer_.transform(Xtr)
    u = ridge_solve(augment(H), ytr, 3.0)              # regularised ELM on [H, -e], C = nu
    np.testing.assert_allclose(np.append(est.w_, est.r_), u, rtol=1e-7, atol=1e-9 * np.abs(u).max())
    kelm = KernelELMRegressor(C=3.0, kernel=lambda A, B: est.hidden_layer_.transform(A) @ est.hidden_layer_.transform(B).T + 1)
    np.testing.assert_allclose(est.predict(Xte), kelm.fit(Xtr, ytr).predict(Xte), rtol=1e-7, atol=1e-8)
    other = ESVR(n_hidden, nu=3.0, solver='dual' if est.solver_ == 'primal' else 'primal', random_state=0).fit(Xtr, ytr)
    np.testing.assert_allclose(other.predict(Xte), est.predict(Xte), rtol=1e-8, atol=1e-8)


def test_linear_esvr_and_multioutput():
    X, y = _data(50)
    Y = np.column_stack([y, X[:, 2] - y])
    lin = ESVR(None, nu=5.0).fit(X, Y)
    u = _stacked_lstsq(X, Y, 5.0)
    np.testing.assert_allclose(np.vstack([lin.w_, lin.r_]), u, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(lin.predict(X), X @ u[:-1] - u[-1], rtol=1e-10)
    single = ESVR(None, nu=5.0).fit(X, Y[:, 1])
    np.testing.assert_allclose(single.predict(X), lin.predict(X)[:, 1], rtol=1e-10)


def test_block_path_equals_one_shot():
    from kelm_nb.esvr import _esvr_primal_blocks
    X, y = _data(4500, 4)
    est = ESVR(40, nu=2.0 ** 8, random_state=3).fit(X, y)
    ref = esvr_primal(est.hidden_layer_.transform(X), y, 2.0 ** 8)
    np.testing.assert_allclose(np.append(est.w_, est.r_), ref, rtol=1e-6, atol=1e-8 * np.abs(ref).max())
    Y = np.column_stack([y, -y ** 2])
    for block in (1000, 4096):  # several blocks, the last one partial
        u = _esvr_primal_blocks(est.hidden_layer_.transform, X, Y, 2.0 ** 8, block=block)
        ref2 = esvr_primal(est.hidden_layer_.transform(X), Y, 2.0 ** 8)
        np.testing.assert_allclose(u, ref2, rtol=1e-6, atol=1e-8 * np.abs(ref2).max())


def test_float32_input():
    X, y = _data(50)
    a = ESVR(15, nu=4.0, random_state=0).fit(X.astype(np.float32), y)
    b = ESVR(15, nu=4.0, random_state=0).fit(X, y)
    np.testing.assert_allclose(a.predict(X.astype(np.float32)), b.predict(X), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize('gamma_reg', [2.0 ** -4, 1.0, 2.0 ** 10])
def test_lssvr_against_bordered_system(gamma_reg):
    X, y = _data(40)
    K = compute_kernel(X, X, 'rbf', gamma=1.5)
    alpha, b = lssvr_solve(K, y, gamma_reg)
    Big = np.zeros((41, 41)); Big[0, 1:] = 1; Big[1:, 0] = 1; Big[1:, 1:] = K + np.eye(40) / gamma_reg
    ref = np.linalg.solve(Big, np.concatenate([[0.0], y]))
    np.testing.assert_allclose(b, ref[0], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(alpha, ref[1:], rtol=1e-7, atol=1e-9 * np.abs(ref).max())
    est = LSSVR(gamma_reg=gamma_reg, gamma=1.5).fit(X, y)
    np.testing.assert_allclose(est.predict(X[:5]), K[:5] @ ref[1:] + ref[0], rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize('params, X_bad, y_bad, match', [
    ({'nu': 0.0}, None, None, 'nu'), ({'nu': -2.0}, None, None, 'nu'), ({'nu': np.inf}, None, None, 'nu'),
    ({'n_hidden': 0}, None, None, 'n_hidden'), ({'solver': 'svd'}, None, None, 'solver'),
    ({}, 'nan', None, 'X'), ({}, None, 'inf', 'y'), ({}, None, 'short', 'X and y'), ({}, '1d', None, 'X'),
    ({}, 'empty', None, 'X')])
def test_bad_input_leaves_model_untouched(params, X_bad, y_bad, match):
    X, y = _data(30)
    est = ESVR(8, random_state=0).fit(X, y)
    before = (est.w_.copy(), est.r_, est.n_features_in_)
    Xb = {'nan': np.where(X > 0.8, np.nan, X), '1d': X[:, 0], 'empty': X[:0], None: X}[X_bad]
    yb = {'inf': np.append(y[:-1], np.inf), 'short': y[:-1], None: y}[y_bad]
    if X_bad == 'empty': yb = y[:0]
    with pytest.raises((ValueError, TypeError), match=match):
        est.set_params(**params).fit(Xb, yb)
    np.testing.assert_array_equal(est.w_, before[0]); assert est.r_ == before[1] and est.n_features_in_ == before[2]


def test_bad_input_functions():
    H = np.ones((5, 3))
    with pytest.raises(ValueError, match='nu'): esvr_primal(H, np.ones(5), 0)
    with pytest.raises(ValueError, match='T has 4 rows'): esvr_dual(H, np.ones(4), 1.0)
    with pytest.raises(ValueError, match='T contains NaN'): esvr_primal(H, np.full(5, np.nan), 1.0)
    with pytest.raises(ValueError, match='solver'): esvr_solve(H, np.ones(5), 1.0, solver='x')
    with pytest.raises(ValueError, match='H'): esvr_primal(np.ones(5), np.ones(5), 1.0)
    with pytest.raises(ValueError, match='K must be a square'): lssvr_solve(np.ones((3, 4)), np.ones(3), 1.0)
    with pytest.raises(ValueError, match='gamma_reg'): LSSVR(gamma_reg=-1).fit(np.ones((4, 2)), np.ones(4))
    with pytest.raises(ValueError, match='X'): ESVR(5, random_state=0).fit(np.ones((4, 2)), np.ones(4)).predict(np.ones((2, 3)))


def test_regularisation_paths_match_estimators():
    from kelm_nb.esvr import esvr_nu_path, lssvr_path
    X, y = _data(60)
    layer = RandomHiddenLayer(25, random_state=0).fit(X)
    H = layer.transform(X)
    grid = 2.0 ** np.array([-8.0, 0.0, 8.0])
    P = esvr_nu_path(H[:40], y[:40], H[40:], grid)
    for j, nu in enumerate(grid):
        u = esvr_primal(H[:40], y[:40], nu)
        np.testing.assert_allclose(P[:, j], H[40:] @ u[:-1] - u[-1], rtol=1e-7, atol=1e-8)
    K = compute_kernel(X, X, 'rbf', gamma=0.7)
    P = lssvr_path(K[:40, :40], y[:40], K[40:, :40], grid)
    for j, g in enumerate(grid):
        np.testing.assert_allclose(P[:, j], LSSVR(gamma_reg=g, gamma=0.7).fit(X[:40], y[:40]).predict(X[40:]), rtol=1e-6, atol=1e-8)


def test_reproduction_smoke():
    import numba
    from kelm_nb.esvr import (ZHU_TABLE3, hidden_node_curves, run_zhu_dataset, single_threaded, zhu_split,
                              zhu_tables)
    Xtr, ytr, Xte, yte = zhu_split('basketball')
    assert (len(ytr), len(yte)) == (64, 32) and Xtr.min() >= -1 and Xtr.max() <= 1   # Table 1 sizes, [-1, 1] scaling
    tiny = dict(n_hiddens=(10, 20), nus=2.0 ** np.arange(-4, 5, 4), cv_rounds=1, test_rounds=2, svr_C=[1.0],
                svr_gamma=[1.0], ls_C=[1.0, 8.0], ls_gamma=[0.5])
    threads = numba.get_num_threads()
    with single_threaded():
        assert numba.get_num_threads() == 1
        r = run_zhu_dataset('basketball', settings=tiny)
    assert numba.get_num_threads() == threads
    assert r['esvr']['n_hidden'] in (10, 20) and 0 < r['esvr']['rmse'][0] < 1 and 0 < r['svr']['rmse'] < 1
    t2, t3, tt = zhu_tables([r])
    assert t3.rows[0]['values']['ESVR_paper'] == ZHU_TABLE3['basketball'][4] and len(t2.rows) == len(tt.rows) == 1
    c = hidden_node_curves('basketball', n_hiddens=(10, 60), n_rounds=2, cv_rounds=1)
    assert c['esvr_mean'].shape == (2,) and np.all(c['elm_std'] >= 0)

"""Tests of kelm_nb.papers.scardapane2015: the two readings of the paper's models, the emulation of Lynx's OS-ELM,
the dictionary-limited oracle, the benchmark peers and cases (quick), the protocol through run_tasks."""
import numpy as np
import pytest

from kelm_nb.core import compute_kernel
from kelm_nb.experiments import CASES, run_case
from kelm_nb.kos_elm import KOSELMRegressor
from kelm_nb.papers import scardapane2015 as paper


def test_readings():
    ours, code = paper.paper_models('calhousing', False, 0), paper.paper_models('calhousing', False, 0, 'paper_code')
    assert set(ours) == set(paper.METHODS) == set(code)
    assert ours['FB-KOS-ELM'].C == 200.0 and code['FB-KOS-ELM'].C == pytest.approx(1 / 200)   # KMBOX: K + C I
    assert np.isinf(code['ALD-KOS-ELM'].C) and ours['ALD-KOS-ELM'].ald_threshold == 0.08
    assert ours['ALD, 1/(4C)'].ald_threshold == pytest.approx(0.00125)
    assert isinstance(code['OS-ELM'], paper._LynxOSELM) and not ours['ELM'].fit_intercept
    with pytest.raises(ValueError, match='reading'):
        paper.paper_models('wdbc', True, reading='kmbox')
    with pytest.raises(ValueError, match='dataset'):
        paper.load_paper_dataset('sylva')


def test_lynx_oselm_is_the_explicit_recursion():
    "With N0 >= L the pinv start is least squares, and eq. 7-8 keep it so: the oracle is lstsq on everything seen."
    rng = np.random.default_rng(0)
    X, y = rng.uniform(size=(600, 4)), rng.normal(size=600)
    est = paper._LynxOSELM(n_hidden=30, initial_size=100, chunk_size=50, random_state=0).fit(X, y)
    H = est.layer_.transform(X)
    np.testing.assert_allclose(est.predict(X), H @ np.linalg.lstsq(H, y, rcond=None)[0], rtol=1e-6, atol=1e-6)


def test_protocol_runs_through_run_tasks_and_pinv_start_explains_wdbc():
    res = paper.run_protocol('wdbc', 3, 1, methods=('OS-ELM',))
    code = paper.run_protocol('wdbc', 3, 1, methods=('OS-ELM',), reading='paper_code')
    assert res['OS-ELM']['score'].shape == (1, 3)
    assert res['OS-ELM']['score'].mean() > 0.85 and code['OS-ELM']['score'].mean() < 0.82   # paper: 0.74


def test_dictionary_optimum_is_the_least_squares_bound():
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(300, 2))
    t = np.sin(4 * X[:, 0]) + 0.1 * rng.normal(size=300)
    est = KOSELMRegressor(gamma=5.0, C=200.0, ald_threshold=0.05, budget=None, fit_intercept=False).fit(X, t)
    D = est.dictionary_
    a = paper.dictionary_optimum(D, X, t, 5.0, 200.0)
    K, KD = compute_kernel(X, D, 'rbf', gamma=5.0), compute_kernel(D, D, 'rbf', gamma=5.0)
    objective = lambda c: np.sum((t - K @ c) ** 2) + c @ KD @ c / 200.0
    assert objective(a) <= objective(est.coef_) + 1e-9
    np.testing.assert_allclose(K.T @ (K @ a - t) + KD @ a / 200.0, 0.0, atol=1e-6)       # normal equations


def test_numpy_peers_agree_with_the_library():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(600, 8))
    y = np.sin(3 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=600)
    D, a = paper._numpy_ald_krls(X, y, 0.5, 100.0, 1e-3, 60)
    ours = KOSELMRegressor(gamma=0.5, C=100.0, ald_threshold=1e-3, budget=60, fit_intercept=False).fit(X, y)
    np.testing.assert_allclose(compute_kernel(X, D, 'rbf', gamma=0.5) @ a, ours.predict(X), rtol=1e-8, atol=1e-9)
    D, a = paper._numpy_fb_krls(X, y, 0.5, 100.0, 60)
    ours = KOSELMRegressor(gamma=0.5, C=100.0, sparsification='fb', budget=60, fit_intercept=False).fit(X, y)
    np.testing.assert_allclose(compute_kernel(X, D, 'rbf', gamma=0.5) @ a, ours.predict(X), rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize('name', ['kos_throughput', 'kos_vs_kelm'])
def test_bench_cases_quick(name):
    assert name in CASES
    r = run_case(name, quick=True)
    if name == 'kos_throughput':
        assert r['ald_max_abs_diff'] < 1e-8 and r['fb_max_abs_diff'] < 1e-8 and r['ratio'] < 1.0
    else:
        assert r['nrmse_ratio'] < 1.05 and r['paper_delta_nrmse_ratio'] > r['nrmse_ratio']
        assert r['dictionary'] < r['n_train']


def test_method_table_cells_carry_their_count_and_mode():
    res = {m: {'score': np.array([[0.9, 0.92, 0.94]]), 'time': np.array([[0.1, 0.1, 0.1]]),
               'dict': np.full((1, 3), np.nan)} for m in paper.METHODS}
    res['_meta'] = dict(dataset='wdbc', n_folds=3, n_runs=1, n_samples=569, classification=True, reading='ours')
    t = paper._method_table('wdbc', res, 'quick')
    assert '[quick: 569 samples, 3-fold x 1 run(s)]' in t.title
    rec = t.records()[0]
    assert rec['ours_n'] == 3 and rec['ours'] == pytest.approx(0.92) and rec['ours_spread'] == pytest.approx(0.02)


def test_fb_wdbc_study_pairs_folds():
    t = paper.fb_wdbc_study(n_runs=1, variants={'all rows': dict(budget=400), 'F=100': dict(budget=100)})
    np.testing.assert_array_equal(t.results['all rows'], t.results['K-ELM'])   # a budget covering the fold is K-ELM
    rec = {r['row']: r for r in t.records()}
    assert rec['all rows']['wilcoxon_p'] == 1.0 and rec['all rows']['minus_kelm'] == 0.0
    assert len(t.results['F=100']) == 3 and 0 <= rec['F=100']['wilcoxon_p'] <= 1

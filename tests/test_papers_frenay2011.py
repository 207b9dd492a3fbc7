"Tests of kelm_nb.papers.frenay2011 (the experiment of Frénay & Verleysen 2011) on small protocols."
import inspect
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVR

from kelm_nb.experiments import CASES, cross_test, task_store
from kelm_nb.kernels import ELMKernelSVR
from kelm_nb.papers import frenay2011 as F

SMALL = dict(F.frenay_protocol(), outer=3, inner=2, C=[1.0, 100.0], epsilon=[0.01, 0.1], gamma=[0.01, 0.3],
             sigmas=(0.1, 1.0, 1000.0), max_rows=None)


@pytest.fixture(scope='module')
def cpu_runs():
    return F.frenay_cross_tests('cpu', SMALL, progress=False)


def test_protocols():
    full, quick = F.frenay_protocol(True), F.frenay_protocol()
    assert (len(full['C']), len(full['epsilon']), len(full['gamma'])) == (17, 13, 7)
    np.testing.assert_allclose([full['C'][0], full['C'][-1], full['epsilon'][0], full['gamma'][-1]],
                               [1e-2, 1e6, 1e-5, 1.0], rtol=1e-12)
    np.testing.assert_allclose(np.diff(np.log10(full['C'])), 0.5, rtol=1e-9)
    for key in ('C', 'epsilon', 'gamma'):     # the quick grids are points of the paper's grids
        assert set(np.round(np.log10(quick[key]), 9)) <= set(np.round(np.log10(full[key]), 9))
    assert quick['C'][0] == full['C'][0] and quick['gamma'] == F._decades(-3, 0)
    assert (quick['outer'], quick['inner'], len(quick['C']), len(quick['epsilon'])) == (5, 3, 6, 3)
    assert quick['sigmas'] == full['sigmas'] == F.SIGMAS and set(quick['claim_sigmas']) == {0.1, 1.0, 1000.0}
    assert full['max_rows'] is None and F.frenay_data('abalone', quick['max_rows'])[0].shape == (200, 8)
    assert F.frenay_data('cpu', 400)[0].shape == (209, 6)


def test_protocol_table_states_what_quick_mode_cuts():
    t = F.protocol_table(F.frenay_protocol())
    rows = {r['label']: r['values'] for r in t.rows}
    assert rows['outer folds (test)'] == {'paper': '10', 'this_run': '5'}
    assert rows['C'] == {'paper': '10^-2 … 10^6, 17 values', 'this_run': '10^-2 … 10^3, 6 values'}
    assert rows['rows per set']['this_run'] == 'at most 200'
    # the fit counts are those the cross-tests make: 3010 on CPU (every σ_w), 1910 on another set
    assert rows['LIBSVM fits, CPU or Abalone'] == {'paper': '309,480', 'this_run': '3,010'}
    assert rows['LIBSVM fits, another set']['this_run'] == '1,910'
    p = F.frenay_protocol()
    assert 10 * (10 * 17 * 13 * 7 + 1) + 7 * 10 * (10 * 17 * 13 + 1) == 309_480
    assert p['outer'] * (p['inner'] * 6 * 3 * 4 + 1 + 7 * (p['inner'] * 6 * 3 + 1)) == 3010
    full = {r['label']: r['values']['this_run'] for r in F.protocol_table(F.frenay_protocol(True)).rows}
    assert full['rows per set'] == 'all' and full['outer folds (test)'] == '10'


def test_fit_counts_match_the_cross_test(cpu_runs):
    "`protocol_table`'s fit count is the sum of the rows' fits of a real cross-test."
    assert F._fits_per_set(SMALL, len(SMALL['sigmas'])) == sum(r.fits for r in cpu_runs.values())


def test_paper_rule_on_the_papers_numbers():
    assert F.paper_rule({'a': (1.0, 0.5, 1.5), 'b': (1.4, 1.2, 1.6), 'c': (2.0, 1.8, 2.2)}) == {
        'a': 'best', 'b': 'n.s.', 'c': 'worse'}
    verdicts = {name: F.claim_verdict(rows) for name, rows in F.PAPER_TABLES.items()}
    assert [n for n, v in verdicts.items() if v == 'holds'] == ['cancer', 'cpu', 'abalone', 'ailerons', 'elevators']
    assert verdicts['triazines'] == 'fails: Gaussian' and 'σ_w = 1e+00' in verdicts['compacts']
    assert len(F.paper_claim_table().rows) == 8


@pytest.mark.parametrize('sigma_w', [1e-3, 1.0])
def test_precomputed_cross_test_equals_cross_test(sigma_w):
    "One Gram matrix per fold gives exactly the fold errors of the generic nested CV with ELMKernelSVR."
    X, y = F.frenay_data('cpu')
    p = dict(SMALL, max_iter=10 ** 4)
    ours = F.frenay_cross_tests('cpu', p, [sigma_w], progress=False)[sigma_w]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ConvergenceWarning)
        ref = cross_test(ELMKernelSVR(sigma_w=sigma_w, max_iter=p['max_iter']), {'C': p['C'], 'epsilon': p['epsilon']},
                         X, y, 3, 2, scale_X=False, scale_y=False, progress=False)
    np.testing.assert_allclose(ours.result.fold_errors, ref.fold_errors, rtol=1e-12)
    chosen = [(b['C'], b['epsilon']) for b in ours.result.best_params]
    assert chosen == [(b['C'], b['epsilon']) for b in ref.best_params]
    assert ours.fits == 3 * (2 * 4 + 1)


def test_gaussian_row_equals_cross_test_of_svr(cpu_runs):
    X, y = F.frenay_data('cpu')
    ref = cross_test(SVR(max_iter=SMALL['max_iter']), {k: SMALL[k] for k in ('C', 'epsilon', 'gamma')}, X, y, 3, 2,
                     progress=False)
    np.testing.assert_allclose(cpu_runs['gaussian'].result.fold_errors, ref.fold_errors, rtol=1e-9)


def test_out_of_fold_predictions_give_the_fold_errors(cpu_runs):
    from sklearn.model_selection import KFold
    X, y = F.frenay_data('cpu')
    run = cpu_runs[1.0]
    folds = KFold(3, shuffle=True, random_state=0).split(X)
    errors = [np.mean((run.predictions[te] - y[te]) ** 2) for _, te in folds]
    np.testing.assert_allclose(errors, run.result.fold_errors, rtol=1e-12)


def test_capped_fits_are_counted():
    p = dict(SMALL, C=[1e4], epsilon=[0.01], max_iter=10)
    run = F.frenay_cross_tests('cpu', p, [1e-3], progress=False)[1e-3]
    assert run.capped == run.fits == 3 * (2 + 1)
    assert F.frenay_cross_tests('cpu', dict(p, C=[1.0], max_iter=-1), [1.0], progress=False)[1.0].capped == 0


def test_parallel_and_stored_runs_give_the_same_numbers(tmp_path):
    p = dict(SMALL, C=[1.0, 10.0], epsilon=[0.1])
    serial = F.frenay_cross_tests('basketball', p, [1.0], progress=False)[1.0].result.fold_errors
    parallel = F.frenay_cross_tests('basketball', p, [1.0], n_jobs=2, progress=False)[1.0].result.fold_errors
    np.testing.assert_array_equal(serial, parallel)
    with task_store(tmp_path):
        first = F.frenay_cross_tests('basketball', p, [1.0], progress=False)[1.0].result.fold_errors
        again = F.frenay_cross_tests('basketball', p, [1.0], progress=False)[1.0].result.fold_errors
    np.testing.assert_array_equal(first, serial)
    np.testing.assert_array_equal(again, serial)
    assert any(tmp_path.rglob('*.json')) and not any(tmp_path.rglob('*.pkl'))


def test_tables(cpu_runs):
    t = F.frenay_table('cpu', cpu_runs, SMALL)
    labels = [r['label'] for r in t.rows]
    assert labels == ['Gaussian kernel', 'σ_w = 1e-01', 'σ_w = 1e+00', 'σ_w = 1e+03']
    row = t.rows[2]['values']
    assert row['paper'] == (3.9e3, (6.7e3 - 1.1e3) / 2) and row['rule_paper'] in ('best', 'n.s.', 'worse')
    assert row['capped'].endswith(f'/{3 * (2 * 4 + 1)}') and 0 <= row['p_vs_gauss'] <= 1
    claim = F.claim_table({'cpu': cpu_runs}, SMALL).rows[0]['values']
    assert claim['rows'] == 209 and claim['rule'].startswith(('holds', 'fails'))
    assert claim['verdict'] in ('holds', 'fails', 'undecided') and 0 <= claim['p'] <= 1
    effect = F.fold_effect(cpu_runs[1.0].result.fold_errors, cpu_runs['gaussian'].result.fold_errors)
    assert claim['sigma1_vs_gauss'] == effect['ratio'] and claim['fold_ratio_ci'] == (
        f"[{effect['low']:.3g}, {effect['high']:.3g}]")
    assert F.sigma_table({'cpu': cpu_runs}).columns == ('gauss_mse', 'sigma_1e_01', 'sigma_1e00', 'sigma_1e03')
    assert F.timing_table({'cpu': cpu_runs}, SMALL).rows[0]['values']['grid_ratio'] == 2.0
    X, y = F.frenay_data('cpu')
    top, share = F.extremes_tables('cpu', cpu_runs, X, y)
    assert [r['values']['target'] for r in top.rows] == sorted(y)[::-1][:5]
    assert all(0 < r['values']['share_top'] < 1 for r in share.rows)


def test_fold_effect_against_scipy():
    "The interval and the p-value of `fold_effect` are scipy's paired t-test on the log fold MSEs; Wilcoxon is exact."
    from scipy import stats
    rng = np.random.default_rng(3)
    for _ in range(20):
        z = rng.uniform(0.5, 2.0, 5)
        x = z * np.exp(rng.normal(rng.uniform(-0.5, 0.5), 0.2, 5))
        e = F.fold_effect(x, z)
        t = stats.ttest_rel(np.log(x), np.log(z))
        np.testing.assert_allclose(e['p'], t.pvalue, rtol=1e-10)
        ci = t.confidence_interval(0.95)
        np.testing.assert_allclose([e['low'], e['high']], np.exp([ci.low, ci.high]), rtol=1e-10)
        assert (e['p'] < 0.05) == (e['low'] > 1 or e['high'] < 1)
        np.testing.assert_allclose(e['p_wilcoxon'], stats.wilcoxon(x, z).pvalue, rtol=1e-12)
        assert e['p_wilcoxon'] >= 2 / 2 ** 5 - 1e-15
        assert F.effect_verdict(e) in ('worse', 'better', 'within 10%', 'undecided')


def test_fold_effect_bad_input():
    for bad in (([1.0], [1.0]), ([1.0, 2.0], [1.0, 2.0, 3.0]), ([0.0, 1.0], [1.0, 1.0]), ([np.nan, 1.0], [1.0, 1.0])):
        with pytest.raises(ValueError, match='errors and reference'):
            F.fold_effect(*bad)


def test_truncated_row_is_flagged_in_the_table(cpu_runs):
    "A row with a measured truncation and a row whose C is the grid's top say so in their notes."
    p = dict(SMALL, C=[1.0, 10.0], epsilon=[0.1], sigmas=(0.01, 1.0))
    runs = F.frenay_cross_tests('cpu', p, ['gaussian', 0.01, 1.0], progress=False)
    notes = {r['label']: r['note'] for r in F.frenay_table('cpu', runs, p).rows}
    assert 'TRUNCATED' in notes['σ_w = 1e-02'] and '4.07e3' in notes['σ_w = 1e-02']
    assert 'TRUNCATED' not in notes['σ_w = 1e+00']
    for label, run in zip(notes, runs.values()):
        k = sum(b['C'] == 10.0 for b in run.result.best_params)
        assert (f'in {k}/3 folds' in notes[label]) == (k > 0)


def test_angle_saturation_vanishes_with_the_norm():
    X, _ = F.frenay_data('cpu')
    norms = np.linalg.norm((X - X.mean(0)) / X.std(0), axis=1)
    far, near = np.argsort(norms)[-3:], np.argsort(norms)[:3]
    assert F.angle_saturation(X, far).max() < F.angle_saturation(X, near).min()


def test_siri_formula():
    t = F.siri_table()
    assert 1.58 < t.rows[0]['values']['mse'] < 1.60 and t.rows[0]['values']['rows_off_by_1'] == 5
    assert 17.0 < t.rows[0]['values']['largest_miss'] < 17.1


def test_figures(cpu_runs):
    import matplotlib
    matplotlib.use('Agg')
    X, y = F.frenay_data('cpu')
    assert F.fig1_epsilon_svr().get_label() == 'fig1_epsilon_svr'
    assert F.fig3_kernel_shapes().get_label() == 'fig3_kernel_shapes'
    assert F.fig_sigma_per_set({'cpu': cpu_runs}).get_label() == 'fig_sigma_per_set'
    fig, slopes = F.fig_extrapolation(cpu_runs, X, y)
    assert fig.get_label() == 'fig_extrapolation' and set(slopes) == {'gaussian', 1.0}


def test_bench_cases_registered_and_correct():
    for name in ('asymptotic_gram', 'elm_kernel_svr_predict'):
        assert name in CASES and CASES[name].factory.__module__ == 'kelm_nb.papers.frenay2011'
    assert CASES['asymptotic_gram'].target == 'ratio <= 0.8 and floor_ratio <= 1.1'
    for name in ('asymptotic_gram', 'elm_kernel_svr_predict'):    # explicit threads in full mode too
        case = CASES[name].factory(quick=True)
        assert case.repeats >= 5 and case.threads == 1


def test_reproduce_signature():
    params = inspect.signature(F.reproduce).parameters
    for name, default in (('full', False), ('n_jobs', 1), ('random_state', 0)):
        assert params[name].default == default


def test_precomputed_svr_is_svr_without_its_checks(capfd):
    "The grid search's LIBSVM calls give SVR's predictions and capped flag bit for bit, and print nothing."
    from sklearn.svm import _libsvm
    X, y = F.frenay_data('cpu')
    Xs, ys, *_ = F._standardised('elm', X, y)
    _libsvm.set_verbosity_wrap(1)                    # as a verbose SVR elsewhere in the process would leave it
    capped_seen = set()
    for kernel, value in (('elm', 0.1), ('gaussian', 0.3)):
        K, Kv = F._gram(kernel, value, Xs[:150]), F._gram(kernel, value, Xs[150:], Xs[:150])
        for C in (0.01, 10.0, 1000.0):
            for max_iter in (50, 10 ** 5):
                pred, capped = F._precomputed_svr(K, ys[:150].copy(), Kv, C, 0.01, max_iter)
                svr = F._quiet_fit(SVR(kernel='precomputed', C=C, epsilon=0.01, max_iter=max_iter), K, ys[:150])
                np.testing.assert_array_equal(pred, svr.predict(Kv))
                assert capped == (svr.fit_status_ == 1)
                capped_seen.add(capped)
    assert capped_seen == {True, False}
    assert capfd.readouterr().out == ''


def test_mse_is_sklearns_to_the_bit():
    from sklearn.metrics import mean_squared_error
    rng = np.random.default_rng(1)
    for n in (1, 2, 7, 8, 9, 127, 128, 129, 1000):
        a, b = rng.normal(size=n) * 1e3, rng.normal(size=n)
        assert F._mse(a, b) == mean_squared_error(a, b)

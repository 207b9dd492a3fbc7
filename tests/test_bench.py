"""The benchmark harness (kelm_nb.bench) and `kelm-nb bench`: quick mode only, never asserting on wall time."""
import importlib.util
import io
import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from kelm_nb import bench
from kelm_nb.bench import load_cases, run_cases
from kelm_nb.experiments import CASES, RESERVED_FIELDS, BenchCase, _clean_number, bench_case, check_target, run_case
from kelm_nb.cli import main

CORE_CASES = ['elm_fit', 'kelm_fit']
CORE_TARGETS = {'elm_fit': 'ratio <= 0.7 and floor_ratio <= 1.15', 'kelm_fit': 'ratio <= 1.0'}
FIELDS = {'name', 'description', 'target', 'target_met', 'ours_s', 'peer_s', 'ratio', 'speedup', 'ours_min_s',
          'peer_min_s', 'ours_max_s', 'peer_max_s', 'floor_s', 'floor_ratio', 'repeats', 'threads', 'quick',
          'ours_rmse', 'peer_rmse', 'max_abs_diff', 'max_rel_diff'}


@pytest.fixture
def scratch_registry():
    "Register throw-away cases without leaving them in the shared registry."
    saved = dict(CASES)
    yield CASES
    CASES.clear()
    CASES.update(saved)


ALL_CASES = [c.name for c in load_cases()]  # every registered case (collected before any scratch ones)


@pytest.fixture(scope='module')
def core_results():
    "The core cases once, in quick mode, as JSON lines (the way `kelm-nb bench --json --quick` prints them)."
    buf = io.StringIO()
    results = run_cases(CORE_CASES, quick=True, json=True, file=buf)
    return results, buf.getvalue()


def test_core_cases_registered():
    assert set(CORE_CASES) <= set(bench.CASES)
    for name in CORE_CASES:
        info = bench.CASES[name]
        assert info.description and info.target == CORE_TARGETS[name]


@pytest.mark.parametrize('name', CORE_CASES)
def test_core_case_quick_same_predictions(core_results, name):
    results, _ = core_results
    r = {res['name']: res for res in results}[name]
    assert 'error' not in r, r.get('error')
    assert FIELDS <= set(r), FIELDS - set(r)
    assert r['quick'] is True and r['repeats'] >= 1
    assert r['ours_s'] > 0 and r['peer_s'] > 0
    assert 0 < r['ours_min_s'] <= r['ours_s'] <= r['ours_max_s']
    assert 0 < r['peer_min_s'] <= r['peer_s'] <= r['peer_max_s']
    assert r['threads'] == 1
    np.testing.assert_allclose(r['ratio'], r['ours_s'] / r['peer_s'], rtol=1e-12)
    np.testing.assert_allclose(r['speedup'], r['peer_s'] / r['ours_s'], rtol=1e-12)
    assert r['target_met'] in (True, False)
    if name == 'elm_fit':  # the floor (hidden layer + syrk + Cholesky) is timed beside ours and the peer
        assert 0 < r['floor_min_s'] <= r['floor_s'] <= r['floor_max_s']
        np.testing.assert_allclose(r['floor_ratio'], r['ours_s'] / r['floor_s'], rtol=1e-12)
    # same predictions: both solve the same regularised system on the same features / kernel
    assert r['max_rel_diff'] < 1e-6, r['max_rel_diff']
    np.testing.assert_allclose(r['ours_rmse'], r['peer_rmse'], rtol=1e-6)
    assert 0.1 < r['ours_rmse'] < 1.5  # standardised target: a real fit, neither trivial nor broken


def test_core_cases_json_lines(core_results):
    results, text = core_results
    lines = text.strip().splitlines()
    assert len(lines) == len(CORE_CASES)
    parsed = [json.loads(line) for line in lines]
    assert [p['name'] for p in parsed] == CORE_CASES
    for p, r in zip(parsed, results):
        assert p == r  # the printed objects are the returned results, losslessly


def test_table_output(scratch_registry):
    @bench_case('t_table', description='toy', target='ratio <= 100')
    def _case(quick=False):
        x = np.arange(10.0)
        return BenchCase(ours=lambda: x.sum(), peer=lambda: sum(x.tolist()), floor=lambda: x.sum(),
                         quality=lambda a, b: {'diff': a - b}, repeats=2, threads=1)
    buf = io.StringIO()
    run_cases(['t_table'], quick=True, file=buf)
    out = buf.getvalue().splitlines()
    assert out[0] == 'kelm-nb bench' and out[1].split()[:6] == ['ours_s', 'peer_s', 'ratio', 'floor_s',
                                                               'floor_ratio', 'threads']
    row = [line for line in out if line.startswith('t_table')]
    assert len(row) == 1 and 'diff=0' in row[0] and 'ratio <= 100' in row[0]
    # each time as 'median (min-max)', the thread setting and the clock (CPU time: one thread) in its column
    assert len(re.findall(r'\d\S* \(\S+-\S+\)', row[0])) == 3, row[0]
    assert row[0].split(')')[-1].split()[1:3] == ['1,', 'cpu'], row[0]
    assert 'median (fastest-slowest)' in out[-1]


def test_skipped_case_is_not_a_failure(scratch_registry, capsys):
    @bench_case('t_skipped', description='optional peer', target='ratio <= 1')
    def _s(quick=False):
        raise bench._CaseSkipped('no_such_peer is not installed')
    buf = io.StringIO()
    results = run_cases(['t_skipped'], file=buf)
    assert results == [dict(name='t_skipped', description='optional peer', target='ratio <= 1',
                            skipped='no_such_peer is not installed')]
    assert 'skipped: no_such_peer is not installed' in buf.getvalue() and 'ERROR' not in buf.getvalue()
    assert main(['bench', 't_skipped']) == 0 and 'failed' not in capsys.readouterr().err


def test_hpelm_cases_skip_without_hpelm(monkeypatch):
    "Without hpelm installed the two hpelm cases are skipped records with the install hint, not errors."
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, 'find_spec', lambda name, *a: None if name == 'hpelm' else real(name, *a))
    results = run_cases(['elm_fit_hpelm', 'elm_fit_hpelm_2threads'], quick=True, file=io.StringIO())
    for r in results:
        assert 'error' not in r and 'hpelm is not installed' in r['skipped'] and 'kelm_nb[peers]' in r['skipped']


@pytest.mark.skipif(importlib.util.find_spec('hpelm') is None, reason='hpelm (the optional peer) is not installed')
def test_hpelm_case_quick():
    "With hpelm installed: both ELMs reach comparable test errors; the thread settings are 1 and 2."
    results = run_cases(['elm_fit_hpelm', 'elm_fit_hpelm_2threads'], quick=True, file=io.StringIO())
    assert [r['threads'] for r in results] == [1, 2]
    for r in results:
        assert 'error' not in r and 'skipped' not in r, r
        assert r['ours_s'] > 0 and r['peer_s'] > 0 and 0.8 < r['rmse_ratio'] < 1.25, r


def test_peer_none_and_errors_and_nan(scratch_registry):
    @bench_case('t_only_time', description='no peer')
    def _a(quick=False):
        return BenchCase(ours=lambda: 1, peer=None, quality=lambda a, b: {'value': float('nan'), 'n': np.int64(3)})

    @bench_case('t_raises', description='broken')
    def _b(quick=False):
        raise RuntimeError('boom')

    buf = io.StringIO()
    results = run_cases(['t_only_time', 't_raises'], json=True, file=buf)
    a, b = (json.loads(line) for line in buf.getvalue().splitlines())  # strict JSON: NaN became null
    assert all(a[k] is None for k in ('peer_s', 'peer_min_s', 'ratio', 'speedup', 'target_met'))
    assert a['value'] is None and a['n'] == 3 and type(results[0]['n']) is int
    assert b['error'] == 'RuntimeError: boom' and 'ours_s' not in b


def test_quality_names_cannot_clobber_fields(scratch_registry):
    @bench_case('t_clobber')
    def _c(quick=False):
        return BenchCase(ours=lambda: 0, peer=lambda: 0, quality=lambda a, b: {'ratio': -1.0})
    r = run_case('t_clobber')
    assert r['ratio'] != -1.0 and r['quality_ratio'] == -1.0


def test_bad_input(scratch_registry):
    with pytest.raises(ValueError, match='name'):
        run_case('no_such_case')
    with pytest.raises(ValueError, match='no_such_case'):
        run_cases(['elm_fit', 'no_such_case'])
    with pytest.raises(ValueError, match='name'):
        bench_case('bad name!')
    with pytest.raises(TypeError):
        bench_case('t_not_callable')(42)

    @bench_case('t_wrong_return')
    def _d(quick=False): return 'not a BenchCase'
    with pytest.raises(TypeError, match='BenchCase'):
        run_case('t_wrong_return')

    @bench_case('t_zero_repeats')
    def _e(quick=False): return BenchCase(ours=lambda: 0, peer=None, repeats=0)
    with pytest.raises(ValueError, match='repeats'):
        run_case('t_zero_repeats')


def test_warm_up_then_repeats(scratch_registry):
    calls = {'ours': 0, 'peer': 0}
    def count(key):
        def f():
            calls[key] += 1
            return calls[key]
        return f

    @bench_case('t_count')
    def _f(quick=False):
        return BenchCase(ours=count('ours'), peer=count('peer'), quality=lambda a, b: {'a': a, 'b': b}, repeats=4)
    r = run_case('t_count')
    assert calls == {'ours': 5, 'peer': 5}  # one warm-up call + 4 timed calls each
    assert (r['a'], r['b']) == (5, 5)       # quality sees the results of the last timed calls


def test_check_target():
    assert check_target('ratio <= 1.0', {'ratio': 0.99}) is True
    assert check_target('ratio <= 1.0', {'ratio': 1.01}) is False
    assert check_target('ratio <= 1.0 and speedup >= 10', {'ratio': 0.5, 'speedup': 2}) is False
    assert check_target('ratio <= 2; rel_obj_diff < 1e-8', {'ratio': 1.5, 'rel_obj_diff': 1e-10}) is True
    assert check_target('as fast as possible', {'ratio': 0.5}) is None
    assert check_target('ratio <= 1', {}) is None


def test_cli_bench_unknown_case(capsys):
    assert main(['bench', 'no_such_case']) != 0
    err = capsys.readouterr().err
    assert 'no_such_case' in err and 'elm_fit' in err


def test_console_script_bench_json(console_script):
    "`kelm-nb bench --json --quick elm_fit` end to end (the same `main` as in process): one JSON line, every field."
    proc = subprocess.run([console_script, 'bench', '--json', '--quick', 'elm_fit'],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1
    r = json.loads(lines[0])
    assert r['name'] == 'elm_fit' and FIELDS <= set(r) and r['max_rel_diff'] < 1e-6


def test_paper_cases_registered():
    expected = {'mackey_glass_rk4', 'cross_test_overhead', 'asymptotic_gram', 'elm_kernel_svr_predict', 'esvr_fit',
                'esvr_fit_1thread', 'esvr_vs_svr', 'esvr_nu_path_cv', 'nu_oelm_solve',
                'mkl_silp', 'mkl_newton', 'mkl_newton_20', 'mkl_scale', 'kos_throughput',
                'kos_vs_kelm',
                'elm_out_of_core', 'kelm_nystrom', 'kelm_nystrom_million', 'elm_fit_hpelm', 'elm_fit_hpelm_2threads'}
    assert expected <= set(ALL_CASES), expected - set(ALL_CASES)
    for name in ALL_CASES:
        assert bench.CASES[name].description, name


def test_import_stays_cheap():
    "Cases import the module they measure inside the case function: bench imports no paper module at its top level."
    import ast
    tree = ast.parse(open(bench.__file__).read())
    top = set()
    for node in tree.body:  # module level only (not inside functions)
        if isinstance(node, ast.Import): top |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module: top.add(node.module)
    paper = {'kelm_nb.datasets', 'kelm_nb.esvr', 'kelm_nb.nu_oelm', 'kelm_nb.mkl',
             'kelm_nb.kos_elm'}
    assert not top & paper, top & paper


def _family(name):
    "Cases registered in a loop share the prefix before their first dot ('nu_oelm_solve.sigmoid.nu0.1.n1000')."
    return name.split('.')[0] + '.*' if '.' in name else name


# the cases the tests run: every case with its own factory, and one case of each family registered in a loop (the
# same factory with other parameters); the full bench is `kelm-nb bench`, not a test
RUN_CASES = sorted(min((n for n in ALL_CASES if _family(n) == f), key=len) for f in {_family(n) for n in ALL_CASES})


def test_every_case_described_and_run_cases_cover_every_family():
    for name in ALL_CASES:
        assert bench.CASES[name].description, name
    assert {_family(n) for n in RUN_CASES} == {_family(n) for n in ALL_CASES}
    assert 'nu_oelm_solve' in RUN_CASES and any(n.startswith('nu_oelm_solve.') for n in RUN_CASES)


def _quick_once(name):
    """A case at its quick size with ours and the peer called once each (the harness' warm-up, repeats and timing
    are tested on the core cases): its quality figures, named as `run_case` names them."""
    case = bench.CASES[name].factory(quick=True)
    assert isinstance(case, BenchCase) and case.repeats >= 1, name
    assert case.threads is None or (isinstance(case.threads, int) and case.threads >= 1), name
    r_ours = case.ours()
    r_peer = case.peer() if case.peer is not None else None
    if case.floor is not None: case.floor()
    quality = case.quality(r_ours, r_peer) if case.quality is not None else {}
    return {f'quality_{k}' if k in RESERVED_FIELDS else k: _clean_number(v) for k, v in dict(quality).items()}


# Cases that a notebook runs in quick mode (`run_case` / `run_cases`: warm-up, repeats, timing) and whose result it
# checks with the quality figure of QUALITY below: the notebook test checks them, so test_every_case_quick does not
# run them a second time. Each entry names the notebook and the assertion it must hold (test_notebook_checks_quality).
CHECKED_IN_NOTEBOOK = {
    'elm_fit': ('08_bench.ipynb', "assert r['max_rel_diff'] < 1e-6"),
    'kelm_fit': ('08_bench.ipynb', "assert r['max_rel_diff'] < 1e-6"),
    'kelm_nystrom': ('08_bench.ipynb', "assert ny['nrmse_ratio_m2000'] < 1.2"),
    'elm_out_of_core': ('08_bench.ipynb', "assert ooc['peak_rss_mb'] < 2048 and ooc['max_coef_diff'] < 1e-8"),
    'mackey_glass_rk4': ('08_bench.ipynb', "assert mg['max_abs_diff_first_100'] < 1e-8"),
    'cross_test_overhead': ('08_bench.ipynb', "assert ct['max_abs_diff'] <= 1e-10 * ct['peer_mse']"),
    'esvr_fit': ('papers/04_zhu2014.ipynb', "assert r['max_rel_diff_floor'] < 1e-6"),
    'esvr_fit_1thread': ('papers/04_zhu2014.ipynb', "assert r['max_rel_diff_floor'] < 1e-6"),
    'esvr_nu_path_cv': ('papers/04_zhu2014.ipynb', "assert r['same_choice'] == 1.0 and r['max_rel_curve_diff'] < 1e-6"),
    'esvr_vs_svr': ('papers/04_zhu2014.ipynb', "assert 0.5 < r['rmse_ratio'] <= 1.0"),
    'mkl_silp': ('papers/06_li2014.ipynb', "assert quick['mkl_silp']['rel_objective_diff'] <= 1e-5"),
    'mkl_qcqp': ('papers/06_li2014.ipynb', "quick['mkl_qcqp']['rel_objective_diff'] <= 1e-5"),
    'mkl_newton': ('papers/06_li2014.ipynb', "assert quick['mkl_newton']['max_rel_objective_diff'] <= 1e-4"),
    'mkl_newton_20': ('papers/06_li2014.ipynb', "assert quick['mkl_newton_20']['max_rel_objective_diff'] <= 1e-4"),
    'mkl_scale': ('papers/06_li2014.ipynb', "assert quick['mkl_scale']['final_gap'] <= 1e-4"),
    'asymptotic_gram': ('papers/03_frenay2011.ipynb', "r['max_abs_diff_vs_numpy_eq16'] < 1e-13"),
    'elm_kernel_svr_predict': ('papers/03_frenay2011.ipynb', "assert r['max_abs_diff_vs_whole_kernel'] < 1e-8"),
}
NBS = Path(__file__).resolve().parents[1] / 'nbs'


def _checked_cells(notebook):
    "Source of the code cells that the notebook test runs (not '#| slow', not 'eval: false')."
    cells = json.loads((NBS / notebook).read_text())['cells']
    sources = (''.join(c['source']) for c in cells if c['cell_type'] == 'code')
    return [s for s in sources if not re.search(r'^#\|\s*(slow\b|eval:\s*false)', s, re.M)]


@pytest.mark.parametrize('name', sorted(CHECKED_IN_NOTEBOOK))
def test_notebook_checks_quality(name):
    "The notebook runs the case in quick mode through the harness and asserts its quality figure."
    notebook, assertion = CHECKED_IN_NOTEBOOK[name]
    cells = _checked_cells(notebook)
    runs = [s for s in cells if re.search(r'\brun_cases?\(', s) and f"'{name}'" in s   # IN_TEST: quick under test
            and re.search(r'quick=(True|IN_TEST)\b', s)]
    assert runs, f'{notebook} does not run {name} in quick mode'
    assert any(assertion in s for s in cells), f'{notebook} does not assert {assertion!r}'
    assert name in QUALITY


@pytest.mark.parametrize('name', [n for n in RUN_CASES if n not in CHECKED_IN_NOTEBOOK])
def test_every_case_quick(name):
    try:
        q = _quick_once(name)
    except bench._CaseSkipped as e:      # only an optional peer that is not installed
        pytest.skip(str(e))
    assert q, f'case {name} reports no quality figure'
    json.dumps(q, allow_nan=False)       # plain JSON numbers (non-finite ones became null)
    if name in QUALITY:
        assert QUALITY[name](q), q


# the quality figure each case must meet in quick mode (the same answer as its peer; never a timing)
QUALITY = {
    'elm_fit': lambda r: r['max_rel_diff'] < 1e-6,
    'kelm_fit': lambda r: r['max_rel_diff'] < 1e-6,
    'mackey_glass_rk4': lambda r: r['max_abs_diff_first_100'] < 1e-8,
    'cross_test_overhead': lambda r: r['max_abs_diff'] <= 1e-10 * r['peer_mse'],
    'asymptotic_gram': lambda r: r['max_abs_diff_vs_numpy_eq16'] < 1e-12 and r['symmetric'] and r['unit_diagonal'],
    'elm_kernel_svr_predict': lambda r: r['max_abs_diff_vs_whole_kernel'] < 1e-8,
    'esvr_fit': lambda r: r['max_rel_diff_floor'] < 1e-6,          # the same solution as its floor's
    'esvr_fit_1thread': lambda r: r['max_rel_diff_floor'] < 1e-6,
    'esvr_nu_path_cv': lambda r: r['max_rel_curve_diff'] < 1e-6,
    'esvr_vs_svr': lambda r: r['rmse_ratio'] <= 1.0,
    'nu_oelm_solve': lambda r: r['max_obj_excess_rel'] <= 1e-8,
    'mkl_silp': lambda r: r['rel_objective_diff'] <= 1e-5,
    'mkl_qcqp': lambda r: r['rel_objective_diff'] <= 1e-5,
    'mkl_newton': lambda r: r['max_rel_objective_diff'] <= 1e-4,
    'mkl_newton_20': lambda r: r['max_rel_objective_diff'] <= 1e-4,
    'mkl_scale': lambda r: r['final_gap'] <= 1e-4,
    'kelm_nystrom': lambda r: r['nrmse_ratio_m2000'] < 1.2,
    'kelm_nystrom_million': lambda r: r['test_nrmse'] < 0.7,
    'elm_out_of_core': lambda r: r['peak_rss_mb'] < 2048 and r['max_coef_diff'] < 1e-8,
    'elm_fit_hpelm': lambda r: 0.8 < r['rmse_ratio'] < 1.25,
    'kos_throughput': lambda r: r['ald_max_abs_diff'] < 1e-8 and r['fb_max_abs_diff'] < 1e-8,
    # the 2 % target is reported, not asserted
    'kos_vs_kelm': lambda r: r['nrmse_ratio'] <= 1.10 and r['dictionary'] < r['n_train'],
}


def test_quality_checks_name_registered_cases():
    assert set(QUALITY) <= set(RUN_CASES), set(QUALITY) - set(RUN_CASES)

"""kelm_nb.papers.li2014 on a plain install: its figures need no pandas (pandas is not a runtime requirement)."""
import numpy as np
import pytest

from kelm_nb.experiments import Table
from kelm_nb.papers import li2014 as L


def test_plot_timings_needs_no_pandas(monkeypatch):
    tables = [L.timing_vs_samples((100, 200), 100, 0), L.timing_vs_kernels(100, (2, 5), 0, 0),
              L.timing_vs_classes(100, (2, 5), 0, 0)]

    def no_pandas(self):
        raise ImportError('Table.to_frame() needs pandas')
    monkeypatch.setattr(Table, 'to_frame', no_pandas)
    fig = L.plot_timings(*tables)
    assert fig.get_label() == 'fig1_2_3_solver_times'
    assert [len(ax.lines) for ax in fig.axes] == [3, 3, 3]     # SILP, Newton and the QCQP drawn on each panel


@pytest.mark.parametrize('module', ['frenay2011', 'zhu2014', 'ding2017', 'li2014', 'scardapane2015'])
def test_papers_modules_never_import_pandas_at_top_level(module):
    import ast
    import importlib
    tree = ast.parse(open(importlib.import_module(f'kelm_nb.papers.{module}').__file__).read())
    top = {a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names}
    top |= {n.module for n in tree.body if isinstance(n, ast.ImportFrom) and n.module}
    assert 'pandas' not in top


def _fake_raw(n_splits):
    "A `run_table2_3` result for Thyroid with every method at 95 % (+ the split index) in 0.1 s."
    keys = {'mkl', 'meb', 'sk', 'elm'} | {k for k, _ in L.MKL_HELP_METHODS}
    return {'thyroid': [{k: {'tsa': 95.0 + s, 'time': 0.1} for k in keys} for s in range(n_splits)]}


@pytest.mark.parametrize('make', [L.table2, L.mkl_help_table])
def test_one_split_prints_n_1_and_says_quick(make):
    one, two = make(_fake_raw(1)), make(_fake_raw(2))
    assert 'quick mode: one random split per set' in one.title and '(n = 1)' in str(one)
    assert '± 0 ' not in str(one) and '± nan' not in str(one)
    assert 'quick mode: mean ± sd over 2 random splits' in two.title and '95.5 ± 0.7071' in str(two)
    assert 'full protocol' in make(_fake_raw(20)).title


def _paired_raw(diffs):
    "Thyroid splits where MKL-ELM beats the best single kernel by `diffs` points (every other method at 90 %)."
    keys = {'mkl', 'meb', 'sk', 'elm'} | {k for k, _ in L.MKL_HELP_METHODS}
    return {'thyroid': [{k: {'tsa': 90.0 + (d if k == 'mkl' else 0.0), 'time': 0.1} for k in keys} for d in diffs]}


def test_verdicts_are_paired_tests_beside_the_paper_rule():
    rows = {r['row']: r for r in L.mkl_verdict_table(_paired_raw([1.0, 2.0, 1.5, 3.0, 2.5, 1.0])).records()}
    row = rows['Thyroid: mkl - sk']
    assert row['verdict'] == 'better' and row['paper_rule'] == 'holds'
    assert abs(row['p_wilcoxon'] - 0.03125) < 1e-9 and row['p_paired_t'] < 0.01       # six positive differences
    rows = {r['row']: r for r in L.mkl_verdict_table(_paired_raw([1.0, -1.0, 0.5, -0.5, 0.0, 0.2])).records()}
    assert rows['Thyroid: mkl - sk']['verdict'] == 'no significant difference'
    assert rows['Thyroid: mkl_cv - sk']['p_paired_t'] == 1.0                              # identical: no difference
    one = L.mkl_verdict_table(_paired_raw([2.0]))
    assert {r['row']: r for r in one.records()}['Thyroid: mkl - sk']['verdict'] == 'untested (n = 1)'
    assert 'nan' not in str(one) and 'one random split' in one.title


def test_newton_floor_replays_the_recorded_passes():
    import numpy as np
    X = np.linspace(-1, 1, 40)[:, None]
    Ks = [np.exp(-g * (X - X.T) ** 2) for g in (0.1, 1.0, 10.0)]
    floor, r = L.newton_floor(Ks, np.sign(X[:, 0]))
    bank = L.RecordingBank(Ks)
    r2 = L.newton_mkl(bank, np.sign(X[:, 0]))
    assert sum(kind == 'combine' for kind, _ in bank.calls) == r.n_factorizations == r2.n_factorizations
    assert floor() is None


def test_twonorm_generator_matches_its_definition():
    rec = {r['row']: r for r in L.twonorm_check(50_000).records()}
    row = rec['Bayes rule sign(sum x): accuracy %']
    acc, se = row['bundled_data'], row['bundled_data_spread']
    assert abs(acc - rec['Bayes rule sign(sum x): accuracy %']['definition']) < 3 * se
    assert abs(rec['class +1: mean coordinate']['generator_sample'] - 2 / 20 ** 0.5) < 0.01


def test_per_split_records_round_trip_through_csv(tmp_path):
    raw = _fake_raw(3)
    for split in raw['thyroid']:
        split['mkl_nobias'].pop('time')                      # an untimed method: empty fit_s
    recs = L.per_split_records(raw)
    assert len(recs) == 3 * len(L.PER_SPLIT_METHODS)
    L.write_records(recs, tmp_path / 'r.csv')
    back = L.read_records(tmp_path / 'r.csv')
    assert back == recs and any(r['fit_s'] is None for r in back)
    assert L.table2(L.raw_from_records(back)).to_csv() == L.table2(raw).to_csv()


def test_per_split_from_store_refuses_a_missing_or_partial_store(tmp_path):
    with pytest.raises(ValueError, match='task store'):
        L.per_split_from_store(tmp_path / 'nothing here')
    from kelm_nb.experiments import TaskStore
    store = TaskStore(tmp_path)
    store.save('run_split', store.key('run_split', ('banana', 0, True)), {'mkl': {'tsa': 90.0}})
    with pytest.raises(ValueError, match='misses run_split'):
        L.per_split_from_store(tmp_path)


def test_committed_full_run_tables_come_from_the_per_split_file():
    from pathlib import Path
    full = Path(__file__).resolve().parents[1] / 'results' / 'full' / 'li2014'
    raw = L.raw_from_records(L.read_records(full / 'per-split-accuracy.csv'))
    assert all(len(r) == 20 for r in raw.values()) and set(raw) == set(L.PAPER_T1)
    assert L.table2(raw).to_csv() == next(full.glob('table-2-*.csv')).read_text(encoding='utf-8')
    assert L.mkl_help_table(raw).to_csv() == next(full.glob('does-mkl-help-*.csv')).read_text(encoding='utf-8')
    for md in full.glob('*.md'):
        assert '± 0 ' not in md.read_text(encoding='utf-8') and '± 0 |' not in md.read_text(encoding='utf-8'), md.name
    gaps = L.read_records(full / 'gap-variants-per-split.csv')
    table = L.gap_variants_table(gaps)
    assert 'full protocol: mean ± sd over 20 random splits' in table.title
    base = {(r['set'], r['split'], r['variant']): r['accuracy'] for r in gaps}
    for name, res in raw.items():                      # the variants' baselines are Table 2's fits, split for split
        for s, r in enumerate(res):
            assert base.get((name, s, 'baseline'), r['mkl']['tsa']) == r['mkl']['tsa']
            assert base.get((name, s, 'elm_baseline'), r['elm']['tsa']) == r['elm']['tsa']


def test_gap_variants_table_puts_each_variant_under_its_method():
    recs = [{'set': 'thyroid', 'split': s, 'variant': v, 'accuracy': 90.0 + s}
            for v in ('baseline', 'elm_baseline') for s in range(2)]
    rows = [r['row'] for r in L.gap_variants_table(recs).records()]
    assert rows == ['paper (Table 2, MKL-ELM)', 'baseline', 'paper (Table 2, ELM)', 'elm_baseline']
    one = L.gap_variants_table(recs[:1])
    assert '(n = 1)' in str(one) and 'quick mode: one random split' in one.title


def test_verdict_differences_show_no_rounding_noise():
    keys = {'mkl', 'meb', 'sk', 'elm'} | {k for k, _ in L.MKL_HELP_METHODS}
    raw = {'thyroid': [{k: {'tsa': 100 * (v + 1) / 77, 'time': 0.1} for k in keys} for v in (3, 40, 61)]}
    for s, split in enumerate(raw['thyroid']):
        split['mkl_cv']['tsa'] = 100 * (s * 7 + 4) / 77
        split['sk']['tsa'] = split['mkl_cv']['tsa'] + 1e-13              # equal up to rounding
    row = {r['row']: r for r in L.mkl_verdict_table(raw).records()}['Thyroid: mkl_cv - sk']
    assert row['difference'] == 0.0 and row['p_paired_t'] == 1.0


def test_waveform_bayes_error_in_row_blocks_equals_the_formula_on_all_rows():
    "The Monte Carlo estimate computed in blocks of rows is the one computed on all rows at once."
    from scipy.special import logsumexp
    from kelm_nb.papers import li2014 as L
    n, n_grid = 20_000, 51                     # three blocks
    err, se = L.waveform_bayes_error(n=n, n_grid=n_grid, random_state=3)
    h1, h2, h3 = L._waveform_bases()
    pairs = ((h1, h2), (h1, h3), (h2, h3))
    rng = np.random.default_rng(3)
    c, u = rng.integers(0, 3, n), rng.random(n)
    X = (u[:, None] * np.stack([pairs[k][0] for k in c]) + (1 - u[:, None]) * np.stack([pairs[k][1] for k in c])
         + rng.normal(size=(n, 21)))
    grid = np.linspace(0.0, 1.0, n_grid)
    log_w = np.log(np.r_[0.5, np.ones(n_grid - 2), 0.5] / (n_grid - 1))
    log_dens = np.empty((n, 3))
    for k, (a, b) in enumerate(pairs):
        means = grid[:, None] * a + (1 - grid[:, None]) * b
        d2 = (X ** 2).sum(1)[:, None] - 2 * X @ means.T + (means ** 2).sum(1)[None]
        log_dens[:, k] = logsumexp(-0.5 * d2 + log_w, axis=1)
    post = np.exp(log_dens - logsumexp(log_dens, axis=1, keepdims=True))
    ref = np.minimum(post, 1 - post)
    np.testing.assert_allclose(err, ref.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(se, ref.std(axis=0, ddof=1) / np.sqrt(n), rtol=1e-12)


@pytest.mark.parametrize('dtype', [np.float64, np.float32])
def test_meb_steps_compiled_match_numpy_steps(dtype):
    "The compiled pairwise Frank-Wolfe steps (through the package) take the NumPy steps, to the last bit."
    X = np.random.default_rng(2).normal(size=(70, 3))
    K = (sum(L.kernel_matrices(list(L.PAPER_KERNELS), X)[0]) / 4).astype(dtype)
    K64 = K.astype(np.float64)
    alpha = np.eye(70)[int(np.argmax(np.diag(K64)))]
    d, Ka = np.diag(K64).copy(), K64 @ alpha
    a_jit = alpha.copy()
    steps = L._pfw_steps(K64, d, a_jit, K64 @ a_jit, 1e-6, 100_000)
    for _ in range(steps):                      # the same steps in NumPy
        grad = d - 2.0 * Ka
        i = int(np.argmax(grad))
        support = np.flatnonzero(alpha > 0)
        j = support[np.argmin(grad[support])]
        curvature = K64[i, i] + K64[j, j] - 2.0 * K64[i, j]
        step = alpha[j] if curvature <= 0 else min(alpha[j], (grad[i] - grad[j]) / (2.0 * curvature))
        alpha[i] += step
        alpha[j] = max(alpha[j] - step, 0.0)
        Ka += step * (K64[i] - K64[j])
    assert 0 < steps < 100_000 and np.array_equal(a_jit, alpha)
    R2, a = L.meb_radius2(K)                    # float32 input is converted before the compiled steps
    np.testing.assert_allclose(R2, d @ a - a @ K64 @ a, rtol=1e-12)
    assert np.array_equal(a, a_jit)

"""Tests of kelm_nb.experiments with scikit-learn estimators: metrics vs definitions/sklearn, the cross-test
against a hand-written nested loop, repeated splits, the reproduction table, bad input."""
import numpy as np
import pytest
from scipy import stats
from sklearn.base import clone
from sklearn.datasets import make_classification, make_regression
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import r2_score
from sklearn.model_selection import KFold, ParameterGrid, ShuffleSplit, StratifiedShuffleSplit
from sklearn.svm import SVR
from threadpoolctl import threadpool_limits

from kelm_nb.experiments import (CrossTestResult, ReproductionTable, SplitResults, _scorer, cross_test, grid_search,
                                 mean_ci, nrmse, paired_ttest, repeated_splits)
from sklearn.metrics import mean_squared_error as mse, root_mean_squared_error as rmse, matthews_corrcoef as mcc


@pytest.fixture(autouse=True)
def _one_blas_thread():
    with threadpool_limits(1):
        yield


@pytest.fixture(scope='module')
def reg_data():
    X, y = make_regression(n_samples=48, n_features=3, noise=5.0, random_state=0)
    X = X * [1.0, 30.0, 0.01] + [0.0, 100.0, -3.0]   # very different scales: scaling matters
    return X, y * 7 + 500


# ---------------------------------------------------------------- metrics
def test_nrmse_matches_its_definition():
    rng = np.random.default_rng(1)
    y = rng.normal(3, 2, 100)
    p = y + rng.normal(0, 0.5, 100)
    # eq. 14: sqrt(sum (f - y)^2 / (|T| var(y)))
    np.testing.assert_allclose(nrmse(y, p), np.sqrt(np.sum((p - y) ** 2) / (100 * np.var(y))), rtol=1e-13)
    np.testing.assert_allclose(nrmse(y, p) ** 2, 1 - r2_score(y, p), rtol=1e-12)
    assert nrmse(y, np.full(100, y.mean())) == pytest.approx(1.0, rel=1e-12)
    # scale-free: NRMSE is unchanged by changing the units of y
    assert nrmse(1000 * y, 1000 * p) == pytest.approx(nrmse(y, p), rel=1e-12)


def test_nrmse_bad_input():
    with pytest.raises(ValueError, match='same length'):
        nrmse([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match='y must not be empty'):
        nrmse([], [])
    with pytest.raises(ValueError, match='y_pred contains NaN'):
        nrmse([1.0, 2.0], [1.0, np.nan])


def test_nrmse_constant_target():
    with pytest.raises(ValueError, match='variance'):
        nrmse([2.0, 2.0, 2.0], [1.0, 2.0, 3.0])


def test_mean_ci_and_scorer():
    v = np.array([3.0, 5.0, 4.0, 8.0, 1.0])
    m, h = mean_ci(v, 0.9)
    lo, hi = stats.t.interval(0.9, 4, loc=v.mean(), scale=stats.sem(v))
    np.testing.assert_allclose([m - h, m + h], [lo, hi], rtol=1e-12)
    assert np.isnan(mean_ci([2.0])[1])
    for bad in (0, 1, -0.5, 2):
        with pytest.raises(ValueError, match='confidence'):
            mean_ci(v, bad)
    X, y = make_regression(30, 2, random_state=0)
    est = Ridge().fit(X, y)
    assert _scorer('mse')(est, X, y) == pytest.approx(-mse(y, est.predict(X)))
    with pytest.raises(ValueError, match='metric'):
        _scorer('mae')


# ---------------------------------------------------------------- cross-test
def _manual(est, grid, X, y, k_out, k_in, rs=0):
    "The protocol by hand: standardise X and y with the statistics of the training part of every fit."
    errs, chosen = [], []
    def fit_predict(p, Xa, ya, Xb):
        mx, sx, my, sy = Xa.mean(0), Xa.std(0), ya.mean(), ya.std()
        m = clone(est).set_params(**p).fit((Xa - mx) / sx, (ya - my) / sy)
        return m.predict((Xb - mx) / sx) * sy + my
    for tr, te in KFold(k_out, shuffle=True, random_state=rs).split(X):
        Xt, yt = X[tr], y[tr]
        best, best_score = None, -np.inf
        for p in ParameterGrid(grid):
            s = np.mean([-np.mean((fit_predict(p, Xt[a], yt[a], Xt[b]) - yt[b]) ** 2)
                         for a, b in KFold(k_in, shuffle=True, random_state=rs).split(Xt)])
            if s > best_score: best, best_score = p, s
        chosen.append(best)
        errs.append(np.mean((fit_predict(best, Xt, yt, X[te]) - y[te]) ** 2))
    return np.array(errs), chosen


def test_cross_test_matches_hand_written_nested_loop(reg_data):
    X, y = reg_data
    grid = {'alpha': [0.01, 0.3, 3.0], 'gamma': [0.05, 0.5]}
    res = cross_test(KernelRidge(kernel='rbf'), grid, X, y, outer_folds=4, inner_folds=3, random_state=0)
    errs, chosen = _manual(KernelRidge(kernel='rbf'), grid, X, y, 4, 3)
    assert isinstance(res, CrossTestResult) and res.metric == 'mse'
    np.testing.assert_allclose(res.fold_errors, errs, rtol=1e-9)
    assert res.best_params == chosen
    m, h = mean_ci(errs)
    assert res.mse == pytest.approx(m) and res.ci == pytest.approx(h)
    assert res.interval == pytest.approx((m - h, m + h))
    assert res.time_s > 0 and res.fit_times.shape == (4,)


def test_cross_test_scaling_is_on_training_folds_only(reg_data):
    "Leaky scaling (statistics of the whole data set) gives different errors: the test above can fail."
    X, y = reg_data
    grid = {'alpha': [0.1], 'gamma': [0.5]}
    res = cross_test(KernelRidge(kernel='rbf'), grid, X, y, outer_folds=3, inner_folds=2)
    mx, sx, my, sy = X.mean(0), X.std(0), y.mean(), y.std()
    leaky = []
    for tr, te in KFold(3, shuffle=True, random_state=0).split(X):
        m = KernelRidge(kernel='rbf', alpha=0.1, gamma=0.5).fit((X[tr] - mx) / sx, (y[tr] - my) / sy)
        leaky.append(np.mean((m.predict((X[te] - mx) / sx) * sy + my - y[te]) ** 2))
    assert not np.allclose(res.fold_errors, leaky, rtol=1e-6)
    honest = _manual(KernelRidge(kernel='rbf'), grid, X, y, 3, 2)[0]
    np.testing.assert_allclose(res.fold_errors, honest, rtol=1e-9)


def test_cross_test_errors_in_original_units(reg_data):
    X, y = reg_data
    grid = {'alpha': [1.0]}
    r1 = cross_test(Ridge(), grid, X, y, outer_folds=3, inner_folds=2)
    r2 = cross_test(Ridge(), grid, X, 10 * y, outer_folds=3, inner_folds=2)
    np.testing.assert_allclose(r2.fold_errors, 100 * r1.fold_errors, rtol=1e-9)


def test_cross_test_parallel_equals_serial_and_other_metrics(reg_data):
    X, y = reg_data
    grid = {'C': [1.0, 10.0], 'epsilon': [0.1]}
    a = cross_test(SVR(), grid, X, y, outer_folds=3, inner_folds=2, n_jobs=1)
    b = cross_test(SVR(), grid, X, y, outer_folds=3, inner_folds=2, n_jobs=2)
    np.testing.assert_allclose(a.fold_errors, b.fold_errors, rtol=1e-12)
    c = cross_test(SVR(), grid, X, y, outer_folds=3, inner_folds=2, metric='nrmse', confidence=0.9)
    assert c.metric == 'nrmse' and 0 < c.mean < 1 and c.confidence == 0.9
    with pytest.raises(AttributeError, match='nrmse'):
        c.mse


def test_cross_test_classifier():
    X, y = make_classification(80, 4, random_state=0)
    res = cross_test(LogisticRegression(), {'C': [0.1, 1.0]}, X, y, outer_folds=3, inner_folds=2)
    assert res.metric == 'accuracy' and 0.6 < res.mean <= 1


def test_cross_test_bad_input(reg_data):
    X, y = reg_data
    est, grid = Ridge(), {'alpha': [1.0]}
    cases = [
        (dict(X=X[:, 0], y=y), ValueError, 'X'),
        (dict(X=X, y=y[:-1]), ValueError, 'X and y'),
        (dict(X=np.where(np.eye(48, 3) == 1, np.nan, X), y=y), ValueError, 'X'),
        (dict(X=X, y=np.r_[y[:-1], np.inf]), ValueError, 'y'),
        (dict(X=X, y=y, outer_folds=1), ValueError, 'outer_folds'),
        (dict(X=X, y=y, outer_folds=100), ValueError, 'outer_folds'),
        (dict(X=X, y=y, inner_folds=1), ValueError, 'inner_folds'),
        (dict(X=X, y=y, inner_folds=2.5), TypeError, 'inner_folds'),
        (dict(X=X, y=y, metric='mae'), ValueError, 'metric'),
        (dict(X=X, y=y, confidence=95), ValueError, 'confidence'),
        (dict(X=X, y=y, scale_X='robust'), ValueError, 'scale_X'),
    ]
    for kw, exc, name in cases:
        kw = {'estimator': est, 'param_grid': grid, **kw}
        with pytest.raises(exc, match=name):
            cross_test(**kw)
    with pytest.raises(ValueError, match='param_grid'):
        cross_test(est, {'lambda': [1.0]}, X, y)
    with pytest.raises(ValueError, match='param_grid'):
        cross_test(est, {'alpha': []}, X, y)
    with pytest.raises(ValueError, match='param_grid'):
        cross_test(est, [], X, y)
    with pytest.raises(TypeError, match='estimator'):
        cross_test(object(), grid, X, y)


# ---------------------------------------------------------------- grid search
def test_grid_search_matches_manual_kfold(reg_data):
    X, y = reg_data
    grid = {'alpha': [0.01, 1.0, 100.0]}
    gs = grid_search(Ridge(), grid, X, y, cv=4, random_state=1)
    manual = [np.mean([-mse(y[b], Ridge(alpha=a).fit(X[t], y[t]).predict(X[b]))
                       for t, b in KFold(4, shuffle=True, random_state=1).split(X)]) for a in grid['alpha']]
    np.testing.assert_allclose(gs.cv_results_['mean_test_score'], manual, rtol=1e-10)
    assert gs.best_params_bare_ == {'alpha': grid['alpha'][int(np.argmax(manual))]}
    gs2 = grid_search(Ridge(), grid, X, y, cv=4, scale_X=True, scale_y=True)
    assert set(gs2.best_params_) == {'regressor__model__alpha'} and set(gs2.best_params_bare_) == {'alpha'}
    with pytest.raises(ValueError, match='cv'):
        grid_search(Ridge(), grid, X, y, cv=1)
    with pytest.raises(ValueError, match='cv'):
        grid_search(Ridge(), grid, X, y, cv='five')


# ---------------------------------------------------------------- repeated splits
def test_repeated_splits_are_shared_and_paired(reg_data):
    X, y = reg_data
    ests = {'ridge': Ridge(alpha=1.0), 'krr': KernelRidge(kernel='rbf', alpha=0.1, gamma=0.3)}
    res = repeated_splits(ests, X, y, n_repeats=6, test_size=0.25, scaler=None, random_state=3)
    assert isinstance(res, SplitResults) and res.metric == 'rmse'
    splits = ShuffleSplit(6, test_size=0.25, random_state=3).split(X)
    manual = [rmse(y[b], Ridge(alpha=1.0).fit(X[a], y[a]).predict(X[b])) for a, b in splits]
    np.testing.assert_allclose(res.scores['ridge'], manual, rtol=1e-10)
    t, p = res.paired_ttest('ridge', 'krr')
    r = stats.ttest_rel(res.scores['ridge'], res.scores['krr'])
    assert t == pytest.approx(r.statistic) and p == pytest.approx(r.pvalue)
    assert paired_ttest(res.scores['ridge'], res.scores['krr']) == pytest.approx((t, p))
    assert set(res.summary()) == {'ridge', 'krr'} and res.fit_times['krr'].shape == (6,)
    assert 'ridge' in str(res.table())
    par = repeated_splits(ests, X, y, n_repeats=6, test_size=0.25, scaler=None, random_state=3, n_jobs=2)
    np.testing.assert_allclose(par.scores['krr'], res.scores['krr'], rtol=1e-12)
    with pytest.raises(ValueError, match='a='):
        res.paired_ttest('svr', 'krr')


def test_repeated_splits_classification_stratified():
    X, y = make_classification(120, 4, weights=[0.8], random_state=0)
    res = repeated_splits({'lr': LogisticRegression()}, X, y, n_repeats=4, test_size=0.5, metric='mcc')
    splits = StratifiedShuffleSplit(4, test_size=0.5, random_state=0).split(X, y)
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    manual = [mcc(y[b], make_pipeline(StandardScaler(), LogisticRegression()).fit(X[a], y[a]).predict(X[b]))
              for a, b in splits]
    np.testing.assert_allclose(res.scores['lr'], manual, rtol=1e-12)


def test_repeated_splits_bad_input(reg_data):
    X, y = reg_data
    with pytest.raises(ValueError, match='estimators'):
        repeated_splits({}, X, y)
    with pytest.raises(ValueError, match='estimators'):
        repeated_splits([Ridge()], X, y)
    with pytest.raises(ValueError, match='test_size'):
        repeated_splits({'r': Ridge()}, X, y, test_size=0)
    with pytest.raises(ValueError, match='n_repeats'):
        repeated_splits({'r': Ridge()}, X, y, n_repeats=0)
    with pytest.raises(ValueError, match='scaler'):
        repeated_splits({'r': Ridge()}, X, y, scaler='robust')
    with pytest.raises(ValueError, match='a and b'):
        paired_ttest([1.0, 2.0], [1.0, 2.0, 3.0])


# ---------------------------------------------------------------- reproduction table
def test_reproduction_table():
    t = ReproductionTable('Table VI', note='quick mode')
    t.add('Calhousing K-ELM', paper=(0.48, 0.001), ours=(0.5, 0.002), peer=0.49, note='fewer samples')
    t.add('Mackey-Glass ELM', paper=0.10, ours='skipped')
    t.add('only ours', ours=1.0)
    d = t.difference(0)
    assert d[0] == pytest.approx(0.02) and d[1] == pytest.approx(0.02 / 0.48)
    assert t.difference(1) is None and t.difference(2) is None
    s = str(t)
    for part in ('Table VI', 'paper', 'ours', 'peer', '0.48 ± 0.001', 'skipped', 'fewer samples', 'quick mode',
                 'ours − paper', '+0.02'):
        assert part in s, part
    h = t._repr_html_()
    assert h.count('<tr>') == 4 and '0.48 ± 0.001' in h
    df = t.to_frame()
    assert list(df.index) == ['Calhousing K-ELM', 'Mackey-Glass ELM', 'only ours']
    assert df.loc['Calhousing K-ELM', 'paper'] == 0.48 and df.loc['Calhousing K-ELM', 'paper_spread'] == 0.001
    assert df.loc['Calhousing K-ELM', 'difference'] == pytest.approx(0.02)
    rec = t.to_dict()['rows'][0]
    assert (rec['paper'], rec['paper_spread']) == (0.48, 0.001) and rec['difference'] == pytest.approx(0.02)
    assert '<' in ReproductionTable('a <b>').add('x', ours=1)._repr_html_()   # escaped, not raw markup
    assert '<b>' not in ReproductionTable('a <b>').add('x', ours=1)._repr_html_().replace('<b>a', '')


def test_reproduction_table_bad_input():
    t = ReproductionTable('t')
    with pytest.raises(ValueError, match='unknown column'):
        t.add('r', theirs=1.0)
    with pytest.raises(TypeError, match='ours'):
        t.add('r', ours=[1, 2])
    with pytest.raises(TypeError, match='ours'):
        t.add('r', ours=(1.0, 'x'))
    with pytest.raises(ValueError, match='columns'):
        ReproductionTable('t', columns=())
    with pytest.raises(ValueError, match='compare'):
        ReproductionTable('t', columns=('a', 'b'))
    with pytest.raises(TypeError, match='title'):
        ReproductionTable(None)
    assert 'ours − paper' not in str(ReproductionTable('t', columns=('a', 'b'), compare=None).add('r', a=1, b=2))


def test_cross_test_equals_sklearn_cross_validate_of_grid_search(reg_data):
    "Independent composition of the same protocol from scikit-learn parts gives identical fold errors."
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.model_selection import GridSearchCV, cross_validate
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler
    X, y = reg_data
    grid = {'C': [1.0, 10.0], 'gamma': [0.1, 1.0]}
    ours = cross_test(SVR(), grid, X, y, outer_folds=4, inner_folds=3, random_state=2)
    model = TransformedTargetRegressor(Pipeline([('s', StandardScaler()), ('m', SVR())]), transformer=StandardScaler())
    gs = GridSearchCV(model, {f'regressor__m__{k}': v for k, v in grid.items()},
                      cv=KFold(3, shuffle=True, random_state=2), scoring='neg_mean_squared_error')
    ref = cross_validate(gs, X, y, cv=KFold(4, shuffle=True, random_state=2), scoring='neg_mean_squared_error')
    np.testing.assert_allclose(ours.fold_errors, -ref['test_score'], rtol=1e-10)


def test_progress_bars_and_stratify(reg_data, capsys):
    X, y = reg_data
    cross_test(Ridge(), {'alpha': [1.0]}, X, y, outer_folds=3, inner_folds=2, progress=True)
    repeated_splits({'r': Ridge()}, X, y, n_repeats=2, progress=True)
    err = capsys.readouterr().err
    assert 'cross-test' in err and 'splits' in err
    cross_test(Ridge(), {'alpha': [1.0]}, X, y, outer_folds=3, inner_folds=2)
    assert capsys.readouterr().err == ''   # off by default
    with pytest.raises(ValueError, match='stratify'):
        repeated_splits({'r': Ridge()}, X, y, stratify=True)
    with pytest.raises(ValueError, match='stratify'):
        repeated_splits({'r': Ridge()}, X, y, stratify='yes')


# ---------------------------------------------------------------- the task store and the progress line
def _task_result(i):
    "A task returning the kinds of results the papers' tasks return."
    return {'acc': np.float64(0.5 + i), 'rmse_rounds': np.arange(3.0) * i, 0.1: (i, None, [float('nan'), 2]),
            'w': np.eye(2, dtype=np.float32), 'capped': np.bool_(i % 2), 'n': np.int64(i), 'label': f'run {i}'}


def _assert_identical(a, b):
    assert type(a) is type(b), (a, b)
    if isinstance(a, dict):
        assert list(a) == list(b)
        for k in a: _assert_identical(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for u, v in zip(a, b): _assert_identical(u, v)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b)
    else:
        assert a == b and np.asarray(a).dtype == np.asarray(b).dtype


def test_store_round_trip_and_resume(tmp_path):
    "A resumed run returns identical results (types, dtypes, bytes) and runs none of the stored tasks again."
    from kelm_nb.experiments import run_tasks, task_store
    tasks = [(i,) for i in range(4)]
    with task_store(tmp_path):
        first = run_tasks(_task_result, tasks, n_jobs=2, progress=False)
    assert len(list(tmp_path.rglob('*.json'))) == 4 and not list(tmp_path.rglob('*.pkl'))
    calls = []

    def _task_result_copy(i):               # a notebook's copy of the task: same name, found in the store
        calls.append(i)
        return _task_result(i)
    _task_result_copy.__qualname__ = '_task_result'
    with task_store(tmp_path):
        again = run_tasks(_task_result_copy, tasks + [(4,)], progress=False)
    assert calls == [4]
    for a, b in zip(first + [_task_result(4)], again): _assert_identical(a, b)


def test_store_never_executes_a_crafted_file(tmp_path):
    """A pickle planted in the store is never read; a JSON entry naming an object dtype, an unknown tag or a wrong
    header is refused with its file's name; nothing in an entry is imported or called."""
    import json
    import pickle
    from kelm_nb.experiments import TaskStore, run_tasks, task_store
    marker = tmp_path / 'pwned'

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), 'w'))
    store = TaskStore(tmp_path / 'store')
    key = store.key('_task_result', (1,))
    folder = tmp_path / 'store' / '_task_result'
    folder.mkdir()
    for name in (f'{key}.pkl', 'output.pkl', f'{key}.json.pkl'):
        (folder / name).write_bytes(pickle.dumps(Payload()))
    with task_store(tmp_path / 'store'):
        _assert_identical(run_tasks(_task_result, [(1,)], progress=False)[0], _task_result(1))
    assert not marker.exists()
    bad = [{'ndarray': '|O', 'shape': [1], 'b64': 'gAROLg=='},
           {'py/reduce': [{'py/function': 'os.system'}, {'tuple': ['touch pwned']}]},
           {'dict': [['x', {'numpy': '<f8', 'shape': [], 'b64': 'AAAA'}]]}]      # 3 bytes for an 8-byte float
    for result in bad:
        (folder / f'{key}.json').write_text(json.dumps({'format': 1, 'task': '_task_result', 'key': key,
                                                        'result': result}))
        with task_store(tmp_path / 'store'), pytest.raises(ValueError, match='not a valid task-store entry'):
            run_tasks(_task_result, [(1,)], progress=False)
    (folder / f'{key}.json').write_text(json.dumps({'format': 1, 'task': 'other', 'key': key, 'result': 1}))
    with task_store(tmp_path / 'store'), pytest.raises(ValueError, match='header'):
        run_tasks(_task_result, [(1,)], progress=False)
    assert not marker.exists()


def _returns_a_model(i):
    return Ridge()


def test_store_refuses_what_it_cannot_give_back(tmp_path):
    from kelm_nb.experiments import run_tasks, task_store
    with task_store(tmp_path), pytest.raises(TypeError, match='does not keep'):
        run_tasks(_returns_a_model, [(1,)], progress=False)
    with task_store(tmp_path), pytest.raises(TypeError, match='module-level function'):
        run_tasks(_task_result, [(lambda: 1,)], progress=False)
    assert run_tasks(_returns_a_model, [(1,)], progress=False)[0].alpha == 1.0      # no store: anything goes


def test_store_keys_follow_the_arguments(tmp_path):
    from kelm_nb.experiments import TaskStore
    s = TaskStore(tmp_path)
    X = np.arange(6.0).reshape(3, 2)
    assert s.key('t', (Ridge(alpha=1.0), X, {'a': 1, 'b': 2})) == s.key('t', (Ridge(alpha=1.0), X.copy(),
                                                                              {'b': 2, 'a': 1}))
    others = [('u', (Ridge(alpha=1.0), X, {'a': 1, 'b': 2})), ('t', (Ridge(alpha=2.0), X, {'a': 1, 'b': 2})),
              ('t', (Ridge(alpha=1.0), X + 1, {'a': 1, 'b': 2})), ('t', (Ridge(alpha=1.0), X, {'a': 1, 'b': 3})),
              ('t', (Ridge(alpha=1.0), X.astype(np.float32), {'a': 1, 'b': 2}))]
    keys = {s.key(n, a) for n, a in others}
    assert len(keys) == len(others) and s.key('t', (Ridge(alpha=1.0), X, {'a': 1, 'b': 2})) not in keys


def test_progress_line_off_a_terminal(reg_data):
    "Inside task_progress every run_tasks call counts into one line; off a terminal a plain line, no carriage return."
    import io
    from kelm_nb.experiments import task_progress
    X, y = reg_data
    buf = io.StringIO()
    with task_progress('toy', file=buf, interval=0.0):
        cross_test(Ridge(), {'alpha': [0.5, 1.0]}, X, y, outer_folds=3, inner_folds=2)
    lines = buf.getvalue().splitlines()
    assert '\r' not in buf.getvalue() and lines[-1].startswith('toy: 9/9 tasks, ')
    assert 'elapsed, ETA' in lines[-1] and len(lines) >= 2


def test_one_split_prints_n_equals_1():
    from kelm_nb.experiments import Table, ci_cell
    t = Table('t', ('a',)).add('one', a=ci_cell([0.25])).add('three', a=ci_cell([0.25, 0.5, 0.75]))
    text = str(t)
    assert '0.25 (n = 1)' in text and '± 0 ' not in text and '0.5 ± ' in text
    one = SplitResults('rmse', {'m': np.array([0.3])}, {'m': np.array([0.01])})
    assert one.table().rows[0]['values']['ci'] == 'n = 1' and '(n = 1)' in repr(one)

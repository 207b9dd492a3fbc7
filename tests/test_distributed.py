"""Beyond one machine: the protocols on a Dask LocalCluster give the single-process numbers, a killed
worker loses no finished task, `kelm-nb reproduce --scheduler local --out` resumes, `--scheduler local` listens on
the loopback interface without a dashboard, a dead scheduler address is a one-line error, and the ELM family fits
Dask arrays to the in-memory coefficients."""
import json
import os
import signal
import sys
import threading
import time
import types
import urllib.error
import urllib.request

import numpy as np
import pytest

dask = pytest.importorskip('dask', reason='the dask extra (pip install "kelm_nb[dask]") is part of [dev]')
import dask.array as da  # noqa: E402
import joblib  # noqa: E402
from dask.distributed import Client, LocalCluster  # noqa: E402
from sklearn.datasets import make_friedman1  # noqa: E402
from sklearn.kernel_ridge import KernelRidge  # noqa: E402

from kelm_nb import ELMClassifier, ELMRegressor, KernelELMRegressor  # noqa: E402
from kelm_nb.core import limit_blas_threads  # noqa: E402
from kelm_nb.experiments import Paper, cross_test, repeated_splits, run_tasks, task_store  # noqa: E402


@pytest.fixture(scope='module')
def client():
    "Two single-threaded worker processes, as `--scheduler local` starts them on this 2-core machine."
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=':0') as cluster, \
            Client(cluster) as c:
        yield c


def _data():
    X, y = make_friedman1(90, noise=0.3, random_state=0)
    return X, y


GRID = {'alpha': [0.1, 1.0], 'gamma': [0.05, 0.5]}


def test_distributed_cross_test_equals_single_process(client):
    """The same folds, grid points and choices; errors equal to rounding (1e-15 relative was measured: the workers'
    arrays arrive by pickling, and floating-point reductions depend on memory alignment and BLAS threads)."""
    X, y = _data()
    with limit_blas_threads(1):
        single = cross_test(KernelRidge(kernel='rbf'), GRID, X, y, outer_folds=3, inner_folds=3, progress=False)
    with joblib.parallel_config(backend='dask'):
        dist = cross_test(KernelRidge(kernel='rbf'), GRID, X, y, outer_folds=3, inner_folds=3, n_jobs=-1,
                          progress=False)
    np.testing.assert_allclose(dist.fold_errors, single.fold_errors, rtol=1e-12)
    assert dist.best_params == single.best_params


def test_distributed_repeated_splits_equals_single_process(client):
    X, y = _data()
    models = {'krr': KernelRidge(kernel='rbf', gamma=0.2), 'elm': ELMRegressor(50, random_state=0)}
    with limit_blas_threads(1):
        single = repeated_splits(models, X, y, n_repeats=4, progress=False)
    with joblib.parallel_config(backend='dask'):
        dist = repeated_splits(models, X, y, n_repeats=4, n_jobs=-1, progress=False)
    for k in models:
        np.testing.assert_allclose(dist.scores[k], single.scores[k], rtol=1e-12)


def _logged_square(x, log):
    "A slow task that records each execution in `log` (one line per run)."
    time.sleep(0.3)
    with open(log, 'a') as f:
        f.write(f'{x}\n')
    return x * x


def test_killed_worker_loses_no_finished_task(client, tmp_path):
    log = str(tmp_path / 'executions.log')
    open(log, 'w').close()
    tasks = [(i, log) for i in range(16)]
    victim = sorted(client.scheduler_info()['workers'])[0]
    victim_pid = client.run(os.getpid, workers=[victim])[victim]

    def kill_when_half_done():
        while len(open(log).read().split()) < 6:
            time.sleep(0.05)
        os.kill(victim_pid, signal.SIGKILL)                        # the process dies without cleaning up

    killer = threading.Thread(target=kill_when_half_done)
    with task_store(tmp_path / 'store'), joblib.parallel_config(backend='dask'):
        killer.start()
        results = run_tasks(_logged_square, tasks, n_jobs=-1, progress=False)
        killer.join()
    assert results == [i * i for i in range(16)]
    with pytest.raises(ProcessLookupError):
        os.kill(victim_pid, 0)                                     # the victim really died during the run
    executions = open(log).read().split()
    assert sorted(set(map(int, executions))) == list(range(16))
    assert len(executions) <= 16 + 2            # at most the victim's task in flight ran twice
    # every finished task is in the store: a rerun executes nothing
    with task_store(tmp_path / 'store'):
        assert run_tasks(_logged_square, tasks, progress=False) == results
    assert open(log).read().split() == executions


def _paper_reproduce(full=False, n_jobs=1, random_state=0):
    "A stand-in paper: one cross-test (quick grid) as a table."
    from kelm_nb.experiments import ReproductionTable
    X, y = _data()
    res = cross_test(KernelRidge(kernel='rbf'), GRID, X, y, outer_folds=3, inner_folds=3, n_jobs=n_jobs,
                     random_state=random_state)
    return [ReproductionTable('stand-in: cross-test MSE').add('KRR', ours=(res.mean, res.ci))]


@pytest.fixture
def stand_in_paper(monkeypatch):
    from kelm_nb import cli
    monkeypatch.setitem(sys.modules, 'kelm_nb.papers.standin2026',
                        types.SimpleNamespace(reproduce=_paper_reproduce))
    monkeypatch.setattr(cli, 'PAPERS', {'standin2026': Paper('standin2026', 'A stand-in', 'kelm_nb.core')})


def test_reproduce_on_local_cluster_equals_single_process_and_resumes(stand_in_paper, tmp_path, capsys):
    from kelm_nb.cli import main
    assert main(['reproduce', 'standin2026', '--out', str(tmp_path / 'single'), '--no-progress']) == 0
    assert main(['reproduce', 'standin2026', '--scheduler', 'local', '--out', str(tmp_path / 'dask'),
                 '--no-progress']) == 0
    rows = {k: json.loads((tmp_path / k / 'summary.json').read_text())['papers'][0]['items'][0]['data']['rows'][0]
            for k in ('single', 'dask')}
    # equal to rounding: this process runs BLAS on two threads, Dask's workers on one (summation order differs)
    np.testing.assert_allclose([rows['dask']['ours'], rows['dask']['ours_spread']],
                               [rows['single']['ours'], rows['single']['ours_spread']], rtol=1e-12)
    stored = list((tmp_path / 'dask' / '.tasks' / 'standin2026').rglob('*.json'))
    assert len(stored) == 3 * 4 + 3          # (outer fold, grid point) tasks and the refits, all kept
    assert not list((tmp_path / 'dask').rglob('*.pkl'))
    # a second run in the same folder takes every task from the store
    assert main(['reproduce', 'standin2026', '--out', str(tmp_path / 'dask'), '--no-progress']) == 0
    assert json.loads((tmp_path / 'dask' / 'summary.json').read_text())['papers'][0]['items'][0]['data']['rows'][0] \
        == rows['dask']                      # the stored task results, bit for bit


def _http_hosts(dask_scheduler):
    "The interfaces the scheduler's HTTP server listens on."
    return sorted({sock.getsockname()[0] for sock in dask_scheduler.http_server._sockets.values()})


def test_local_scheduler_listens_on_loopback_without_dashboard(capsys):
    from distributed import get_client
    from kelm_nb.cli import dask_scheduler
    with dask_scheduler('local') as n_jobs:
        c = get_client()
        info = c.scheduler_info()
        assert n_jobs == -1 and c.scheduler.address.startswith('tcp://127.0.0.1:')
        assert info['workers'] and all(w.startswith('tcp://127.0.0.1:') for w in info['workers'])
        # the scheduler's HTTP endpoint (health checks) listens on the loopback interface and serves no dashboard
        assert c.run_on_scheduler(_http_hosts) == ['127.0.0.1']
        port = info['services']['dashboard']
        with pytest.raises(urllib.error.HTTPError, match='404'):
            urllib.request.urlopen(f'http://127.0.0.1:{port}/status', timeout=5)
    assert 'Dask scheduler: tcp://127.0.0.1:' in capsys.readouterr().err


def test_dead_scheduler_address_is_a_one_line_error(stand_in_paper, capsys):
    from kelm_nb.cli import main
    t0 = time.monotonic()
    assert main(['reproduce', 'standin2026', '--scheduler', 'tcp://127.0.0.1:1', '--no-progress']) == 2
    seconds = time.monotonic() - t0
    err = capsys.readouterr().err
    assert seconds <= 10, f'{seconds:.1f} s to give up on a dead scheduler'
    assert err.strip() == ('kelm-nb reproduce: error: no Dask scheduler answers at tcp://127.0.0.1:1 within 8 s '
                           '(OSError)'), err
    assert 'Traceback' not in err


@pytest.mark.parametrize('make', [lambda: ELMRegressor(80, random_state=0),
                                  lambda: KernelELMRegressor(gamma=0.2, solver='nystrom', n_components=60,
                                                             random_state=0)])
def test_dask_array_fit_equals_numpy_fit(client, make):
    X, y = make_friedman1(3000, noise=0.3, random_state=2)
    ref = make().fit(X, y)
    dk = make().fit(da.from_array(X, chunks=(500, 5)), da.from_array(y, chunks=500))
    weights = lambda m: m.coef_ if hasattr(m, 'coef_') else m.dual_coef_      # ELM / Nyström kernel ELM
    np.testing.assert_allclose(weights(dk), weights(ref), rtol=1e-10, atol=1e-10 * np.abs(weights(ref)).max())
    pred = dk.predict(da.from_array(X, chunks=(700, 5)))
    assert isinstance(pred, da.Array)
    np.testing.assert_allclose(pred.compute(), ref.predict(X), rtol=1e-9, atol=1e-9)


def test_dask_classifier_fit_equals_numpy_fit(client):
    X, y = make_friedman1(2000, noise=0.3, random_state=3)
    labels = np.where(y > np.median(y), 'high', 'low')
    ref = ELMClassifier(60, random_state=0).fit(X, labels)
    dk = ELMClassifier(60, random_state=0).fit(da.from_array(X, chunks=(300, 5)), da.from_array(labels, chunks=300))
    np.testing.assert_allclose(dk.coef_, ref.coef_, rtol=1e-10, atol=1e-10 * np.abs(ref.coef_).max())
    assert (dk.predict(da.from_array(X, chunks=(300, 5))).compute() == ref.predict(X)).all()

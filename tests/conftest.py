"""Shared pytest configuration for kelm_nb.

* ``--slow`` (or the environment variable ``KELM_NB_SLOW=1``) also runs the notebook cells marked ``#| slow``
  (the papers' full-size reproductions) and the tests marked ``@pytest.mark.slow``; both are skipped by default.
* ``--fast`` runs the edit-test loop's subset (``python -m pytest --fast``): the library's unit tests, without the
  modules in ``WHOLE_RUNS`` (every notebook executed, the docs site built and browsed, the fuzz runs, the
  benchmarks, the papers' protocols, the command line's reproductions and the Dask cluster), without
  scikit-learn's estimator checks (``test_sklearn_compatible``, some 2,900 cases) and without the tests marked
  ``@pytest.mark.whole`` (sweeps over a paper's whole grid), which the full run keeps. Most of its time with an
  empty numba cache is compilation: ``NUMBA_CACHE_DIR=<a folder of your own>`` keeps the compiled kernels from one
  run to the next (only when it is unset does each session get a fresh folder).
* The suite runs on every core (pytest-xdist: ``-n auto --dist loadgroup`` in ``pytest.ini``; ``-n 0`` for one
  process). The modules in ``SHARED_FIXTURES`` build something once for all their tests (the docs site, a Dask
  cluster, benchmark results), so each of them runs whole on one worker: ``pytest_xdist_make_scheduler`` below
  makes every such module one work unit, from the test ids alone (an ``xdist_group`` mark is not enough: see that
  hook). Every other test, each notebook included, goes to whichever worker is free. xdist hands out the modules
  of SHARED_FIXTURES first (most tests first), then the other tests in collection order, and the notebooks come
  first in it, the longest first (``_notebooks_first``; their order is test_notebooks.py's): the many short unit
  tests fill in behind them, so that no long notebook starts last and runs on alone.
* Threads: in one process numba gets one thread per usable core (``NUMBA_NUM_THREADS``); under pytest-xdist each
  worker gets its share of the cores (cores // workers: one on a 2-core machine) for numba and for BLAS
  (``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS``), since two workers each running two BLAS
  threads on two cores make small factorisations 10-15x slower (threads spin waiting for each other). A variable
  the caller set is kept. numba also gets a fresh cache folder (``NUMBA_CACHE_DIR``) for the session unless one is
  set, so stale caches never bite. All are set here, before anything imports NumPy or numba, and are inherited by
  the notebook subprocesses.
"""
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest


def _usable_cores():
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _threads_per_process():
    "The usable cores shared out among the pytest-xdist workers (all of them without xdist)."
    workers = int(os.environ.get('PYTEST_XDIST_WORKER_COUNT') or 1)
    return max(1, _usable_cores() // max(1, workers))


THREAD_VARIABLES = ('NUMBA_NUM_THREADS', 'OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS')
if os.environ.get('PYTEST_XDIST_WORKER'):
    for _name in THREAD_VARIABLES: os.environ.setdefault(_name, str(_threads_per_process()))
_OWN_NUMBA_CACHE = None
if not os.environ.get('NUMBA_CACHE_DIR'):
    _OWN_NUMBA_CACHE = tempfile.mkdtemp(prefix='kelm_nb_numba_')
    os.environ['NUMBA_CACHE_DIR'] = _OWN_NUMBA_CACHE


def _env_true(name):
    return os.environ.get(name, '').strip().lower() not in ('', '0', 'false', 'no', 'off')


WHOLE_RUNS = ('test_notebooks.py', 'test_docs.py', 'test_fuzz.py', 'test_bench.py', 'test_cli.py',
              'test_distributed.py', 'test_papers_')


SHARED_FIXTURES = ('test_docs.py', 'test_distributed.py', 'test_bench.py')


def pytest_addoption(parser):
    parser.addoption('--slow', action='store_true', default=False,
                     help="also run '#| slow' notebook cells and @pytest.mark.slow tests (or set KELM_NB_SLOW=1)")
    parser.addoption('--fast', action='store_true', default=False,
                     help='only the unit tests: leave out the whole runs (notebooks, docs, fuzz, bench, papers, CLI) '
                          'and the scikit-learn estimator checks')


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    if not os.environ.get('PYTEST_XDIST_WORKER') and not config.pluginmanager.hasplugin('dsession'):
        os.environ.setdefault('NUMBA_NUM_THREADS', str(_usable_cores()))  # one process runs every test
    config.addinivalue_line('markers', 'slow: long-running test, skipped unless --slow or KELM_NB_SLOW=1')
    config.addinivalue_line('markers', 'whole: a sweep the full suite runs and --fast leaves out')


def run_slow(config):
    "True when slow notebook cells and slow tests should run."
    return bool(config.getoption('--slow')) or _env_true('KELM_NB_SLOW')


def _deselect_whole_runs(config, items):
    "With --fast, drop the modules named in WHOLE_RUNS, scikit-learn's estimator checks and the `whole` sweeps."
    if not config.getoption('--fast'): return
    kept, dropped = [], []
    for item in items:
        whole = (item.path.name.startswith(WHOLE_RUNS) or item.name.startswith('test_sklearn_compatible')
                 or item.get_closest_marker('whole') is not None)
        (dropped if whole else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def _shared_fixture_scope(nodeid, default):
    "The work unit of a test: its module's path for the modules of SHARED_FIXTURES, else `default`."
    module = nodeid.split('::', 1)[0]
    return module if Path(module).name in SHARED_FIXTURES else default


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """With ``--dist loadgroup``, xdist's group scheduler that also keeps each module of SHARED_FIXTURES whole.

    The grouping is decided here, on the controller, from the test ids alone. xdist's own ``xdist_group`` mark
    only works where the worker may rewrite a test's id (``nodeid@group``); pytest 9.2 keeps ids in a structured
    form that this rewrite no longer reaches, so the mark alone leaves every test a work unit of its own.
    """
    if config.getvalue('dist') != 'loadgroup': return None
    from xdist.scheduler import LoadGroupScheduling

    class SharedFixtureScheduling(LoadGroupScheduling):
        def _split_scope(self, nodeid):
            scope = super()._split_scope(nodeid)  # an `xdist_group` mark's name, where xdist could add it
            return _shared_fixture_scope(nodeid, scope) if scope == nodeid else scope

    return SharedFixtureScheduling(config, log)


def _notebooks_first(items):
    "The notebook runs first (longest first, in test_notebooks.py's order): the other tests fill in after them."
    items.sort(key=lambda item: item.path.name != 'test_notebooks.py')   # a stable sort


def pytest_collection_modifyitems(config, items):
    _deselect_whole_runs(config, items)
    _notebooks_first(items)
    if run_slow(config): return
    skip = pytest.mark.skip(reason='slow: run with --slow or KELM_NB_SLOW=1')
    for item in items:
        if item.get_closest_marker('slow') is not None: item.add_marker(skip)


@pytest.fixture(scope='session')
def slow_enabled(pytestconfig):
    "Whether this session runs the slow parts (``--slow`` / ``KELM_NB_SLOW``)."
    return run_slow(pytestconfig)


@pytest.fixture(scope='session')
def console_script():
    "Path of the installed `kelm-nb` console script (next to this Python, else on PATH)."
    exe = Path(sys.executable).with_name('kelm-nb')
    found = str(exe) if exe.exists() else shutil.which('kelm-nb')
    if found is None:
        pytest.fail("the console script kelm-nb is not installed: run pip install -e '.[dev]'")
    return found


def pytest_unconfigure(config):
    if _OWN_NUMBA_CACHE is not None:
        shutil.rmtree(_OWN_NUMBA_CACHE, ignore_errors=True)

"""Shared pytest configuration for kelm_nb.

* ``--slow`` (or the environment variable ``KELM_NB_SLOW=1``) also runs the notebook cells marked ``#| slow``
  (the papers' full-size reproductions) and the tests marked ``@pytest.mark.slow``; both are skipped by default.
* ``--fast`` runs the edit-test loop's subset (``python -m pytest --fast``): the library's unit tests, without the
  modules in ``WHOLE_RUNS`` (every notebook executed, the docs site built and browsed, the fuzz runs, the
  benchmarks, the papers' protocols, the command line's reproductions and the Dask cluster), without
  scikit-learn's estimator checks (``test_sklearn_compatible``, some 2,900 cases) and without the tests marked
  ``@pytest.mark.whole`` (sweeps over a paper's whole grid), which the full run keeps. Most of its time with an
  empty numba cache is compilation: ``NUMBA_CACHE_DIR=<a folder of your own>`` keeps the compiled kernels from one
  run to the next (only when it is unset does each session get a fresh folder). Measured with two workers: with
  a kept cache 152 CPU-s in all (62 and 67 per worker), about 70 s on two free cores, within the loop's 2 minutes;
  with an empty cache 205 CPU-s in the tests (whole worker processes 114 and 112, collection included, so about
  1.9 minutes), the extra being compilation.
* ``--cpu-durations N`` prints, after the run, the CPU seconds summed over all tests, each worker process's own total
  and the N tests that took most CPU (0: every test); ``--cpu-json FILE`` writes every test's figure to FILE. A
  test's CPU seconds are those of its process and of the child processes it waited for, over setup, call and
  teardown (a session fixture counts in the first test that uses it), plus, for a notebook, its forked process's
  (``tests/test_notebooks.py`` reports them). Unlike wall times, they hardly depend on what else the machine runs.
* The suite runs on every core (pytest-xdist: ``-n auto --dist loadgroup`` in ``pytest.ini``; ``-n 0`` for one
  process). The modules in ``SHARED_FIXTURES`` build something once for all their tests (the docs site, a Dask
  cluster, benchmark results), so each of them runs whole on one worker: ``pytest_xdist_make_scheduler`` below
  makes every such module one work unit (and each parametrised test of ``SAME_WORKER``: its cases compile the same
  numba kernels), from the test ids alone (an ``xdist_group`` mark is not enough: see that
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
import json
import os
import resource
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
# Parametrised tests whose cases compile the same numba kernels (with an empty cache, seconds each): one work unit
# each, so the kernels compile once in one worker instead of at the same time in both.
SAME_WORKER = ('tests/test_mkl.py::test_gaussian_bank_jitted[',)


def pytest_addoption(parser):
    parser.addoption('--slow', action='store_true', default=False,
                     help="also run '#| slow' notebook cells and @pytest.mark.slow tests (or set KELM_NB_SLOW=1)")
    parser.addoption('--cpu-durations', type=int, default=None, metavar='N',
                     help='show the N tests that took most CPU seconds (0: all) and the sum over all tests')
    parser.addoption('--cpu-json', default=None, metavar='FILE',
                     help="write every test's CPU seconds (setup + call + teardown, children included) to FILE")
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
    """The work unit of a test: its module's path for the modules of SHARED_FIXTURES, the test's name without its
    parameters for those of SAME_WORKER, else `default`."""
    module = nodeid.split('::', 1)[0]
    if Path(module).name in SHARED_FIXTURES: return module
    return next((prefix for prefix in SAME_WORKER if nodeid.startswith(prefix)), default)


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


def _cpu_now():
    "CPU seconds of this process and of its finished (waited-for) child processes."
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    item._kelm_cpu_mark = _cpu_now()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Each phase's report carries ``cpu_s``: the CPU seconds this process and its finished children spent in it.

    A fixture whose child process already reported its CPU seconds as the test's ``cpu_s`` property (the notebook
    runner) adds them to ``config._kelm_cpu_counted`` before that child is reaped, so they count once."""
    outcome = yield
    now = _cpu_now()
    counted = item.config.__dict__.pop('_kelm_cpu_counted', 0.0)
    before = getattr(item, '_kelm_cpu_mark', now)
    item._kelm_cpu_mark = now
    rep = outcome.get_result()
    rep.cpu_s = round(now - before - counted, 3)
    rep.cpu_worker = os.environ.get('PYTEST_XDIST_WORKER', 'main')


_CPU = {}
_WORKER_CPU = {}


def pytest_runtest_logreport(report):
    "On the controller (or the one process): add up each test's CPU seconds over its phases."
    cpu = getattr(report, 'cpu_s', None)
    if cpu is None: return
    if report.when == 'call': cpu += sum(v for k, v in report.user_properties if k == 'cpu_s')
    entry = _CPU.setdefault(report.nodeid, dict(cpu_s=0.0, wall_s=0.0, worker=report.cpu_worker))
    entry['cpu_s'] = round(entry['cpu_s'] + cpu, 3)
    entry['wall_s'] = round(entry['wall_s'] + report.duration, 3)


def pytest_sessionfinish(session):
    if hasattr(session.config, 'workeroutput'): session.config.workeroutput['kelm_cpu_s'] = _cpu_now()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    if 'kelm_cpu_s' in getattr(node, 'workeroutput', {}):
        _WORKER_CPU[node.gateway.id] = round(node.workeroutput['kelm_cpu_s'], 1)


def pytest_terminal_summary(terminalreporter, config):
    "With --cpu-durations N: the sum of the tests' CPU seconds, each worker's, and the N tests that took most."
    top, path = config.getoption('--cpu-durations'), config.getoption('--cpu-json')
    if not _WORKER_CPU: _WORKER_CPU['main'] = round(_cpu_now(), 1)
    if path: Path(path).write_text(json.dumps(dict(tests=_CPU, workers=_WORKER_CPU), indent=1))
    if top is None or not _CPU: return
    rows = sorted(_CPU.items(), key=lambda kv: -kv[1]['cpu_s'])
    total = sum(v['cpu_s'] for _, v in rows)
    workers = ', '.join(f'{k} {v:.1f}' for k, v in sorted(_WORKER_CPU.items()))
    terminalreporter.write_sep('=', f'CPU seconds: {total:.1f} in {len(rows)} tests; whole processes: {workers}')
    for nodeid, v in (rows if top == 0 else rows[:top]):
        terminalreporter.write_line(f"{v['cpu_s']:8.1f} CPU-s {v['wall_s']:8.1f} s  {v['worker']:5}  {nodeid}")

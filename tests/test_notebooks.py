"""Execute every notebook in nbs/ through nbdev's own test machinery, one pytest test per notebook.

Each notebook runs in a fresh Python process calling ``nbdev.test.test_nb`` exactly as ``nbdev_test`` does:
cells flagged with the project's ``tst_flags`` (``slow``) are skipped unless ``--slow``/``KELM_NB_SLOW=1``,
``IN_TEST`` is set, the notebook's folder is the working directory and the project root is on ``sys.path``.
A process per notebook keeps notebooks from sharing state (imported modules, environment, numba threads)
and lets a crash or a hang fail one test only.

The processes start warm: each pytest process keeps one runner (``_RUNNER``) that imports what the notebooks
import (NumPy, SciPy, scikit-learn, numba, pandas, Matplotlib, IPython, nbdev and ``kelm_nb``), some 4 CPU-s,
once, and then forks one child per notebook. The child is a copy of that runner taken before any notebook ran,
so notebooks still share nothing; it gets the test's environment, a fresh NumPy seed and its own process group
(killed whole on a timeout), and its output goes to files that a failure shows (nbdev's traceback of the failing
cell). It ends as a normal exit would (atexit handlers, flushed streams) but without the interpreter's
module-by-module teardown (``leave``). The runner never runs numba code itself: a fork after numba's GNU OpenMP
threads start would be unsafe. Compiled kernels still pass from one notebook to the next through the numba cache
(``NUMBA_CACHE_DIR``, one folder for the whole session: see ``conftest.py``). A method notebook's own kernels
load the package's compiled code from that cache when they are the same kernels as the exported ones
(``exported_kernels.py``), instead of compiling them again.
"""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'tools'))
from build_docs import notebook_module  # noqa: E402  (the docs builder's reading of '#| default_exp')
NBS = ROOT / 'nbs'
TIMEOUT = int(os.environ.get('KELM_NB_NB_TIMEOUT', '3600'))


def _notebooks():
    "Notebooks nbdev_test would pick: nbs/**/*.ipynb, skipping names and folders starting with '_' or '.'."
    found = []
    for p in sorted(NBS.rglob('*.ipynb')):
        parts = p.relative_to(NBS).parts
        if any(part.startswith(('_', '.')) for part in parts): continue
        if (p.parent / '.notest').exists(): continue
        found.append(p)
    return found


# The notebooks that take longest (CPU seconds as --cpu-json records them, most first; 08_bench and 09_cli where an
# earlier --junitxml run put them) start first, the others follow in path order: with several workers no long notebook
# starts last and runs on alone.
LONGEST_FIRST = ('papers/06_li2014', '10_scale_out', 'papers/04_zhu2014', '05_nu_oelm', '08_bench',
                 'papers/03_frenay2011', '04_esvr', 'papers/07_scardapane2015', '02_core', '07_kos_elm', '06_mkl',
                 'papers/05_ding2017', '01_experiments', '09_cli', 'guide/06_kernels', 'guide/01_scale_features',
                 '03_kernels', 'guide/02_tune_c_and_gamma')


def _longest_first(paths):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    return sorted(paths, key=lambda p: rank.get(p.relative_to(NBS).with_suffix('').as_posix(), len(rank)))


NOTEBOOKS = _longest_first(_notebooks())


def _exported_module(nb):
    "The package module a notebook exports to (its `#| default_exp`), or None."
    found = notebook_module(json.loads(Path(nb).read_text(encoding='utf-8')))
    return f'kelm_nb.{found}' if found else None

# The runner: reads one JSON request per line on stdin, forks a child per request, answers one JSON line.
_RUNNER = textwrap.dedent('''
    import atexit, ctypes, importlib, json, os, signal, sys, threading, time, traceback
    from pathlib import Path
    reply = os.fdopen(os.dup(1), 'w', buffering=1)
    os.dup2(2, 1)                       # whatever the imports print goes to the log, never into the replies
    WARM = ('numpy', 'scipy.linalg', 'scipy.sparse', 'scipy.stats', 'scipy.optimize', 'numba', 'pandas',
            'sklearn.base', 'sklearn.datasets', 'sklearn.model_selection', 'sklearn.preprocessing',
            'sklearn.metrics', 'sklearn.svm', 'sklearn.linear_model', 'sklearn.pipeline', 'sklearn.kernel_ridge',
            'sklearn.calibration', 'sklearn.utils.estimator_checks', 'matplotlib.pyplot',
            'matplotlib_inline.backend_inline', 'IPython', 'execnb.shell', 'fastcore.test', 'nbdev.showdoc',
            'kelm_nb', 'kelm_nb.experiments', 'kelm_nb.datasets', 'kelm_nb.core', 'kelm_nb.kernels', 'kelm_nb.esvr',
            'kelm_nb.nu_oelm', 'kelm_nb.mkl', 'kelm_nb.kos_elm', 'kelm_nb.calibration', 'kelm_nb.validation',
            'kelm_nb.jit', 'kelm_nb.bench', 'kelm_nb.cli')
    for name in WARM:                   # a module that fails to import fails in the notebook that needs it
        try: __import__(name)
        except Exception: pass
    try:                                # numba's compiler imports most of itself on a first compilation:
        import numba                    # compile (never run) a tiny function; parallel code is never compiled
        numba.njit('float64(float64)')(lambda x: x + 1.0)   # here (that would start its threads' library)
        import numba.parfors.parfor_lowering, numba.core.caching
    except Exception: pass
    from nbdev.config import get_config
    from nbdev.test import test_nb
    cfg = get_config()
    SKIP = cfg.tst_flags.split()

    def child(req):
        "In the forked child: run one notebook as nbdev_test does; the exit status says whether it passed."
        os.setpgid(0, 0)
        for fd, path in ((1, req['stdout']), (2, req['stderr'])):
            out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(out, fd)
            os.close(out)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        reply.close()
        os.environ.clear()
        os.environ.update(req['env'])
        os.chdir(req['cwd'])
        fn = Path(req['nb'])
        sys.argv = ['-c', str(fn), req['force']]
        if 'numpy' in sys.modules: sys.modules['numpy'].random.seed()   # as fresh as a new process
        if req['module']:               # the notebook's kernels load what the package's compiled (exported_kernels.py)
            sys.path.insert(0, req['tests'])
            from exported_kernels import share_exported_caches
            share_exported_caches(importlib.import_module(req['module']))
        ok, secs = test_nb(fn, skip_flags=SKIP, force_flags=req['force'].split(), basepath=cfg.config_path)
        print(f'{fn.name}: {"passed" if ok else "FAILED"} in {secs:.1f} s')
        return 0 if ok else 1

    def leave(code):
        """End the child as a normal exit does, less the interpreter's teardown: in the interpreter's own order, the
        threads are shut down (non-daemon threads joined, `concurrent.futures` and joblib's executors told to stop),
        the atexit handlers run (clusters closed, temporary folders removed, logs flushed) and the streams are
        flushed; then the process ends without tearing down every module one by one, which costs about a CPU second
        per notebook and checks nothing."""
        for step in (getattr(threading, '_shutdown', None), atexit._run_exitfuncs):
            try:
                if step is not None: step()
            except BaseException: traceback.print_exc()
        for stream in (sys.stdout, sys.stderr):
            try: stream.flush()
            except BaseException: pass
        try: ctypes.CDLL(None).fflush(None)     # what C code printed into its own buffers
        except BaseException: pass
        os._exit(code)

    def wait(pid, timeout):
        "Wait for the child; past `timeout` seconds kill its process group. Returns (status, rusage, timed out)."
        deadline, pause = time.monotonic() + timeout, 0.01
        while True:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done: return status, usage, False
            if time.monotonic() > deadline:
                os.killpg(pid, signal.SIGKILL)
                return os.wait4(pid, 0)[1:] + (True,)
            time.sleep(pause)
            pause = min(0.2, 2 * pause)

    for line in sys.stdin:
        req = json.loads(line)
        sys.stdout.flush(); sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try: code = child(req)
            except BaseException: traceback.print_exc()
            finally: leave(code)
        try: status, usage, timed_out = wait(pid, req['timeout'])
        except BaseException:
            os.killpg(pid, signal.SIGKILL)
            raise
        rc = os.waitstatus_to_exitcode(status)
        reply.write(json.dumps(dict(rc=rc, timed_out=timed_out, cpu_s=usage.ru_utime + usage.ru_stime)) + '\\n')
''')


class NotebookRunner:
    "One warm runner process (`_RUNNER`) for this pytest process; started again if it dies."

    def __init__(self):
        self.proc, self.log = None, None
        self.reported_cpu_s = 0.0   # the children's CPU seconds already reported as their tests' `cpu_s`

    def _start(self):
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, '-c', _RUNNER], cwd=ROOT, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.log, text=True, bufsize=1)

    def _runner_log(self):
        self.log.seek(0)
        return self.log.read().decode(errors='replace')[-8000:]

    def run(self, nb, force, timeout):
        """Run notebook `nb` in a forked child. Returns a dict: rc (None when the runner itself died), timed_out,
        cpu_s (the child's CPU seconds, its finished subprocesses included), stdout and stderr."""
        if self.proc is None or self.proc.poll() is not None: self._start()
        with tempfile.TemporaryDirectory(prefix='kelm_nb_nb_') as tmp:
            req = dict(nb=str(nb), force=force, timeout=timeout, env=dict(os.environ), cwd=str(ROOT),
                       module=_exported_module(nb), tests=str(Path(__file__).resolve().parent),
                       stdout=str(Path(tmp) / 'stdout'), stderr=str(Path(tmp) / 'stderr'))
            try:
                self.proc.stdin.write(json.dumps(req) + '\n')
                self.proc.stdin.flush()
                line = self.proc.stdout.readline()
            except BrokenPipeError:
                line = ''
            if line:
                res = json.loads(line)
                self.reported_cpu_s += res['cpu_s']
            else:
                self.proc.wait()
                res = dict(rc=None, timed_out=False, cpu_s=0.0, runner=self._runner_log())
                self.proc = None
            for name in ('stdout', 'stderr'):
                path = Path(req[name])
                res[name] = path.read_text(errors='replace') if path.exists() else ''
        return res

    def close(self):
        if self.proc is None: return
        self.proc.stdin.close()
        try: self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired: self.proc.kill()
        self.log.close()


@pytest.fixture(scope='module')
def notebook_runner(pytestconfig):
    "The warm runner that forks one process per notebook."
    runner = NotebookRunner()
    yield runner
    # the children's CPU seconds reach this process's rusage when the runner is reaped: conftest counts them once
    pytestconfig._kelm_cpu_counted = getattr(pytestconfig, '_kelm_cpu_counted', 0.0) + runner.reported_cpu_s
    runner.close()


def test_notebooks_found():
    assert NOTEBOOKS, f'no notebooks found in {NBS}'


@pytest.mark.parametrize('nb', NOTEBOOKS, ids=[str(p.relative_to(NBS)) for p in NOTEBOOKS])
def test_notebook(nb, slow_enabled, record_property, notebook_runner):
    res = notebook_runner.run(nb, 'slow' if slow_enabled else '', TIMEOUT)
    record_property('cpu_s', round(res['cpu_s'], 1))  # in --junitxml: each notebook's CPU seconds
    if res['rc'] is None:
        pytest.fail(f"{nb.name}: the notebook runner died:\n{res['runner']}\n{res['stderr'][-8000:]}", pytrace=False)
    if res['timed_out']:
        pytest.fail(f'{nb.name} did not finish within {TIMEOUT} s (KELM_NB_NB_TIMEOUT)')
    if res['rc'] != 0:
        tail = res['stderr'][-8000:]
        pytest.fail(f"{nb.name} failed (exit {res['rc']}):\n{tail}\n{res['stdout'][-2000:]}", pytrace=False)

"""Execute every notebook in nbs/ through nbdev's own test machinery, one pytest test per notebook.

Each notebook runs in a fresh Python subprocess calling ``nbdev.test.test_nb`` exactly as ``nbdev_test`` does:
cells flagged with the project's ``tst_flags`` (``slow``) are skipped unless ``--slow``/``KELM_NB_SLOW=1``,
``IN_TEST`` is set, the notebook's folder is the working directory and the project root is on ``sys.path``.
A subprocess per notebook keeps notebooks from sharing state (imported modules, environment, numba threads)
and lets a crash or a hang fail one test only.
"""
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
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


NOTEBOOKS = _notebooks()

_RUNNER = textwrap.dedent('''
    import sys
    from pathlib import Path
    from nbdev.config import get_config
    from nbdev.test import test_nb
    fn, force = Path(sys.argv[1]), sys.argv[2].split()
    cfg = get_config()
    ok, secs = test_nb(fn, skip_flags=cfg.tst_flags.split(), force_flags=force, basepath=cfg.config_path)
    print(f'{fn.name}: {"passed" if ok else "FAILED"} in {secs:.1f} s')
    sys.exit(0 if ok else 1)
''')


def test_notebooks_found():
    assert NOTEBOOKS, f'no notebooks found in {NBS}'


def _children_cpu():
    "CPU seconds (user + system) of this process's finished subprocesses."
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@pytest.mark.parametrize('nb', NOTEBOOKS, ids=[str(p.relative_to(NBS)) for p in NOTEBOOKS])
def test_notebook(nb, slow_enabled, record_property):
    env = dict(os.environ)
    force = 'slow' if slow_enabled else ''
    cpu = _children_cpu()
    try:
        proc = subprocess.run([sys.executable, '-c', _RUNNER, str(nb), force], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f'{nb.name} did not finish within {TIMEOUT} s (KELM_NB_NB_TIMEOUT)')
    record_property('cpu_s', round(_children_cpu() - cpu, 1))  # in --junitxml: each notebook's CPU seconds
    if proc.returncode != 0:
        tail = (proc.stderr or '')[-8000:]
        pytest.fail(f'{nb.name} failed (exit {proc.returncode}):\n{tail}\n{proc.stdout[-2000:]}', pytrace=False)

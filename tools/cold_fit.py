"""The cold first `fit` of every estimator of the package root: CPU seconds beyond `import kelm_nb`.

Each estimator runs in a fresh Python process with an empty `NUMBA_CACHE_DIR`, so what numba compiles on a first
call is counted; `partial_fit` (for the streaming estimators) is timed as a second number. Usage:

    python tools/cold_fit.py [NAME ...] [--json]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import json, sys, time, warnings
import numpy as np
import kelm_nb
from sklearn.base import is_classifier
name = sys.argv[1]
cls = getattr(kelm_nb, name)
rng = np.random.default_rng(0)
X = rng.normal(size=(200, 5))
y = X @ np.array([1.0, -0.5, 0.25, 0.0, 0.1]) + 0.1 * rng.normal(size=200)
out = {'estimator': name}
with warnings.catch_warnings():
    warnings.simplefilter('ignore')
    t0 = time.process_time()
    if name == 'GaussianKernelBank':
        bank = cls(X, gammas=[0.5, 2.0]); bank.products(np.ones((len(X), 2))); bank.quad(np.ones((len(X), 2)))
    elif hasattr(cls(), 'fit_transform') and not hasattr(cls(), 'predict'):
        cls().fit_transform(X)
    else:
        target = (y > np.median(y)).astype(int) if is_classifier(cls()) else y
        est = cls().fit(X, target)
    out['fit_cpu_s'] = time.process_time() - t0
    if name != 'GaussianKernelBank' and hasattr(cls(), 'partial_fit'):
        t0 = time.process_time()
        new = cls()
        new.partial_fit(X[:10], target[:10], **({'classes': np.unique(target)} if is_classifier(new) else {}))
        out['partial_fit_cpu_s'] = time.process_time() - t0
print(json.dumps(out))
"""


def cold_fit(name):
    "One estimator's cold first fit (and partial_fit), measured in a fresh process with an empty numba cache."
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, 'NUMBA_CACHE_DIR': cache, 'OMP_NUM_THREADS': '1', 'OPENBLAS_NUM_THREADS': '1'}
        run = subprocess.run([sys.executable, '-c', CHILD, name], capture_output=True, text=True, env=env)
    if run.returncode:
        return {'estimator': name, 'error': run.stderr.strip().splitlines()[-1]}
    rec = json.loads(run.stdout.strip().splitlines()[-1])
    rec['stderr'] = run.stderr.strip()
    return rec


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('names', nargs='*', help='estimators (default: all of kelm_nb.__all__)')
    p.add_argument('--json', action='store_true', help='one JSON record per line')
    args = p.parse_args(argv)
    import kelm_nb
    for name in args.names or kelm_nb.__all__:
        rec = cold_fit(name)
        if args.json:
            print(json.dumps(rec), flush=True)
            continue
        notice = 'notice on stderr' if 'kelm-nb: compiling' in rec.get('stderr', '') else ''
        times = ' '.join(f"{k}={rec[k]:.2f}" for k in ('fit_cpu_s', 'partial_fit_cpu_s') if k in rec)
        print(f"{name:24s} {times or rec.get('error')} {notice}", flush=True)


if __name__ == '__main__':
    main()

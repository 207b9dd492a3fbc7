"""Randomised and adversarial inputs for every public estimator and function of kelm_nb (run by tests/test_fuzz.py in
a subprocess, so that a crash of the interpreter is caught and counted instead of ending the test session).

Every call must end in one of two ways: a `ValueError`/`TypeError` (the clear error the bad-input policy asks for),
or a result whose numbers are all finite. Anything else — another exception, a NaN or an infinity in the output, a
crash — is a failure. The counts are written as JSON to the file given as the first argument; the last input tried
is written to `<file>.last` before each call, so a crash can be reproduced.
"""
import inspect
import json
import math
import sys
import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.base import BaseEstimator, is_classifier

import kelm_nb

OUT = sys.argv[1] if len(sys.argv) > 1 else '/tmp/kelm_nb_fuzz.json'
EXAMPLES = int(sys.argv[2]) if len(sys.argv) > 2 else 120
COUNTS = {'calls': 0, 'clear_errors': 0, 'finite_results': 0, 'failures': 0}
FAILURES = []


def _finite(obj):
    "True when every number in `obj` (arrays, scalars, tuples, lists, dicts, estimators' fitted arrays) is finite."
    if obj is None or isinstance(obj, (str, bool)):
        return True
    if isinstance(obj, (int, float, np.number)):
        return math.isfinite(float(obj)) if not isinstance(obj, complex) else np.isfinite(obj)
    if isinstance(obj, np.ndarray):
        return obj.dtype.kind not in 'fc' or bool(np.isfinite(obj).all())
    if isinstance(obj, (list, tuple)):
        return all(_finite(o) for o in obj)
    if isinstance(obj, dict):
        return all(_finite(o) for o in obj.values())
    if isinstance(obj, BaseEstimator):
        return all(_finite(v) for k, v in vars(obj).items() if k.endswith('_') and not k.startswith('_'))
    return True


_LAST = []


def _write_last(text):
    """Put `text` in `<OUT>.last`, before the call it describes. The file stays open: each call rewrites it in place
    and flushes it to the operating system (what a crash of this process leaves behind), where opening it afresh
    and truncating it to nothing for every call made the file system write it out each time (a few milliseconds
    per call on a busy disk)."""
    if not _LAST: _LAST.append(open(OUT + '.last', 'w'))
    f = _LAST[0]
    f.seek(0)
    f.write(text)
    f.truncate()
    f.flush()


def _record(name, call, describe):
    "Run `call()`, classify the outcome, count it."
    COUNTS['calls'] += 1
    _write_last(f'{name}: {describe}\n')
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            out = call()
    except (ValueError, TypeError) as e:
        if not str(e):
            COUNTS['failures'] += 1
            FAILURES.append(f'{name}: {type(e).__name__} without a message ({describe})')
        else:
            COUNTS['clear_errors'] += 1
        return
    except Exception as e:  # noqa: BLE001 - every other exception is a finding
        COUNTS['failures'] += 1
        FAILURES.append(f'{name}: {type(e).__name__}: {str(e)[:200]} ({describe})')
        return
    if _finite(out):
        COUNTS['finite_results'] += 1
    else:
        COUNTS['failures'] += 1
        FAILURES.append(f'{name}: non-finite output ({describe})')


# ---------------------------------------------------------------- data
SCALES = st.sampled_from([1e-300, 1e-150, 1e-8, 1.0, 1e3, 1e8, 1e150, 1e300])


@st.composite
def datasets(draw, classifier):
    n = draw(st.integers(1, 40))
    d = draw(st.integers(1, 5))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    X = rng.normal(size=(n, d)) * draw(SCALES)
    kind = draw(st.sampled_from(['plain', 'nan', 'inf', 'constant_column', 'duplicates', 'integers', 'float32',
                                 'empty_rows', 'one_dim', 'wrong_length']))
    if kind == 'nan': X[rng.integers(n), rng.integers(d)] = np.nan
    if kind == 'inf': X[rng.integers(n), rng.integers(d)] = np.inf
    if kind == 'constant_column': X[:, 0] = 3.0
    if kind == 'duplicates': X[n // 2:] = X[:n - n // 2]
    if kind == 'integers': X = np.round(X).astype(np.int64)
    if kind == 'float32': X = X.astype(np.float32)
    if kind == 'empty_rows': X = X[:0]
    if classifier:
        k = draw(st.integers(1, 4))
        y = rng.integers(0, k, size=n)
        if draw(st.booleans()): y = np.array(['a', 'b', 'c', 'd'])[y]
    else:
        y = rng.normal(size=n) * draw(SCALES)
    if kind == 'one_dim': X = X[:, 0]
    if kind == 'wrong_length': y = y[:-1]
    return X, y, f'{kind} n={n} d={d}'


def _estimators():
    "Every public estimator class at the package root, default-constructed (random_state fixed where there is one)."
    out = []
    for name in kelm_nb.__all__:
        cls = getattr(kelm_nb, name)
        if not (inspect.isclass(cls) and issubclass(cls, BaseEstimator)):
            continue
        params = inspect.signature(cls).parameters
        est = cls(random_state=0) if 'random_state' in params else cls()
        out.append((name, est))
    return out


def fuzz_estimators():
    from sklearn.base import clone
    for name, est in _estimators():
        clf = is_classifier(est)

        @settings(max_examples=EXAMPLES, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(data=datasets(clf), query=datasets(clf))
        def run(data, query):
            (X, y, d), (Xq, _, dq) = data, query
            model = clone(est)
            fitted = []
            def fit_then_predict():
                if hasattr(model, 'transform') and not hasattr(model, 'predict'):
                    model.fit(X)
                    fitted.append(True)
                    return model.transform(X)
                model.fit(X, y)
                fitted.append(True)
                return model.predict(X)
            _record(name, fit_then_predict, f'fit {d}')
            if fitted:   # queries of another width, dtype, scale or with NaN against a fitted model
                method = model.predict if hasattr(model, 'predict') else model.transform
                _record(name, lambda: method(Xq), f'query {dq} after fit {d}')
                if hasattr(model, 'decision_function'):
                    _record(name, lambda: model.decision_function(Xq), f'decision_function {dq}')
        run()


# ---------------------------------------------------------------- public functions
LIBRARY = ('core', 'kernels', 'esvr', 'nu_oelm', 'mkl', 'kos_elm')
CALLABLE_PARAMS = {'transform', 'func', 'method', 'estimator'}


def _functions():
    "Every public function of the library floor (numba dispatchers included), with its parameters."
    import importlib
    out = []
    for m in LIBRARY:
        module = importlib.import_module(f'kelm_nb.{m}')
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) or not callable(obj):
                continue
            out.append((f'{m}.{name}', obj, inspect.signature(obj).parameters))
    return out


@st.composite
def arguments(draw, n, d, pname):
    "One argument: an array of a shape that fits (n rows, d columns, n x n), a scalar, or something adversarial."
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    kind = draw(st.sampled_from(['matrix', 'square', 'psd', 'vector', 'scalar', 'int', 'nan', 'inf', 'empty',
                                 'three_d', 'string', 'none', 'list_of_psd', 'callable', 'estimator']))
    scale = draw(SCALES)
    if kind == 'matrix': return rng.normal(size=(n, d)) * scale
    if kind == 'square': return rng.normal(size=(n, n)) * scale
    if kind == 'psd':
        A = rng.normal(size=(n, d))
        return A @ A.T * scale
    if kind == 'vector': return rng.normal(size=draw(st.sampled_from([n, d]))) * scale
    if kind == 'scalar': return float(rng.normal() * scale)
    if kind == 'int': return draw(st.integers(-3, 50))
    if kind in ('nan', 'inf'):
        A = rng.normal(size=(n, d))
        A[rng.integers(n), rng.integers(d)] = np.nan if kind == 'nan' else np.inf
        return A
    if kind == 'empty': return np.empty((0, d))
    if kind == 'three_d': return rng.normal(size=(2, n, d))
    if kind == 'string': return 'rbf'
    if kind == 'none': return None
    if kind == 'list_of_psd':
        A = rng.normal(size=(n, d))
        return [A @ A.T, np.eye(n)]
    if kind == 'callable': return lambda A, *args, **kw: np.tanh(np.asarray(A, dtype=float))
    from kelm_nb import KOSELMRegressor
    return KOSELMRegressor()


def fuzz_functions():
    for name, func, params in _functions():
        required = [p for p, v in params.items()
                    if v.default is inspect.Parameter.empty and v.kind in (v.POSITIONAL_ONLY, v.POSITIONAL_OR_KEYWORD)]

        @settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(data=st.data(), n=st.integers(1, 12), d=st.integers(1, 4))
        def run(data, n, d):
            args = [data.draw(arguments(n, d, p)) for p in required]
            kinds = ', '.join(type(a).__name__ if not isinstance(a, np.ndarray) else f'array{a.shape}' for a in args)
            def call():
                out = func(*args)
                if inspect.isgenerator(out): out = list(out)
                return out
            _record(name, call, f'({kinds})')
        run()


def write_counts():
    "Write the counts and the first failures as JSON to `OUT`, and print the counts."
    with open(OUT, 'w') as f:
        json.dump({**COUNTS, 'failure_examples': FAILURES[:50]}, f, indent=1)
    print(json.dumps(COUNTS))


if __name__ == '__main__':
    fuzz_estimators()
    fuzz_functions()
    write_counts()

"""What the public-API fuzz run does not reach (run by tests/test_fuzz.py in a subprocess, so that a crash of the
interpreter is caught): non-default constructors drawn from each estimator's own `_parameter_constraints` (valid
values and bad ones), `partial_fit` sequences, sparse / DataFrame / complex / object / list inputs, label
pathologies, and precomputed and callable kernels. The outcome rules are `fuzz_public_api`'s: a `ValueError` or
`TypeError` with a message, or finite numbers; `predict_proba` rows must also sum to one.
"""
import warnings

import numpy as np
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.base import clone, is_classifier
from sklearn.utils._param_validation import generate_invalid_param_val, generate_valid_param, make_constraint

import fuzz_public_api as fpa

BAD_VALUES = [np.nan, np.inf, -1, 0, 1e308, 'foo', (2, 1), (np.nan, 1), [], {}, object(), 1 + 2j, True]
EXTREME_VALUES = [1e-12, 2 ** -25, 3e11, 1e12]     # valid for many numeric parameters, and where solvers break


def _check_proba(model, X):
    "`predict_proba(X)`, with rows that must sum to one."
    P = model.predict_proba(X)
    if np.ndim(P) != 2 or not np.allclose(np.sum(P, axis=1), 1, atol=1e-8):
        raise RuntimeError('predict_proba rows do not sum to one')
    return P


def _use(model, X):
    "Every prediction method the fitted `model` has, on `X`."
    out = [model.predict(X)]
    for method in ('decision_function', 'predict_proba'):
        if hasattr(model, method):
            out.append(_check_proba(model, X) if method == 'predict_proba' else getattr(model, method)(X))
    return out


def _small(draw, classifier, n_max=30, d_max=4):
    "A small well-formed data set."
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    n, d = draw(st.integers(4, n_max)), draw(st.integers(1, d_max))
    X = rng.normal(size=(n, d))
    y = rng.integers(0, draw(st.integers(2, 3)), size=n) if classifier else rng.normal(size=n)
    return X, y, rng


# ---------------------------------------------------------------- non-default constructors
def _parameter_value(draw, constraints):
    "A value for one parameter: valid for one of its constraints, invalid for one, extreme, or adversarial."
    how = draw(st.sampled_from(['valid', 'invalid', 'extreme', 'bad']))
    if how == 'extreme':
        return draw(st.sampled_from(EXTREME_VALUES))
    constraint = make_constraint(draw(st.sampled_from(list(constraints))))
    try:
        if how == 'valid':
            return generate_valid_param(constraint)
        if how == 'invalid':
            return generate_invalid_param_val(constraint)
    except (NotImplementedError, ValueError):
        pass
    return draw(st.sampled_from(BAD_VALUES))


def fuzz_constructors():
    for name, est in fpa._estimators():
        constraints = getattr(est, '_parameter_constraints', {})
        clf = is_classifier(est)

        @settings(max_examples=fpa.EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(data=st.data())
        def run(data):
            X, y, _ = _small(data.draw, clf)
            chosen = data.draw(st.lists(st.sampled_from(sorted(constraints)), max_size=3, unique=True)) \
                if constraints else []
            params = {p: _parameter_value(data.draw, constraints[p]) for p in chosen}
            model = clone(est).set_params(**params)
            def fit_use():
                if not hasattr(model, 'predict'):
                    return model.fit(X).transform(X)
                return _use(model.fit(X, y), X)
            fpa._record(name, fit_use, f'params {params!r:.200}')
        run()


# ---------------------------------------------------------------- partial_fit sequences
def fuzz_partial_fit():
    for name, est in fpa._estimators():
        if not hasattr(est, 'partial_fit'):
            continue
        clf = is_classifier(est)

        @settings(max_examples=fpa.EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(data=st.data())
        def run(data):
            rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
            d = data.draw(st.integers(1, 3))
            model = clone(est)
            sizes = data.draw(st.lists(st.integers(0, 12), min_size=1, max_size=4))
            for i, m in enumerate(sizes):
                width = d if data.draw(st.integers(0, 9)) else d + 1            # now and then a batch of another width
                Xb = rng.normal(size=(m, width)) * data.draw(fpa.SCALES)
                yb = rng.integers(0, data.draw(st.integers(1, 4)), size=m) if clf else rng.normal(size=m)
                kw = {'classes': np.arange(3)} if clf and i == 0 and data.draw(st.booleans()) else {}
                fpa._record(name, lambda: model.partial_fit(Xb, yb, **kw) and None, f'partial_fit #{i} n={m} d={width}')
            if hasattr(model, 'n_features_in_'):
                fpa._record(name, lambda: _use(model, rng.normal(size=(5, d))), f'use after {sizes}')
        run()


# ---------------------------------------------------------------- input types and label pathologies
def _as_kind(X, kind):
    "`X` as another container or dtype."
    if kind == 'csr':
        return sp.csr_matrix(X)
    if kind == 'dataframe':
        import pandas as pd
        return pd.DataFrame(X, columns=[f'f{j}' for j in range(X.shape[1])])
    if kind == 'complex':
        return X + 1j
    if kind == 'object':
        return X.astype(str).astype(object)
    if kind == 'list':
        return X.tolist()
    return X.astype(bool)


def _pathological_labels(y, kind, rng):
    "Classification labels that a classifier must reject clearly or handle."
    n = len(y)
    return {'one_class': np.zeros(n, int), 'all_unique': np.arange(n), 'continuous': rng.normal(size=n),
            'nan': np.where(np.arange(n) == 0, np.nan, y.astype(float)), 'none': np.array([None] * n, dtype=object),
            'bool': y.astype(bool), 'mixed': np.array([1, 'a'] * n, dtype=object)[:n],
            'two_d': np.eye(3)[y % 3]}[kind]


def fuzz_inputs_and_labels():
    for name, est in fpa._estimators():
        clf = is_classifier(est)

        @settings(max_examples=fpa.EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(data=st.data())
        def run(data):
            X, y, rng = _small(data.draw, clf)
            kind = data.draw(st.sampled_from(['csr', 'dataframe', 'complex', 'object', 'list', 'bool']))
            model = clone(est)
            fit = (lambda: model.fit(_as_kind(X, kind)).transform(X)) if not hasattr(model, 'predict') else \
                (lambda: _use(model.fit(_as_kind(X, kind), y), _as_kind(X, kind)))
            fpa._record(name, fit, f'X as {kind}')
            if clf:
                label = data.draw(st.sampled_from(['one_class', 'all_unique', 'continuous', 'nan', 'none', 'bool',
                                                   'mixed', 'two_d']))
                yl = _pathological_labels(y, label, rng)
                fpa._record(name, lambda: _use(clone(est).fit(X, yl), X), f'labels {label}')
        run()


# ---------------------------------------------------------------- precomputed and callable kernels
def _gram(draw, rng, n):
    "A precomputed Gram matrix: PSD, indefinite, negative definite, asymmetric, non-square or with NaN."
    A = rng.normal(size=(n, 3))
    G = A @ A.T
    kind = draw(st.sampled_from(['psd', 'indefinite', 'negative', 'asymmetric', 'non_square', 'nan']))
    G = {'psd': G, 'indefinite': G - 2 * np.eye(n) * np.abs(G).max(), 'negative': -G - np.eye(n),
         'asymmetric': G + np.triu(rng.normal(size=(n, n))), 'non_square': G[:, :-1], 'nan': G.copy()}[kind]
    if kind == 'nan':
        G[0, 0] = np.nan
    return G, kind


CALLABLES = {
    'tanh': lambda A, B: np.tanh(A @ B.T),
    'wrong_shape': lambda A, B: np.ones((len(A), len(B) + 1)),
    'nan': lambda A, B: np.full((len(A), len(B)), np.nan),
    'complex': lambda A, B: (A @ B.T) * (1 + 1j),
    'negative': lambda A, B: np.full((len(A), len(B)), -1e3),
    'scalar': lambda A, B: 1.0,
}


def fuzz_kernels():
    for name, est in fpa._estimators():
        params = est.get_params()
        if 'kernel' not in params and 'kernels' not in params:
            continue
        clf = is_classifier(est)

        @settings(max_examples=fpa.EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(data=st.data())
        def run(data):
            X, y, rng = _small(data.draw, clf)
            n = len(y)
            if data.draw(st.booleans()):
                G, kind = _gram(data.draw, rng, n)
                key = 'kernel' if 'kernel' in params else 'kernels'
                value = 'precomputed' if key == 'kernel' else [G, np.eye(n)]
                model = clone(est).set_params(**{key: value})
                query = G[:3] if G.shape[0] == n else G
                fpa._record(name, lambda: _use(model.fit(G, y), query), f'precomputed {kind}')
            else:
                kind = data.draw(st.sampled_from(sorted(CALLABLES)))
                key = 'kernel' if 'kernel' in params else 'kernels'
                value = CALLABLES[kind] if key == 'kernel' else [CALLABLES[kind], 'rbf']
                model = clone(est).set_params(**{key: value})
                fpa._record(name, lambda: _use(model.fit(X, y), X[:3]), f'callable kernel {kind}')
        run()


if __name__ == '__main__':
    warnings.simplefilter('ignore')
    fuzz_constructors()
    fuzz_partial_fit()
    fuzz_inputs_and_labels()
    fuzz_kernels()
    fpa.write_counts()

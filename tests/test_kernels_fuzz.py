"""Randomised and adversarial inputs for every public function and estimator of kelm_nb.kernels: each call either
raises a ValueError/TypeError or returns finite numbers of the right shape. Never a crash, never silent NaN.

1650 drawn inputs per run (500 + 500 + 150 + 300 + 200), a third of them from adversarial values."""
import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from sklearn.exceptions import ConvergenceWarning

from kelm_nb import kernels as K

ADVERSARIAL = [0.0, -0.0, 1e-320, 1e-300, 1e154, -1e154, 1e200, 1e300, -1.7e308, 1.7e308, np.nan, np.inf, -np.inf]
values = st.one_of(st.floats(-10, 10), st.sampled_from(ADVERSARIAL), st.floats(allow_nan=True, allow_infinity=True))
shapes = st.one_of(hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=6),
                   st.sampled_from([(0, 3), (3, 0), (4,), (2, 2, 2), ()]))
dtypes = st.sampled_from([np.float64, np.float32, np.int64])
params = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 5),
                   st.sampled_from(['a', True, [1.0], 1e-101, 1e-100, 1e300]))
FUZZ = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _array(data, shape, dtype):
    a = np.array(data.draw(hnp.arrays(np.float64, shape, elements=values)))
    if dtype is np.float32:
        with np.errstate(over='ignore'):
            return a.astype(np.float32)
    if dtype is np.int64:
        return np.nan_to_num(a, posinf=0, neginf=0).clip(-1e6, 1e6).astype(np.int64)
    return a


def _finite_or_clear_error(f, *args, **kwargs):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', ConvergenceWarning)
            out = f(*args, **kwargs)
    except (ValueError, TypeError) as e:
        assert str(e), 'an error without a message'
        return None
    out = np.asarray(out)
    assert np.isfinite(out).all(), f'non-finite output from {f.__name__}'
    return out


@FUZZ
@given(data=st.data(), shape_x=shapes, shape_z=st.one_of(st.none(), shapes), dtype=dtypes, sigma_w=params,
       normalize=st.sampled_from([True, False, 1, 'yes']))
def test_asymptotic_elm_kernel(data, shape_x, shape_z, dtype, sigma_w, normalize):
    X = _array(data, shape_x, dtype)
    Z = None if shape_z is None else _array(data, shape_z, dtype)
    out = _finite_or_clear_error(K.asymptotic_elm_kernel, X, Z, sigma_w=sigma_w, normalize=normalize)
    if out is not None and X.ndim == 2:
        assert out.shape == (X.shape[0], (X if Z is None else Z).shape[0]) and np.abs(out).max() <= 1.0


@FUZZ
@given(data=st.data(), shape_x=shapes, shape_z=st.one_of(st.none(), shapes), dtype=dtypes,
       which=st.sampled_from(['rbf', 'laplacian', 'poly', 'linear', 'normalize']), gamma=params, degree=params,
       coef0=params)
def test_standard_kernels(data, shape_x, shape_z, dtype, which, gamma, degree, coef0):
    X = _array(data, shape_x, dtype)
    Z = None if shape_z is None else _array(data, shape_z, dtype)
    calls = {'rbf': lambda: K.rbf_kernel(X, Z, gamma), 'laplacian': lambda: K.laplacian_kernel(X, Z, gamma),
             'poly': lambda: K.polynomial_kernel(X, Z, degree, gamma, coef0), 'linear': lambda: K.linear_kernel(X, Z),
             'normalize': lambda: K.normalize_kernel(X, None if Z is None else np.ravel(Z)[:len(X)],
                                                     None if Z is None else np.ravel(Z)[:np.shape(X)[-1]])}
    _finite_or_clear_error(calls[which])


@settings(max_examples=150, deadline=None)
@given(data=st.data(), shape=shapes, n_hidden=params,
       activation=st.sampled_from(['erf', 'sigmoid', 'exp', 'relu', 'x']), scale=params)
def test_elm_kernel(data, shape, n_hidden, activation, scale):
    X = _array(data, shape, np.float64)
    _finite_or_clear_error(K.elm_kernel, X, n_hidden=n_hidden if n_hidden is None or n_hidden != n_hidden else n_hidden,
                           activation=activation, weight_scale=scale)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), n=st.integers(1, 12), d=st.integers(1, 4), C=params, epsilon=params, sigma_w=params,
       max_iter=st.sampled_from([-1, 0, 1, 50, 2.5]), weights=st.booleans())
def test_elm_kernel_svr(data, n, d, C, epsilon, sigma_w, max_iter, weights):
    X = _array(data, (n, d), np.float64)
    y = _array(data, (n,), np.float64)
    w = np.abs(_array(data, (n,), np.float64)) if weights else None
    model = K.ELMKernelSVR(C=C, epsilon=epsilon, sigma_w=sigma_w, max_iter=max_iter)
    fitted = _finite_or_clear_error(lambda: model.fit(X, y, sample_weight=w).predict(X))
    if fitted is not None:
        Q = _array(data, (3, d), np.float64)
        _finite_or_clear_error(model.predict, Q)


@settings(max_examples=200, deadline=None)
@given(data=st.data(), n=st.integers(1, 8), d=st.integers(1, 3), sigma_w=params,
       normalize=st.sampled_from([True, False]))
def test_gp_kernel(data, n, d, sigma_w, normalize):
    X = _array(data, (n, d), np.float64)
    k = K.AsymptoticELMKernel(sigma_w=sigma_w, normalize=normalize)
    out = _finite_or_clear_error(lambda: np.concatenate([a.ravel() for a in k(X, eval_gradient=True)]))
    if out is not None:
        _finite_or_clear_error(k.diag, X)

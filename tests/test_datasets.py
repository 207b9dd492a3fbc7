"""Tests of kelm_nb.datasets through the installed package: every bundled set, the generators, bad input."""
import math

import numpy as np
import pytest
from scipy import stats

from kelm_nb import datasets as ds
from kelm_nb.datasets import (list_datasets, load_dataset, mackey_glass, mackey_glass_embedding, noisy_sinc,
                              two_gaussians)


@pytest.mark.parametrize('info', list(list_datasets()), ids=lambda d: d['name'])
def test_every_dataset_loads_with_catalogued_shape(info):
    X, y = load_dataset(info['name'])
    assert X.shape == (info['rows'], info['features'])
    assert X.dtype == np.float64 and y.shape == (info['rows'],)
    assert np.isfinite(X).all() and np.isfinite(y).all()
    if info['task'] == 'regression':
        assert y.dtype == np.float64 and np.unique(y).size >= 5   # cleveland's target is a 0-4 severity
    else:
        assert np.issubdtype(y.dtype, np.integer)
        assert np.unique(y).size == int(info['target'].split()[0])
        assert (info['task'] == 'binary') == (np.unique(y).size == 2)


def test_calhousing_shape_and_catalogue():
    X, y = load_dataset('calhousing')
    assert X.shape == (20433, 8)
    assert 14999 <= y.min() and y.max() <= 500001  # median house values in dollars
    names = [d['name'] for d in list_datasets()]
    assert len(names) == 33 and 'wdbc' in names and names == sorted(set(names), key=names.index)
    for d in list_datasets():
        assert set(d) >= {'name', 'rows', 'features', 'task', 'source', 'used_by'}
    assert 'calhousing' in str(list_datasets()) and '<table>' in list_datasets()._repr_html_()
    assert {d['name'] for d in list_datasets('multi-class')} == {'statlog', 'balance'}


def test_every_bundled_file_is_catalogued():
    from importlib import resources
    files = {p.name[:-len('.csv.gz')] for p in resources.files('kelm_nb').joinpath('data').iterdir()
             if p.name.endswith('.csv.gz')}
    assert files == set(ds.DATASETS) - {'wdbc'}


def test_wdbc_is_sklearns_breast_cancer():
    from sklearn.datasets import load_breast_cancer
    X, y = load_dataset('wdbc')
    Xs, ys = load_breast_cancer(return_X_y=True)
    np.testing.assert_array_equal(X, Xs)
    np.testing.assert_array_equal(y, ys)


def test_load_returns_copies_and_frames():
    X1, y1 = load_dataset('cpu')
    X1[:] = 0
    y1[:] = 0
    X2, y2 = load_dataset('CPU')
    assert X2.any() and y2.any()
    Xf, yf = load_dataset('cpu', return_frame=True)
    assert list(Xf.columns) == ['MYCT', 'MMIN', 'MMAX', 'CACH', 'CHMIN', 'CHMAX'] and yf.name == 'target'
    np.testing.assert_array_equal(Xf.to_numpy(), X2)


def test_load_bad_names():
    with pytest.raises(ValueError, match='valid names are.*calhousing'):
        load_dataset('calhousin')
    with pytest.raises(TypeError, match='name'):
        load_dataset(3)
    with pytest.raises(ValueError, match='task'):
        list_datasets('clustering')


# ---------------------------------------------------------------- Mackey-Glass
def test_mackey_glass_first_delay_interval_is_exact():
    # on [0, tau] the delayed term is the constant history x0: a linear ODE with a closed form
    a, b, x0 = 0.2, 0.1, 1.2
    c = a * x0 / (1 + x0 ** 10)
    t = np.arange(31.0)
    exact = c / b + (x0 - c / b) * np.exp(-b * t)
    np.testing.assert_allclose(mackey_glass(31, tau=30, sample_every=1, transient=0), exact, rtol=1e-9)


def test_mackey_glass_fourth_order():
    ref = mackey_glass(1, tau=17, sample_every=1, transient=100, dt=0.0125)[0]
    e1 = abs(mackey_glass(1, tau=17, sample_every=1, transient=100, dt=0.2)[0] - ref)
    e2 = abs(mackey_glass(1, tau=17, sample_every=1, transient=100, dt=0.1)[0] - ref)
    assert 10 < e1 / e2 < 24


@pytest.mark.parametrize('dtype', [np.float64, np.float32])
def test_jitted_integrator_float64_and_float32(dtype):
    # the jitted kernel itself, called with float64 and float32 scalars: same series to float32 precision
    h, a, b, x0 = (dtype(v) for v in (0.1, 0.2, 0.1, 1.2))
    out = ds._mg_integrate(200, 10, 1000, 170, h, a, b, x0)
    assert out.dtype == np.float64 and out.shape == (200,)
    ref = mackey_glass(200, tau=17, sample_every=1, transient=100)
    np.testing.assert_allclose(out, ref, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_mackey_glass_statistics():
    s17 = mackey_glass(3000, tau=17, sample_every=1)
    assert 0.88 < s17.mean() < 0.95
    assert 0.38 < s17.min() < 0.48 and 1.25 < s17.max() < 1.36  # the tau=17 attractor spans about [0.42, 1.32]
    s30 = mackey_glass(3000)
    assert 0.85 < s30.mean() < 0.95 and 0.1 < s30.min() < 0.35 and 1.25 < s30.max() < 1.45
    # chaotic: not periodic, positive autocorrelation at lag 1, decorrelates within a few dozen samples
    r = [np.corrcoef(s30[:-k], s30[k:])[0, 1] for k in (1, 50)]
    assert r[0] > 0.5 and abs(r[1]) < 0.5


def test_mackey_glass_noise_and_reproducibility():
    a = mackey_glass(500, noise=0.05, random_state=1)
    b = mackey_glass(500, noise=0.05, random_state=1)
    c = mackey_glass(500, noise=0.05, random_state=2)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    np.testing.assert_allclose((a - mackey_glass(500)).std(), 0.05, rtol=0.15)


def test_mackey_glass_bad_input():
    for kw, name in [(dict(tau=-1), 'tau'), (dict(tau=17.05), 'tau'), (dict(dt=0), 'dt'),
                     (dict(sample_every=0.05), 'sample_every'), (dict(noise=-1), 'noise'),
                     (dict(tau=float('nan')), 'tau'), (dict(transient=-5), 'transient')]:
        with pytest.raises(ValueError, match=name):
            mackey_glass(10, **kw)
    with pytest.raises(TypeError, match='n'):
        mackey_glass(10.5)
    with pytest.raises(ValueError, match='n'):
        mackey_glass(0)


def test_embedding():
    s = np.arange(20.0)
    X, y = mackey_glass_embedding(s, n_lags=7, horizon=1)
    assert X.shape == (13, 7)
    np.testing.assert_array_equal(X[0], np.arange(7.0))
    np.testing.assert_array_equal(y, np.arange(7.0, 20.0))
    X, y = mackey_glass_embedding(s, n_lags=3, horizon=5)
    np.testing.assert_array_equal(X[:, -1] + 5, y)
    with pytest.raises(ValueError, match='too short'):
        mackey_glass_embedding(s[:7])
    with pytest.raises(ValueError, match='series'):
        mackey_glass_embedding(np.ones((3, 3)))
    with pytest.raises(ValueError, match='series'):
        mackey_glass_embedding(np.array([1.0, np.nan, 2, 3, 4, 5, 6, 7, 8]), n_lags=2)
    with pytest.raises(ValueError, match='n_lags'):
        mackey_glass_embedding(s, n_lags=0)


# ---------------------------------------------------------------- two Gaussians, sinc
def test_two_gaussians_distribution():
    X, y = two_gaussians(40000, random_state=0)
    assert X.shape == (40000, 2) and set(np.unique(y)) == {-1, 1}
    np.testing.assert_allclose(X[y == 1].mean(0), [1, 1], atol=0.03)
    np.testing.assert_allclose(X[y == -1].mean(0), [-1, -1], atol=0.03)
    np.testing.assert_allclose(np.cov(X[y == 1].T), np.eye(2), atol=0.04)
    # the classes overlap: the Bayes rule x1 + x2 = 0 errs with probability Phi(-sqrt(2)/sigma)
    np.testing.assert_allclose(np.mean(np.sign(X.sum(1)) != y), stats.norm.cdf(-math.sqrt(2)), atol=0.005)
    X2, y2 = two_gaussians(20000, sigma=2.0, random_state=0)
    np.testing.assert_allclose(np.mean(np.sign(X2.sum(1)) != y2), stats.norm.cdf(-math.sqrt(2) / 2), atol=0.01)


def test_two_gaussians_options_and_reproducibility():
    a = two_gaussians(301, random_state=3)
    b = two_gaussians(301, random_state=3)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.allclose(a[0], two_gaussians(301, random_state=4)[0])
    assert np.sum(a[1] == 1) == 151 and np.sum(a[1] == -1) == 150
    X, y = two_gaussians(1000, means=[[0, 0, 0], [3, 3, 3]], cov=0.01 * np.eye(3), shuffle=False, random_state=0)
    assert X.shape == (1000, 3) and np.all(y[:500] == 1)
    np.testing.assert_allclose(X[500:].mean(0), 3, atol=0.02)
    for kw, name in [(dict(sigma=0), 'sigma'), (dict(means=[[0, 0]]), 'means'),
                     (dict(cov=[[1, 2], [2, 1]]), 'cov'), (dict(cov=np.eye(3)), 'cov')]:
        with pytest.raises(ValueError, match=name):
            two_gaussians(10, **kw)
    with pytest.raises(ValueError, match='n'):
        two_gaussians(1)


def test_noisy_sinc():
    X, y = noisy_sinc(5000, noise=0.2, random_state=0)
    assert X.shape == (5000, 1) and X.min() >= -10 and X.max() <= 10
    r = y - np.sin(X[:, 0]) / X[:, 0]
    assert np.abs(r).max() <= 0.2 and abs(r.mean()) < 0.01
    np.testing.assert_allclose(r.std(), 0.2 / math.sqrt(3), rtol=0.05)
    X0, y0 = noisy_sinc(100, noise=0, random_state=0)
    np.testing.assert_allclose(y0, np.sinc(X0[:, 0] / np.pi), rtol=1e-15)
    Xn, yn = noisy_sinc(5000, noise=0.1, noise_type='normal', random_state=0)
    np.testing.assert_allclose((yn - np.sinc(Xn[:, 0] / np.pi)).std(), 0.1, rtol=0.05)
    np.testing.assert_array_equal(noisy_sinc(50, random_state=7)[1], noisy_sinc(50, random_state=7)[1])
    for kw, name in [(dict(noise=-0.1), 'noise'), (dict(low=1, high=0), 'low'), (dict(noise_type='x'), 'noise_type')]:
        with pytest.raises(ValueError, match=name):
            noisy_sinc(10, **kw)

"""kelm_nb: kernel extreme learning machines — five papers derived, implemented, verified and reproduced.

The package root re-exports the estimators, in the manner of scikit-learn's subpackages; the kernels, solvers and
their helpers stay in their modules (`kelm_nb.core`, `kelm_nb.kernels`, `kelm_nb.esvr`, `kelm_nb.nu_oelm`,
`kelm_nb.mkl`, `kelm_nb.kos_elm`). The papers' experiments are in `kelm_nb.papers`.

The estimators are imported on first use (`from kelm_nb import ELMRegressor` works as usual), so that importing the
package alone — as the `kelm-nb` command does before it knows what it will run — does not load numba and
scikit-learn.
"""
__version__ = "0.1.0"

import importlib as _importlib
import importlib.abc as _importlib_abc
import importlib.machinery as _machinery
import sys as _sys

_HOME = {'ELMClassifier': 'core', 'ELMRegressor': 'core', 'KernelELMClassifier': 'core',
         'KernelELMRegressor': 'core', 'RandomHiddenLayer': 'core', 'RBFHiddenLayer': 'core',
         'ELMKernelSVR': 'kernels',
         'ELMRegressorCV': 'esvr', 'ESVR': 'esvr', 'ESVRCV': 'esvr', 'LSSVR': 'esvr',
         'NuOELMClassifier': 'nu_oelm', 'NuOELMClassifierCV': 'nu_oelm', 'OELMClassifier': 'nu_oelm',
         'GaussianKernelBank': 'mkl', 'MKLELMClassifier': 'mkl', 'MKLELMRegressor': 'mkl',
         'KOSELMClassifier': 'kos_elm', 'KOSELMRegressor': 'kos_elm', 'OSELMClassifier': 'kos_elm',
         'OSELMRegressor': 'kos_elm'}

__all__ = sorted(_HOME)


def __getattr__(name):
    "An estimator of `__all__`, imported from its module on first use."
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(f'{__name__}.{_HOME[name]}'), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


class _KernelsAfterCore(_importlib_abc.MetaPathFinder):
    """Imports `kelm_nb.kernels` right after `kelm_nb.core`: the kernels module fills the core's kernel registry
    ('rbf', 'laplacian', 'poly', 'linear', 'asymptotic', 'elm'), so that e.g. `KernelELMRegressor(kernel='rbf')`
    works after any import of the core, as it did when this package imported every module eagerly."""
    def find_spec(self, fullname, path, target=None):
        if fullname != f'{__name__}.core': return None
        spec = _machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None: return spec
        exec_core = spec.loader.exec_module

        def exec_module(module):
            exec_core(module)
            _importlib.import_module(f'{__name__}.kernels')
        spec.loader.exec_module = exec_module
        return spec


if f'{__name__}.core' not in _sys.modules:
    _sys.meta_path.insert(0, _KernelsAfterCore())

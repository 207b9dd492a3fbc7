"""kelm_nb: kernel extreme learning machines — five papers derived, implemented, verified and reproduced.

The package root re-exports the estimators, in the manner of scikit-learn's subpackages; the kernels, solvers and
their helpers stay in their modules (`kelm_nb.core`, `kelm_nb.kernels`, `kelm_nb.esvr`, `kelm_nb.nu_oelm`,
`kelm_nb.mkl`, `kelm_nb.kos_elm`). The papers' experiments are in `kelm_nb.papers`.
"""
__version__ = "0.1.0"

# Importing the kernels module also registers the ELM kernels ('asymptotic', 'elm') and the standard kernels in the
# core's kernel registry, so that e.g. KernelELMRegressor(kernel='asymptotic') works after any kelm_nb import.
from .core import ELMClassifier, ELMRegressor, KernelELMClassifier, KernelELMRegressor, RandomHiddenLayer
from .kernels import ELMKernelSVR
from .esvr import ELMRegressorCV, ESVR, ESVRCV, LSSVR
from .nu_oelm import NuOELMClassifier, OELMClassifier
from .mkl import GaussianKernelBank, MKLELMClassifier, MKLELMRegressor
from .kos_elm import KOSELMClassifier, KOSELMRegressor, OSELMClassifier, OSELMRegressor

__all__ = ['ELMClassifier', 'ELMKernelSVR', 'ELMRegressor', 'ELMRegressorCV', 'ESVR', 'ESVRCV',
           'GaussianKernelBank', 'KOSELMClassifier', 'KOSELMRegressor', 'KernelELMClassifier',
           'KernelELMRegressor', 'LSSVR', 'MKLELMClassifier', 'MKLELMRegressor', 'NuOELMClassifier',
           'OELMClassifier', 'OSELMClassifier', 'OSELMRegressor', 'RandomHiddenLayer']

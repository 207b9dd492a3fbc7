__version__ = "0.1.0"

# Importing the kernels module registers the ELM kernels ('asymptotic', 'elm') and the fast Gram matrices in the
# core's kernel registry, so that e.g. KernelELMRegressor(kernel='asymptotic') works after any kelm_nb import.
from . import kernels as _kernels  # noqa: E402,F401

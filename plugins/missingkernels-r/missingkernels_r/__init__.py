"""R density estimators for missingkernels: norm, mice and Amelia via rpy2.

The densities are registered as ``r_norm``, ``r_mice`` and ``r_amelia``
through the entry-point group ``missingkernels``. Importing this package does
not import rpy2 or start R; fitting a density does, and raises
:class:`RDependencyError` naming what to install when R, rpy2 or the R
package is missing.
"""

from ._amelia import RAmeliaDensity
from ._mice import RMiceDensity
from ._norm import NORM_MAX_FEATURES, RNormDensity
from ._session import RDependencyError, RError, RWarning

__version__ = "0.1.0.dev0"

__all__ = [
    "NORM_MAX_FEATURES",
    "RAmeliaDensity",
    "RDependencyError",
    "RError",
    "RMiceDensity",
    "RNormDensity",
    "RWarning",
    "__version__",
]

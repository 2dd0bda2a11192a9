"""Utilities for developers of kernels, densities and plugins.

The names a plugin needs besides the base classes
(:class:`~missingkernels.densities.BaseDensity`,
:class:`~missingkernels.kernels.BaseKernel`) and the hooks
(:mod:`missingkernels.hookspecs`), public so that a plugin never imports a
private module of the package (the R plugin ``missingkernels-r`` uses only
these):

- messages that name columns as the package does: :func:`feature_names`,
  :func:`describe_features`;
- batch-independent random numbers (a row's draws are a function of the row,
  the seed and the draw only): :func:`row_keys`, :class:`RowStreams`, and
  :func:`integer_seeds` for another library's seed;
- optional dependencies that say how to install them: :func:`import_optional`;
- parameter constraints (``_parameter_constraints``): ``Interval``, the one
  of the scikit-learn version installed.

:mod:`missingkernels.utils.estimator_checks` holds the contract checks every
registered kernel and density passes.
"""

from .._numerics import RowStreams, integer_seeds, row_keys
from .._optional import import_optional
from .._sklearn_compat import Interval
from .._validation import describe_features, feature_names

__all__ = [
    "Interval",
    "RowStreams",
    "describe_features",
    "feature_names",
    "import_optional",
    "integer_seeds",
    "row_keys",
]

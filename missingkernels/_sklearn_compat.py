"""The scikit-learn names the package takes from private scikit-learn paths.

scikit-learn does not promise anything about its underscored modules and
names: they are moved, renamed or removed between releases without a
deprecation cycle. Every such import in ``missingkernels`` (and in its
first-party plugins and tests) goes through this module, so that a new
scikit-learn release is adapted to here, in one place, and nowhere else.
``tests/test_sklearn_compat.py`` checks that no other module imports from a
private scikit-learn path.

Over the supported range (``scikit-learn>=1.6``, see ``pyproject.toml``) the
names below live where they are imported from. When one moves, import it from
its new path first and fall back to the old one (``try``/``except
ImportError``), keeping the name exported here unchanged.

``available_if`` is taken from its public home, ``sklearn.utils.metaestimators``:
the private ``sklearn.utils._available_if`` it is defined in has moved before.
"""

from __future__ import annotations

from sklearn.base import _fit_context
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    InvalidParameterError,
    StrOptions,
    validate_params,
)
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import _check_feature_names, _check_n_features

__all__ = [
    "HasMethods",
    "Interval",
    "InvalidParameterError",
    "StrOptions",
    "_check_feature_names",
    "_check_n_features",
    "_fit_context",
    "available_if",
    "validate_params",
]

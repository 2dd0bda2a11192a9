"""Conditional distributions of the missing entries, row by row.

A density estimator's ``conditionals(X)`` returns one of these
representations; kernels take expectations over them.
"""

from ._base import BaseConditionals
from ._factor_conditionals import FactorConditionals
from ._mixed import MixedConditionals
from ._representations import (
    CategoricalConditionals,
    GaussianConditionals,
    MixtureConditionals,
    SampleConditionals,
    group_patterns,
)

__all__ = [
    "BaseConditionals",
    "CategoricalConditionals",
    "FactorConditionals",
    "GaussianConditionals",
    "MixedConditionals",
    "MixtureConditionals",
    "SampleConditionals",
    "group_patterns",
]

"""Registers the built-in representations of conditionals through the hooks."""

from __future__ import annotations

from .._registry import set_entry_check
from ..hookspecs import hookimpl

# A representation is a class (its tag is the registry name).
set_entry_check("representation", lambda value: isinstance(value, type), "classes")


@hookimpl
def missingkernels_register_representations():  # type: ignore[no-untyped-def]
    from . import (
        CategoricalConditionals,
        FactorConditionals,
        GaussianConditionals,
        MixedConditionals,
        MixtureConditionals,
        SampleConditionals,
    )

    return {
        "categorical": CategoricalConditionals,
        "factor": FactorConditionals,
        "gaussian": GaussianConditionals,
        "mixed": MixedConditionals,
        "mixture": MixtureConditionals,
        "samples": SampleConditionals,
    }

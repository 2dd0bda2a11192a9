"""Registers the built-in representations of conditionals through the hooks."""

from __future__ import annotations

from ..hookspecs import hookimpl


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

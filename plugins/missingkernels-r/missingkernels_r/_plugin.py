"""Registers the R densities through the missingkernels plugin hooks.

Importing this module does not import rpy2 or start R: the classes only touch
R when they are fitted.
"""

from __future__ import annotations

from missingkernels.hookspecs import hookimpl


@hookimpl
def missingkernels_register_densities():  # type: ignore[no-untyped-def]
    from ._amelia import RAmeliaDensity
    from ._mice import RMiceDensity
    from ._norm import RNormDensity

    return {
        "r_amelia": RAmeliaDensity,
        "r_mice": RMiceDensity,
        "r_norm": RNormDensity,
    }

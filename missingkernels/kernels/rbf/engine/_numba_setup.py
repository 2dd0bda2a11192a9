"""How the RBF family's compiled loops are built and loaded.

``FAST`` is the fast-math flag set every loop of the family compiles with
(the engine's and the factor cells'); :func:`lazy_loops` imports a module of
compiled loops on its first use, so that importing the package does not
import numba.
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType

# Let LLVM reassociate sums (vectorised dot products in the small
# factorisations) and fuse multiply-adds; no flag assumes finite values, so
# the positive-definiteness and clipping tests keep their meaning.
FAST = {"reassoc", "contract", "arcp", "nsz"}


@functools.cache
def lazy_loops(module: str, what: str) -> ModuleType:
    """The module of compiled loops ``module`` (dotted, absolute), imported
    on the first call; says once (``missingkernels`` logger) when numba is
    about to compile ``what`` rather than load it from its disk cache."""
    from ...._numba_notice import notice_if_compiling

    loops = importlib.import_module(module)
    notice_if_compiling(loops, what)
    return loops

"""Old module paths of renamed private modules, served from their new homes.

A pickle names each class by the module that defined it (a fitted
:class:`~missingkernels.densities.GaussianEMDensity` inside a fitted estimator
is stored as ``missingkernels.densities._gaussian_em.GaussianEMDensity``), so
renaming a private module would make every pickle written before the rename
fail to load. Rather than leave stub files at the old paths, :data:`MOVED`
maps each old dotted name to the new one, and a finder on ``sys.meta_path``
answers an import of an old name with the new module itself: the same module
object, so a class unpickled under its old path is the class the new path
exports. Add a line to :data:`MOVED` with every ``git mv`` of a module.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType

__all__ = ["MOVED", "install"]

# Old dotted module name -> new dotted module name.
MOVED: dict[str, str] = {
    # issue 50, item 5: names that say what the module holds
    "missingkernels.conditionals._factor": (
        "missingkernels.conditionals._factor_conditionals"
    ),
    "missingkernels.conditionals._gaussian": "missingkernels._gaussian_conditioning",
    "missingkernels.conditionals._patterns": "missingkernels._missing_patterns",
    "missingkernels.densities._em": "missingkernels.densities._base_em",
    "missingkernels.densities._factor": "missingkernels.densities._factor_analysis",
    "missingkernels.experiments._transformers": (
        "missingkernels.experiments._imputation"
    ),
    # issue 50, item 1: the RBF family in one subpackage (kernels/rbf/)
    "missingkernels.kernels._compiled": "missingkernels.kernels.rbf.engine._compiled",
    "missingkernels.kernels._factor": "missingkernels.kernels.rbf.factor._cell",
    "missingkernels.kernels._factor_compiled": (
        "missingkernels.kernels.rbf.factor._compiled"
    ),
    "missingkernels.kernels._factor_layouts": (
        "missingkernels.kernels.rbf.factor._layouts"
    ),
    "missingkernels.kernels._factor_mahalanobis": (
        "missingkernels.kernels.rbf.factor._mahalanobis"
    ),
    "missingkernels.kernels._feature_maps": "missingkernels.kernels.rbf._fourier",
    "missingkernels.kernels._layouts": "missingkernels.kernels.rbf.engine._layouts",
    "missingkernels.kernels._linalg_compiled": (
        "missingkernels.kernels.rbf.engine._linalg_compiled"
    ),
    "missingkernels.kernels._pairs_compiled": (
        "missingkernels.kernels.rbf.engine._pairs_compiled"
    ),
    "missingkernels.kernels._rbf": "missingkernels.kernels.rbf.engine._gram",
    "missingkernels.kernels._rbf_family": "missingkernels.kernels.rbf._kernel",
    "missingkernels.kernels._rows_compiled": (
        "missingkernels.kernels.rbf.engine._rows_compiled"
    ),
    "missingkernels.kernels._sides": "missingkernels.kernels.rbf.engine._sides",
    "missingkernels.kernels._threads": "missingkernels.kernels.rbf.engine._threads",
    "missingkernels.kernels._tiles_compiled": (
        "missingkernels.kernels.rbf.engine._tiles_compiled"
    ),
}


class _Alias(importlib.abc.Loader):
    """Loads an old module name as the already imported new module."""

    def __init__(self, new: str) -> None:
        self.new = new
        self.spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.new)
        self.spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # Between the two calls the import system set ``__spec__`` to the old
        # name's spec: give the module back its own, so that it still reloads
        # and reports itself under its real name.
        module.__spec__ = self.spec


class _MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds the old names of :data:`MOVED` (and nothing else)."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname)
        if new is None:
            return None
        return importlib.util.spec_from_loader(fullname, _Alias(new))


def install() -> None:
    """Put the finder first on ``sys.meta_path``, once per process.

    First, so that a stale file left at an old path is never imported as a
    second copy of the module.
    """
    if not any(isinstance(f, _MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _MovedModuleFinder())

"""The engine's compiled entry points: what its Python side calls (numba).

This is the one module :func:`._numba_setup.lazy_loops` loads (on the first
Gram, not at import), so that a first use compiles, or loads from numba's
disk cache, every loop of the engine at once and says so once. Each loop
module carries its own formulas: :mod:`._pairs_compiled` (pattern pairs,
both metrics), :mod:`._rows_compiled` (the Schur row-pair loop),
:mod:`._tiles_compiled` (the Euclidean shared-feature row-pair loop),
:mod:`._linalg_compiled` (factorisations and per-pattern factors) and
:mod:`._fourier_compiled` (the expected Fourier features, row by row, and
their normalisers).

All functions release the GIL: the caller runs them on several threads over
disjoint sets of output rows. A side (rows of one argument of the Gram) is a
:class:`._layouts.SideArrays`; the per-pattern Mahalanobis factors are a
:class:`._layouts.MahalanobisFactors`.
"""

from __future__ import annotations

from ._fourier_compiled import fourier_rows, self_logs
from ._linalg_compiled import mahalanobis_factors, schur_row_factors
from ._pairs_compiled import mirror_by_rank, rbf_aligned, rbf_pairs
from ._rows_compiled import LANES, rbf_rows
from ._tiles_compiled import TILE, rbf_tiles

__all__ = [
    "LANES",
    "TILE",
    "fourier_rows",
    "mahalanobis_factors",
    "mirror_by_rank",
    "rbf_aligned",
    "rbf_pairs",
    "rbf_rows",
    "rbf_tiles",
    "schur_row_factors",
    "self_logs",
]

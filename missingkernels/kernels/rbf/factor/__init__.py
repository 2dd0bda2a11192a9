"""The RBF over factor conditionals (diagonal plus low rank): its cell.

:data:`FACTOR_CELL` computes the Gram, the variance and the expected Fourier
features of the RBF between rows whose missing entries follow a
factor-analytic density, with work per pair of rows in the number of
factors, not of missing features (:mod:`._cell`, Euclidean metric;
:mod:`._mahalanobis`, the density's own Mahalanobis metric; the compiled
finish in :mod:`._compiled`; tiles and subset-sum tables in
:mod:`._layouts`). Registered by :mod:`missingkernels.kernels.rbf`.
"""

from ._cell import FACTOR_CELL

__all__ = ["FACTOR_CELL"]

"""Data layouts of the compiled RBF loops: the named tuples they take.

numba reads a named tuple's fields by name; the loops (:mod:`._compiled`)
import these types for their annotations only, and :mod:`._gram` builds them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["MahalanobisFactors", "RowFactors", "SideArrays", "SortedRows"]


class SideArrays(NamedTuple):
    """The arrays of one side, as the compiled loops take them (numba reads a
    named tuple's fields by name). ``P`` patterns, ``k`` = the largest number
    of missing features (at least 1); unused fields hold placeholders."""

    x: np.ndarray  # (n, d) centred rows; whitened ``W x`` for Mahalanobis
    z: np.ndarray  # (n, d) centred rows times ``G`` (Mahalanobis), else ``x``
    order: np.ndarray  # (n,) rows sorted by pattern (:class:`._sides.Packed`)
    start: np.ndarray  # (P + 1,) rows of p are ``order[start[p]:start[p + 1]]``
    mask: np.ndarray  # (P, d) missing features of each pattern
    cov: np.ndarray  # (P, k, k) compact covariance blocks (Euclidean)
    missing: np.ndarray  # (P, k) missing features of each pattern, sorted
    n_missing: np.ndarray  # (P,) number of missing features
    factor_t: np.ndarray  # (P, k, k) ``F^T``, ``F F^T = C`` (Mahalanobis)
    gfactor_t: np.ndarray  # (P, k, d) ``(G[:, J] F)^T`` (Mahalanobis)
    inner: np.ndarray  # (P, k, k) ``F^T G[J, J] F`` (Mahalanobis)
    own: np.ndarray  # (n, k) ``F^T z[J]`` of each row (Mahalanobis)
    off: np.ndarray  # (n,) offsets added inside the exponent
    weight: np.ndarray  # (n,) weights of accumulated Grams


class MahalanobisFactors(NamedTuple):
    """Per-pattern factors of a side (:func:`._compiled.mahalanobis_factors`)."""

    logdet: np.ndarray  # (P,) ``log det K_p``
    w_t: np.ndarray  # (P, k, k) ``L_p^-1 F_p^T``
    v_t: np.ndarray  # (P, k, d) ``L_p^-1 (G F_p)^T``
    own_w: np.ndarray  # (n, k) ``L_p^-1 F_p^T z_i[J_p]``


class RowFactors(NamedTuple):
    """Per-pattern factors of a side for the row-pair loops
    (:func:`._compiled.rbf_tiles`, Euclidean; :func:`._compiled.rbf_rows`,
    Mahalanobis), at one ``gamma``; see :func:`._gram.row_factors`.

    Euclidean (``P_p = I + 2 gamma C_p``): ``logdet = log det P_p``,
    ``dmat = D_p = I - P_p^-1``, ``root`` = upper triangular ``R_p`` with
    ``R_p^T R_p = D_p``, ``pinv = P_p^-1``. Mahalanobis (``Lam`` the precision
    of the metric): ``logdet = log det(I + 2 gamma C_p Lam[J_p, J_p])``,
    ``gmat = G_p = (C_p^-1 / (2 gamma) + Lam[J_p, J_p])^-1`` and its upper
    triangular ``root`` (``R_p^T R_p = G_p``), ``cinv`` the lower triangles
    of ``(2 gamma C_p)^-1 + Lam[J_p, J_p]``,
    packed by rows (pattern ``p``'s from ``cstart[p]``: entry ``(a, b <= a)``
    at ``cstart[p] + a (a + 1) / 2 + b``, so that the loop streams them from
    cache) and
    ``logdet_c = log det(2 gamma C_p)`` (``pivot_ratio``: the smallest
    squared Cholesky pivot of a ``C_p`` relative to its largest variance,
    about the reciprocal of the largest condition number, 0 if a ``C_p`` is
    singular; see :func:`._gram._schur_error`). Fields of the other metric hold
    placeholders.
    """

    pattern: np.ndarray  # (n,) pattern of each row
    position: np.ndarray  # (P, d) position of each feature in J_p, or -1
    logdet: np.ndarray  # (P,)
    gmat: np.ndarray  # (P, k, k) (Mahalanobis)
    cinv: np.ndarray  # (sum k_p (k_p + 1) / 2,) (Mahalanobis)
    cstart: np.ndarray  # (P,) (Mahalanobis)
    logdet_c: np.ndarray  # (P,) (Mahalanobis)
    pivot_ratio: float  # (Mahalanobis)
    dmat: np.ndarray  # (P, k, k) (Euclidean)
    root: np.ndarray  # (P, k, k)
    pinv: np.ndarray  # (P, k, k) (Euclidean)


class SortedRows(NamedTuple):
    """The rows of a side sorted by their number of missing features (ties
    by row), for :func:`._compiled.rbf_rows`; see :func:`._sides.sorted_rows`."""

    order: np.ndarray  # (n,) rows in sorted order
    rank: np.ndarray  # (n,) position of each row in ``order``
    start: np.ndarray  # (K + 2,) rows with k missing: ``order[start[k]:start[k + 1]]``
    xT: np.ndarray  # (d, n) ``x`` of the sorted rows, transposed
    zT: np.ndarray  # (d, n) ``z`` of the sorted rows, transposed

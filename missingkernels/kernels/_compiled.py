"""Compiled inner loops of the expected RBF kernel (numba).

The expected RBF between ``X ~ N(a, A)`` and ``Y ~ N(b, B)`` (see
``docs/theory.rst``, "Fast exact computation by pattern pairs") depends on
the pair of missing patterns only through their covariance blocks. The
loops below factor small matrices once per pattern pair, transform the rows
of both patterns, then finish every row pair with O(d) work: there is no
d x d factorisation per pair of rows.

Euclidean metric (the union of the two patterns, ``U = J_a | J_b``)::

    log E = -1/2 logdet(I + 2 gamma C_U)
            - gamma (||delta_V||^2 + ||L^-1 delta_U||^2),   L L^T = I + 2 gamma C_U

with ``C_U = (A + B)[U, U]`` and ``V`` the coordinates observed in both rows.
Both squared norms come from differences of transformed rows, never as a
difference of two large terms, so the exponent keeps its relative precision
at any ``gamma``.

Mahalanobis metric (``G = S^-1``, whitening ``W^T W = G``). With per-pattern
factors ``C_p = F_p F_p^T``, the whitened covariances are ``Fw_p Fw_p^T``,
``Fw_p = W E_p F_p`` (``E_p`` embeds the missing features of ``p``).
With ``Fw = [Fw_p, Fw_q]`` (Woodbury)::

    log E = -1/2 logdet(I + 2 gamma Fw^T Fw)
            - gamma (||W delta||^2 - 2 gamma beta^T (I + 2 gamma Fw^T Fw)^-1 beta)

``beta = Fw^T W delta = [F_p^T (G delta)[J_p]; F_q^T (G delta)[J_q]]``.
The matrix ``I + 2 gamma Fw^T Fw`` has the per-pattern diagonal blocks
``K_p = I + 2 gamma F_p^T G[J_p, J_p] F_p`` (factored once per pattern) and the
cross block ``2 gamma F_p^T G[J_p, J_q] F_q``: per pattern pair only the Schur
complement of ``K_p`` (size ``|J_q|``) is factored. The bracket equals
``(W delta)^T (I + 2 gamma Fw Fw^T)^-1 (W delta) >= 0``; it is clipped at 0
against rounding.

The loops live in :mod:`._pairs_compiled` (pattern pairs),
:mod:`._rows_compiled` (Mahalanobis row pairs), :mod:`._tiles_compiled`
(Euclidean row pairs) and :mod:`._linalg_compiled` (factorisations and
per-pattern factors); this module gathers their entry points, the names the
callers use.

All functions release the GIL: the caller runs them on several threads over
disjoint sets of output rows.

A side (rows of one argument of the Gram) is a :class:`._layouts.SideArrays`
named tuple (its fields are documented there); the per-pattern Mahalanobis
factors are a :class:`._layouts.MahalanobisFactors`.
"""

from __future__ import annotations

from ._linalg_compiled import mahalanobis_factors, schur_row_factors
from ._pairs_compiled import mirror_by_rank, rbf_aligned, rbf_pairs
from ._rows_compiled import LANES, rbf_rows
from ._tiles_compiled import TILE, rbf_tiles

__all__ = [
    "LANES",
    "TILE",
    "mahalanobis_factors",
    "mirror_by_rank",
    "rbf_aligned",
    "rbf_pairs",
    "rbf_rows",
    "rbf_tiles",
    "schur_row_factors",
]

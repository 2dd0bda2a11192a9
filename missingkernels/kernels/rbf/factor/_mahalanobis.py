"""The RBF over factor conditionals in the Mahalanobis metric of the density.

With ``Lam = S^-1``, ``S = W W^T + Psi`` the density's covariance, and
``u = 2 gamma`` (``docs/theory.rst``, "Factor-analytic density")::

    E k = det(I + u C Lam)^-1/2 exp(-gamma delta^T (S + u C)^-1 delta),

``C = A_i + A_j``. ``S + u C = D + Z Sig Z^T`` with ``D = Psi (1 + u (m_i +
m_j))`` diagonal, ``Z = [W, M_i W, M_j W]`` (``M`` the masks of the missing
features) and ``Sig = diag(I, u S_i, u S_j)`` (``S_i`` the posterior
covariance of the factors). The weights ``1 / (1 + u (m_i + m_j))`` depend on
the features only through ``psi``, so every pair-dependent block of
``Z^T D^-1 Z`` is a multiple of one sum over ``J_i & J_j``,
``N = sum w_k w_k^T / psi_k``: with ``K3 = Sig^-1 + Z^T D^-1 Z`` (size
``3q``) and ``beta = Z^T D^-1 delta``::

    log det(I + u C Lam) = log det D - sum log psi + 2q log u - log det P_i
                           - log det P_j + log det K3 - log det(I + F),
    delta^T (S + u C)^-1 delta = delta^T D^-1 delta - beta^T K3^-1 beta,

``P_i = S_i^-1`` and ``F = W^T Psi^-1 W``. The sums over features are matrix
products over tiles of rows, as in the Euclidean metric (:mod:`._cell`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....conditionals import FactorConditionals
from ._layouts import by_tiles, group_bits, lower_indices, mask_codes, pair_table

__all__: list[str] = []


class MahalanobisFactorSide:
    """The rows of one argument at one ``gamma``, Mahalanobis metric."""

    def __init__(
        self, c: FactorConditionals, center: np.ndarray, gamma: float, B: int
    ) -> None:
        u = self.u = 2.0 * gamma
        self.a = a = 1.0 / (1.0 + u) - 1.0
        self.e = 1.0 / (1.0 + 2.0 * u) - 1.0 - 2.0 * a
        self.L1, self.L2 = float(np.log1p(u)), float(np.log1p(2.0 * u))
        self.B = B
        q = self.q = c.n_factors
        psi, W = c.noise, c.loadings
        d = len(psi)
        self.x = x = np.ascontiguousarray(c.means - center, dtype=np.float64)
        self.m = m = c.missing.astype(np.float64)
        self.y = y = x / np.sqrt(psi)
        self.omega = omega = W / psi[:, None]
        outer = (W[:, :, None] * omega[:, None, :]).reshape(d, q * q)
        F = W.T @ omega
        self.C00 = np.eye(q) + F
        self.ldF = float(np.linalg.slogdet(self.C00)[1])
        self.Fi = np.ascontiguousarray((m @ outer).reshape(-1, q, q))
        self.Pu = np.ascontiguousarray((self.C00 - self.Fi) / u)
        roots = c.roots[c.pattern_index]
        self.ldP = -2.0 * np.log(np.abs(np.diagonal(roots, axis1=1, axis2=2))).sum(1)
        self.r0 = ((1.0 + a * m) * x) @ omega
        self.r1 = (1.0 + a) * ((m * x) @ omega)
        self.nJ = m.sum(axis=1)
        self.cq = ((1.0 + a * m) * y * y).sum(axis=1)
        A, Bi = lower_indices(q)
        self.wwpsi = W[:, A] * omega[:, Bi]  # (d, s)
        self.bits = group_bits(d, q)
        self.codes = mask_codes(c.missing, self.bits)
        self._right: dict[str, Any] | None = None
        # Independent copies: the pair formula with j = i (N = F_i, delta = 0).
        self.self_log = self._self_log()

    @property
    def n(self) -> int:
        return int(self.x.shape[0])

    def _K3(self, i: Any, j: Any, N: np.ndarray) -> np.ndarray:
        """``K3`` for rows ``i`` and ``j`` (arrays of rows) with ``N``."""
        q, a, e, u = self.q, self.a, self.e, self.u
        Fi, Fj = self.Fi[i], self.Fi[j]
        K = np.empty((len(N), 3 * q, 3 * q))
        K[:, :q, :q] = self.C00 + a * (Fi + Fj) + e * N
        K[:, q : 2 * q, :q] = (1 + a) * Fi + (a + e) * N
        K[:, 2 * q :, :q] = (1 + a) * Fj + (a + e) * N
        K[:, q : 2 * q, q : 2 * q] = self.Pu[i] + (1 + a) * Fi + (a + e) * N
        K[:, 2 * q :, 2 * q :] = self.Pu[j] + (1 + a) * Fj + (a + e) * N
        K[:, 2 * q :, q : 2 * q] = N / (1.0 + 2.0 * u)
        upper = np.triu_indices(3 * q, 1)
        K[:, upper[0], upper[1]] = K[:, upper[1], upper[0]]
        return K

    def _self_log(self) -> np.ndarray:
        rows = np.arange(self.n)
        K = self._K3(rows, rows, self.Fi)
        chol = np.linalg.cholesky(K)
        logdet = 2.0 * np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1)
        ld = (
            2.0 * self.L1 * self.nJ
            + (self.L2 - 2.0 * self.L1) * self.nJ
            + 2 * self.q * np.log(self.u)
            - 2.0 * self.ldP
            - self.ldF
        )
        return np.asarray(-0.5 * (ld + logdet))

    def left(self, rows: slice) -> dict[str, np.ndarray]:
        a, e = self.a, self.e
        x, m, y = self.x[rows], self.m[rows], self.y[rows]
        alpha, beta = 1.0 + a * m, a + e * m
        c = np.ascontiguousarray
        return {
            "m": c(m),
            "xs": c(np.vstack([x, m * x])),
            "quad": c(np.hstack([beta * y * y, -2.0 * alpha * y, -2.0 * beta * y])),
        }

    def right(self) -> dict[str, Any]:
        if self._right is None:
            a, e, q, B = self.a, self.e, self.q, self.B
            x, m, y = by_tiles(self.x, B), by_tiles(self.m, B), by_tiles(self.y, B)
            T, d = x.shape[:2]
            S = self.wwpsi.shape[1]
            # N and |J_i & J_j| from the subset-sum table (as in _cell).
            values = np.zeros((d, -(-(S + 1) // 8) * 8))
            values[:, :S] = self.wwpsi
            values[:, S] = 1.0
            blocks = np.empty((T, d, 2 * q + 1, B))
            mx = m * x
            mw = np.empty((T, d, q, B))
            for b in range(q):
                om = self.omega[:, b, None]
                np.multiply(x, om, out=blocks[:, :, b])
                np.multiply(mx, om, out=blocks[:, :, q + b])
                np.multiply(m, om, out=mw[:, :, b])
            np.multiply(a + e * m, y * y, out=blocks[:, :, 2 * q])
            self._right = {
                "table": pair_table(values, self.bits),
                "m": blocks,
                "mw": mw,
                "quad": np.ascontiguousarray(np.concatenate([m, y, m * y], axis=1)),
            }
        return self._right

    def tile_rows(
        self,
        loops: Any,
        b: MahalanobisFactorSide,
        tiles: np.ndarray,
        rows_per_tile: int,
        gamma: float,
        symmetric: bool,
        off_a: np.ndarray,
        off_b: np.ndarray,
        out: np.ndarray,
    ) -> int:
        """The pairs of the row tiles ``tiles`` with every column tile."""
        R = b.right()
        q, B = self.q, self.B
        consts = np.array(
            [self.a, self.e, self.u, self.L1, self.L2,
             2 * q * np.log(self.u) - self.ldF],
        )  # fmt: skip
        for t in tiles:
            i0 = int(t) * rows_per_tile
            rows = slice(i0, min(i0 + rows_per_tile, self.n))
            r = rows.stop - i0
            Lf = self.left(rows)
            for g in range(R["m"].shape[0]):
                j0 = g * B
                if symmetric and j0 > rows.stop - 1:
                    break
                nbt = min(B, b.n - j0)
                G1 = (Lf["m"] @ R["m"][g].reshape(R["m"].shape[1], -1)).reshape(
                    r, 2 * q + 1, B
                )
                G2 = (Lf["xs"] @ R["mw"][g].reshape(R["mw"].shape[1], -1)).reshape(
                    2, r, q, B
                )
                G4 = Lf["quad"] @ R["quad"][g]
                code = loops.finish_tile_mahalanobis(
                    i0, j0, nbt, G1, G2[0], G2[1], G4, consts, self.C00,
                    self.Fi, self.Pu, self.ldP, self.r0, self.r1, self.cq, self.nJ,
                    off_a, b.Fi, b.Pu, b.ldP, b.r0, b.r1, b.cq, b.nJ, off_b,
                    R["table"], self.codes, b.codes,
                    float(gamma), bool(symmetric), out,
                )  # fmt: skip
                if code:
                    return int(code)
        return 0

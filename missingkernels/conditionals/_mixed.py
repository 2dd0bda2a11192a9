"""Conditionals of mixed-type rows: latent classes, Gaussian numeric columns
and independent categorical nominal columns within each class."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ._base import BaseConditionals, Variates, check_n_draws
from ._representations import (
    MixtureConditionals,
    PatternFactors,
    SampleConditionals,
    _fill_gaussian,
)

__all__ = ["MixedConditionals", "category_blocks", "one_hot_codes"]


def category_blocks(sizes: Sequence[int]) -> list[slice]:
    """The columns of each nominal column in a concatenation of one block of
    ``sizes[v]`` columns per nominal column (one-hot codes, PMFs)."""
    edges = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    return [slice(int(a), int(b)) for a, b in itertools.pairwise(edges)]


def one_hot_codes(codes: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """``(n, sum C_v)``: the observed codes one-hot per nominal column, zeros
    where missing."""
    out = np.zeros((len(codes), int(sum(sizes))))
    for v, block in enumerate(category_blocks(sizes)):
        col = codes[:, v]
        obs = np.flatnonzero(~np.isnan(col))
        out[obs, block.start + col[obs].astype(np.intp)] = 1.0
    return out


@dataclass(frozen=True, eq=False)
class MixedConditionals(BaseConditionals):
    """Per-row latent-class mixtures over numeric and nominal columns.

    Row ``i`` is distributed as ``sum_k weights[i, k] P_ik``: given class
    ``k``, its missing numeric entries are Gaussian (``numeric.component(k)``,
    conditioned on the observed numeric entries) and each missing nominal
    entry ``v`` is independent with the class PMF ``probabilities[v][k]``.
    ``weights[i]`` is the posterior of the classes given every observed entry
    of the row, numeric and nominal.

    Parameters
    ----------
    nominal : ndarray of shape (n_features,), dtype bool
        True for the nominal columns; the others are numeric.
    weights : ndarray of shape (n_samples, n_components)
        Posterior class probabilities of each row.
    numeric : MixtureConditionals or None
        The numeric columns (in their order), with the same ``weights``;
        None when there is no numeric column.
    codes : ndarray of shape (n_samples, n_nominal)
        The nominal columns' category codes ``0 .. C_v - 1``, NaN where missing.
    probabilities : tuple of ndarray
        ``probabilities[v]`` of shape ``(n_components, C_v)``: the class PMFs
        of nominal column ``v`` over its codes.
    missing : ndarray of shape (n_samples, n_features), dtype bool
        True where the entry was missing.
    """

    domain: ClassVar[str | None] = "mixed"

    nominal: np.ndarray
    weights: np.ndarray
    numeric: MixtureConditionals | None
    codes: np.ndarray
    probabilities: tuple[np.ndarray, ...]
    missing: np.ndarray

    def __post_init__(self) -> None:
        n, K = self.weights.shape
        q = int(self.nominal.sum())
        if self.missing.shape != (n, len(self.nominal)):
            raise ValueError(
                "MixedConditionals: missing must have shape (n_samples, "
                f"n_features) = {(n, len(self.nominal))}, got {self.missing.shape}."
            )
        if self.codes.shape != (n, q) or len(self.probabilities) != q:
            raise ValueError(
                f"MixedConditionals: {q} nominal columns need codes of shape "
                f"{(n, q)} and {q} probability tables; got {self.codes.shape} "
                f"and {len(self.probabilities)}."
            )
        for v, p in enumerate(self.probabilities):
            if p.ndim != 2 or p.shape[0] != K:
                raise ValueError(
                    f"MixedConditionals: probabilities[{v}] must have shape "
                    f"(n_components={K}, n_categories), got {p.shape}."
                )
        if (self.numeric is None) != (q == len(self.nominal)):
            raise ValueError(
                "MixedConditionals: numeric must describe the numeric columns "
                "(None exactly when every column is nominal)."
            )

    @property
    def n_samples(self) -> int:
        return int(self.weights.shape[0])

    @property
    def n_features(self) -> int:
        return len(self.nominal)

    @property
    def n_components(self) -> int:
        """The number of latent classes."""
        return int(self.weights.shape[1])

    @property
    def n_nominal(self) -> int:
        """The number of nominal columns."""
        return int(self.codes.shape[1])

    @property
    def category_sizes(self) -> list[int]:
        """The number of categories of each nominal column."""
        return [table.shape[1] for table in self.probabilities]

    def class_pmfs(self, k: int, rows: slice | np.ndarray | None = None) -> np.ndarray:
        """``(n_rows, sum_v C_v)``: per row, the distribution of each nominal
        column under class ``k`` (one-hot where observed), concatenated.

        ``class_pmfs(k) @ class_pmfs(l).T`` counts the expected matching
        nominal columns of two independent rows in classes ``k`` and ``l``.
        """
        rows = slice(None) if rows is None else rows
        codes = self.codes[rows]
        sizes = self.category_sizes
        out = one_hot_codes(codes, sizes)
        for v, block in enumerate(category_blocks(sizes)):
            out[np.isnan(codes[:, v]), block] = self.probabilities[v][k]
        return out

    def _nominal_moments(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Per row and nominal column under class ``k``: ``E code`` and
        ``Var code`` (0 where observed)."""
        mean = np.array(self.codes, dtype=np.float64, copy=True)
        var = np.zeros_like(mean)
        for v, table in enumerate(self.probabilities):
            miss = np.isnan(mean[:, v])
            if miss.any():
                c = np.arange(table.shape[1], dtype=np.float64)
                m1 = float(c @ table[k])
                mean[miss, v] = m1
                var[miss, v] = float(c**2 @ table[k]) - m1 * m1
        return mean, var

    def _class_means(self, k: int) -> np.ndarray:
        """``(n, d)``: the rows' means under class ``k`` (codes for nominal)."""
        out = np.empty((self.n_samples, self.n_features))
        if self.numeric is not None:
            out[:, ~self.nominal] = self.numeric.means[k]
        out[:, self.nominal] = self._nominal_moments(k)[0]
        return out

    def first_moments(self) -> np.ndarray:
        """``E[X_i] = sum_k w_ik E_k[X_i]`` (nominal columns: the code's mean)."""
        out = np.zeros((self.n_samples, self.n_features))
        for k in range(self.n_components):
            out += self.weights[:, k, None] * self._class_means(k)
        return out

    def second_moments(self, rows: slice | np.ndarray | None = None) -> np.ndarray:
        """``E[X_i X_i^T] = sum_k w_ik (m_ik m_ik^T + C_ik)``: within a class
        the blocks and the nominal columns are independent, so ``C_ik`` holds
        the numeric conditional covariance and the codes' variances."""
        rows = slice(None) if rows is None else rows
        w = self.weights[rows]
        num = np.flatnonzero(~self.nominal)
        nom = np.flatnonzero(self.nominal)
        covs = None if self.numeric is None else self.numeric.embedded_covariances()
        index = None if self.numeric is None else self.numeric.pattern_index[rows]
        total = np.zeros((len(w), self.n_features, self.n_features))
        for k in range(self.n_components):
            m = self._class_means(k)[rows]
            M = np.einsum("ni,nj->nij", m, m)
            if covs is not None and index is not None:
                M[:, num[:, None], num[None, :]] += covs[k][index]
            var = self._nominal_moments(k)[1][rows]
            M[:, nom, nom] += var
            total += w[:, k, None, None] * M
        return total

    def sample(
        self, n_draws: int, random_state: Any = None, *, by_row: bool = True
    ) -> SampleConditionals:
        """Draw a class by the row's weights, then its Gaussian numeric block
        and its categorical nominal entries.

        See :meth:`BaseConditionals.sample`.
        """
        n_draws = check_n_draws(n_draws)
        n = self.n_samples
        every = np.arange(n)
        keys = np.where(self.missing, np.nan, self.first_moments())
        variates = Variates(random_state, by_row, keys, self.missing)
        cum = np.cumsum(self.weights, axis=1)
        num = np.flatnonzero(~self.nominal)
        nom = np.flatnonzero(self.nominal)
        out = np.empty((n_draws, n, self.n_features))
        if self.numeric is not None:
            c = self.numeric
            factors = PatternFactors(c.patterns, c.pattern_index, c.covariances)
        for m in range(n_draws):
            u = variates.uniform(every, m, 1) * cum[:, -1:]
            comp = np.minimum((u > cum).sum(axis=1), self.n_components - 1)
            if self.numeric is not None:
                c = self.numeric
                block = c.means[comp, every]
                _fill_gaussian(block, c.means, factors, comp, variates, m)
                out[m][:, num] = block
            codes = np.array(self.codes, dtype=np.float64, copy=True)
            if len(nom):
                # Purpose 2: these uniforms are independent of the class draw.
                uv = variates.uniform(every, m, len(nom), purpose=2)
                for v, table in enumerate(self.probabilities):
                    miss = np.flatnonzero(np.isnan(codes[:, v]))
                    if not miss.size:
                        continue
                    cdf = np.cumsum(table[comp[miss]], axis=1)
                    pick = (uv[miss, v, None] * cdf[:, -1:] > cdf).sum(axis=1)
                    codes[miss, v] = np.minimum(pick, table.shape[1] - 1)
                out[m][:, nom] = codes
        return SampleConditionals(samples=out, missing=self.missing)

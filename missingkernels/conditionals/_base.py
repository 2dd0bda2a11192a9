"""The protocol every representation of conditionals follows."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from sklearn.utils import check_random_state

from .._numerics import RowStreams, row_keys, seed_of

__all__ = ["BaseConditionals"]

# Rows per block when a computation needs (rows x d^2) temporaries.
BLOCK_ELEMENTS = 1 << 22


class BaseConditionals:
    """Base class of the per-row conditional distributions of missing entries.

    A representation describes, for each of ``n_samples`` rows, the
    distribution of the row given its observed entries (observed entries are
    constants, missing ones random). It owns its maths: subclasses implement
    :meth:`first_moments`, :meth:`second_moments` and :meth:`sample`;
    :meth:`implied_covariance` follows from them. Kernels take expectations
    over representations through the expectation table (cells,
    :class:`missingkernels.kernels.Expectation`, registered by the hook
    ``missingkernels_register_expectations``); a representation
    that can :meth:`sample` works with every base kernel through the average
    over pairs of draws.

    Subclasses are (frozen) containers with at least the attribute
    ``missing`` (boolean, shape ``(n_samples, n_features)``, True where the
    entry was missing) and the properties ``n_samples`` and ``n_features``.
    """

    #: What the rows hold: ``"numeric"``, ``"nominal"`` (category codes), or
    #: None (either: e.g. draws). The draws fallback pairs a base kernel only
    #: with representations of a domain it declares.
    domain: ClassVar[str | None] = None

    missing: np.ndarray

    @property
    def n_samples(self) -> int:  # pragma: no cover - overridden
        """The number of rows."""
        return int(self.missing.shape[0])

    @property
    def n_features(self) -> int:  # pragma: no cover - overridden
        """The number of features."""
        return int(self.missing.shape[1])

    def first_moments(self) -> np.ndarray:
        """``E[X_i]`` of every row, shape ``(n_samples, n_features)``.

        Observed entries are returned unchanged.
        """
        raise NotImplementedError

    def second_moments(self, rows: slice | np.ndarray | None = None) -> np.ndarray:
        """``E[X_i X_i^T]`` of the rows, shape ``(n_rows, n_features, n_features)``.

        Parameters
        ----------
        rows : slice or array of int, optional
            The rows (all by default). Memory is ``n_rows * n_features**2``:
            take blocks of rows for large data.
        """
        raise NotImplementedError

    def sample(
        self, n_draws: int, random_state: Any = None, *, by_row: bool = True
    ) -> Any:
        """Draw completions of every row.

        With ``by_row=True`` (the default, and the contract for every
        representation) the draws of a row are a function of that row's
        distribution, ``n_draws`` and ``random_state`` only: a row drawn alone
        gets the same completions as within any batch, so the rows of a
        training set keep their draws when they come back as support vectors
        or test rows.

        Parameters
        ----------
        n_draws : int
            Number of completions per row.
        random_state : int, RandomState instance or None
            Seeds the draws (an int seeds them reproducibly; otherwise one
            seed is drawn from it).
        by_row : bool, default=True
            False draws from one generator over the whole batch, as
            scikit-learn's imputers do (a row's draws then depend on the
            other rows); kept to reproduce imputation baselines.

        Returns
        -------
        draws : SampleConditionals
            ``draws.samples[m, i]`` is the m-th completion of row ``i``;
            observed entries are identical in every draw.
        """
        raise NotImplementedError

    def joint_covariance(self, density: Any = None) -> np.ndarray:
        """The joint covariance of the rows, e.g. for a Mahalanobis metric.

        The fitted density's own covariance where the representation has
        one (Gaussian conditionals), else :meth:`implied_covariance`.

        Parameters
        ----------
        density : density estimator, optional
            The fitted density the conditionals come from.

        Returns
        -------
        covariance : ndarray of shape (n_features, n_features)
        """
        return self.implied_covariance()

    def implied_covariance(self) -> np.ndarray:
        """The covariance of the rows the representation implies.

        ``mean_i E[X_i X_i^T] - m m^T`` with ``m = mean_i E[X_i]``: the law
        of total covariance over the rows. For the training rows of a
        Gaussian density this is the fitted covariance; for a mixture or for
        draws, the covariance of the completed data the density implies.

        Returns
        -------
        covariance : ndarray of shape (n_features, n_features)
        """
        m = self.first_moments()
        n, d = m.shape
        mean = m.mean(axis=0)
        total = np.zeros((d, d))
        block = max(1, BLOCK_ELEMENTS // max(1, d * d))
        for s in range(0, n, block):
            total += self.second_moments(slice(s, s + block)).sum(axis=0)
        return total / n - np.outer(mean, mean)


class Variates:
    """The random numbers behind :meth:`BaseConditionals.sample`.

    Row-keyed (``by_row=True``): each number is a function of the row's key,
    the seed, the draw, a purpose and a column, through
    :class:`~missingkernels._numerics.RowStreams`. Batch: one generator,
    consumed in call order.
    """

    def __init__(
        self, random_state: Any, by_row: bool, values: np.ndarray, missing: np.ndarray
    ) -> None:
        self.streams: RowStreams | None = None
        self.rng: Any = None
        if by_row:
            self.streams = RowStreams(row_keys(values, missing), seed_of(random_state))
        else:
            self.rng = check_random_state(random_state)

    def normal(self, rows: np.ndarray, draw: int, size: int) -> np.ndarray:
        """``(len(rows), size)`` standard normals."""
        if self.streams is None:
            return np.asarray(self.rng.standard_normal((len(rows), size)))
        return self.streams.take(rows).normal(draw, size)

    def normal_draws(self, rows: np.ndarray, n_draws: int, size: int) -> np.ndarray:
        """``(n_draws, len(rows), size)``: :meth:`normal` of draws 0 to
        ``n_draws - 1`` stacked (row-keyed streams only)."""
        assert self.streams is not None
        return self.streams.take(rows).normal_draws(n_draws, size)

    def uniform(
        self, rows: np.ndarray, draw: int, size: int, purpose: int = 1
    ) -> np.ndarray:
        """``(len(rows), size)`` uniforms on (0, 1)."""
        if self.streams is None:
            return np.asarray(self.rng.random_sample((len(rows), size)))
        return self.streams.take(rows).uniform(draw, size, purpose)

    def integers(self, rows: np.ndarray, draw: int, high: int) -> np.ndarray:
        """``len(rows)`` integers, uniform on ``0 .. high - 1``."""
        if self.streams is None:
            return np.asarray(self.rng.randint(high, size=len(rows)))
        u = self.streams.take(rows).uniform(draw, 1, purpose=1)[:, 0]
        return np.minimum((u * high).astype(np.intp), high - 1)


def check_n_draws(n_draws: Any) -> int:
    """``n_draws`` as a positive int, or a ValueError saying what was wrong."""
    if isinstance(n_draws, bool) or not isinstance(n_draws, int | np.integer):
        raise TypeError(f"n_draws must be a positive int, got {n_draws!r}.")
    if n_draws < 1:
        raise ValueError(f"n_draws must be a positive int, got {n_draws}.")
    return int(n_draws)

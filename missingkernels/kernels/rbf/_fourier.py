"""Expected Fourier features of the RBF: ``psi(x)^T psi(y) ~ E k(X, Y)``.

Random Fourier features for the RBF family, averaged in closed form over Gaussian
conditionals: for ``w`` a frequency and ``X ~ N(mu, C)``,
``E exp(i w^T X) = exp(-w^T C w / 2) exp(i w^T mu)``, so the paired map
``[cos(W mu), sin(W mu)] * exp(-diag(W C W^T) / 2) / sqrt(D/2)`` has inner
products whose average over frequencies ``w ~ N(0, 2 gamma I)`` is the
expected RBF between independent rows (only the missing block of ``C``
enters). Mixtures average their components' features by the row's weights;
draws average the features of the draws (the table's generic average).
genRBF's normalisation divides each
row's features by ``sqrt(E k(X_i, X_i'))``, computed exactly.

The features of Gaussian conditionals (and of mixtures, summed over the
components; of complete rows, undamped) are computed by one compiled pass
per row (:mod:`.engine._fourier_compiled`), on threads over disjoint rows,
in float64 and stored in the map's ``dtype``, into the caller's array where
one is given (``FourierMap.out``): no temporary of the output's size.

See ``docs/theory.rst``, "Expected kernel features".
"""

from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ...conditionals import GaussianConditionals, MixtureConditionals
from . import engine

__all__ = ["FourierMap"]


@dataclass(frozen=True)
class FourierMap:
    """Random Fourier features of the RBF on complete rows (paired cos/sin).

    ``omega`` holds the frequencies in the data's coordinates (for the
    Mahalanobis metric, whitened frequencies mapped back), ``center`` the
    point the rows are taken from (the kernel is translation invariant),
    ``dtype`` that of the features (computed in float64, rounded once when
    stored: see :mod:`.engine._fourier_compiled`). ``out``, if given, is
    where the features of conditionals (:func:`gaussian_fourier`,
    :func:`mixture_fourier`) are written, rows and dtype matching: the
    caller's output array, so that no copy is made (:meth:`transform`
    ignores it).
    """

    omega: np.ndarray  # (n_frequencies, n_features)
    center: np.ndarray  # (n_features,)
    dtype: str = "float64"
    out: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def n_components(self) -> int:
        return 2 * self.omega.shape[0]

    def with_dtype(self, dtype: Any) -> FourierMap:
        """This map, returning features of ``dtype`` (float32 or float64)."""
        name = np.dtype(dtype).name
        return self if name == self.dtype else replace(self, dtype=name)

    def writing_to(self, out: np.ndarray | None) -> FourierMap:
        """This map, writing the features of conditionals into ``out``."""
        return replace(self, out=out)

    def _output(self, n: int) -> np.ndarray:
        """``out`` if it fits ``n`` rows (C-contiguous, this map's dtype and
        width), else a new array."""
        out, shape = self.out, (n, self.n_components)
        if (
            out is not None
            and out.shape == shape
            and out.dtype == np.dtype(self.dtype)
            and out.flags.c_contiguous
        ):
            return out
        return np.empty(shape, dtype=self.dtype)

    def phases(self, means: np.ndarray) -> np.ndarray:
        return (means - self.center) @ self.omega.T

    def transform(self, A: np.ndarray, damping: np.ndarray | None = None) -> np.ndarray:
        """``[cos, sin] / sqrt(D/2)`` of complete rows (times ``damping``)."""
        out = _rows_features(self, np.asarray(A, dtype=np.float64), None)
        if damping is not None:
            F = self.omega.shape[0]
            out[:, :F] *= damping
            out[:, F:] *= damping
        return out


def fourier_frequencies(
    n_components: int, n_features: int, gamma: float, whitening: Any, rng: Any
) -> np.ndarray:
    """``max(1, n_components // 2)`` orthogonal random frequencies for
    ``exp(-gamma ||x - y||^2)`` in whitened coordinates, mapped to the data's
    coordinates by ``whitening``.

    Blocks of ``n_features`` orthonormal directions (Haar-distributed), each
    scaled by an independent chi-distributed length: every frequency is still
    ``N(0, 2 gamma I)`` on its own, so the features stay unbiased, while the
    orthogonality within a block lowers their variance (Yu et al., 2016:
    about a fifth lower Gram error here than independent frequencies).
    """
    n, d = max(1, n_components // 2), n_features
    blocks = []
    for _ in range(-(-n // d)):
        Q, R = np.linalg.qr(rng.standard_normal((d, d)))
        Q = Q * np.sign(np.diag(R))  # Haar: fix the signs QR leaves arbitrary
        lengths = np.sqrt(rng.chisquare(d, size=d))
        blocks.append(lengths[:, None] * Q.T)
    w = np.vstack(blocks)[:n] * np.sqrt(2.0 * gamma)
    if whitening is None:
        return np.asarray(w)
    # w^T x' with x' = x @ Wh equals (Wh w)^T x.
    return np.asarray(w @ np.asarray(whitening).T)


# -- features of representations ------------------------------------------------------

# Rows per thread below which one thread computes the features (starting a
# thread costs more than a few rows' features).
_ROWS_PER_THREAD = 64


# The packed patterns of conditionals, kept while they live: genRBF's
# features pack them twice (the features and their normaliser).
_PACKED: weakref.WeakKeyDictionary[Any, tuple[np.ndarray, ...]] = (
    weakref.WeakKeyDictionary()
)


def _packed_patterns(c: GaussianConditionals) -> tuple[np.ndarray, ...]:
    """The missing features of every pattern and their covariances, packed
    for :func:`.engine._fourier_compiled.fourier_rows` (memoised)."""
    packed = _PACKED.get(c)
    if packed is None:
        packed = _PACKED[c] = _pack(c)
    return packed


def _pack(c: GaussianConditionals) -> tuple[np.ndarray, ...]:
    counts = c.patterns.sum(axis=1)
    col_start = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=col_start[1:])
    cols = np.nonzero(c.patterns)[1].astype(np.int64)  # row-major: by pattern
    cov_start = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts * counts, out=cov_start[1:])
    # (one concatenation: a copy per pattern into a slice costs ten times more)
    covs = np.concatenate([np.zeros(0), *(np.ravel(C) for C in c.covariances)])
    return cols, col_start, covs.astype(np.float64, copy=False), cov_start


def _rows_features(
    fmap: FourierMap,
    means: np.ndarray,
    c: GaussianConditionals | None,
    weights: np.ndarray | None = None,
    out: np.ndarray | None = None,
    accumulate: bool = False,
) -> np.ndarray:
    """The (damped, with ``c``) features of the rows ``means``, times
    ``weights`` (one per row), written (or, with ``accumulate``, added) to
    ``out`` (C-contiguous, float32 or float64), else to a new array of
    ``fmap.dtype``; compiled, on threads over disjoint rows."""
    # (the engine's loops, loaded, or compiled and announced, on first use)
    loops = engine.lazy_loops(f"{engine.__name__}._compiled", "the RBF kernels' loops")
    n = means.shape[0]
    if c is None:  # complete rows: one pattern, nothing missing
        pattern_index = np.zeros(n, dtype=np.int64)
        order = np.arange(n, dtype=np.int64)
        cols, covs = np.zeros(0, dtype=np.int64), np.zeros(0)
        col_start = cov_start = np.zeros(2, dtype=np.int64)
    else:
        pattern_index = np.asarray(c.pattern_index, dtype=np.int64)
        order = np.argsort(pattern_index, kind="stable")  # a pattern's rows in a run
        cols, col_start, covs, cov_start = _packed_patterns(c)
    if out is None:
        out = np.empty((n, fmap.n_components), dtype=fmap.dtype)
    args = (
        np.ascontiguousarray(means, dtype=np.float64),
        np.ascontiguousarray(fmap.center, dtype=np.float64),
        np.ascontiguousarray(fmap.omega.T, dtype=np.float64),
        pattern_index, cols, col_start, covs, cov_start,
        np.zeros(0) if weights is None else np.ascontiguousarray(weights, np.float64),
        accumulate, out,
    )  # fmt: skip
    T = max(1, min(engine.n_threads(), n // _ROWS_PER_THREAD))
    bounds = np.linspace(0, n, T + 1).astype(np.int64)
    with engine.LOCK:
        engine.run(
            [
                functools.partial(
                    loops.fourier_rows, order, bounds[t], bounds[t + 1], *args
                )
                for t in range(T)
            ]
        )
    return out


def gaussian_self_log(
    c: GaussianConditionals, gamma: float, precision: np.ndarray | None
) -> np.ndarray:
    """``log E k(X_i, X_i')`` for independent copies of each row (genRBF's
    normaliser of its features): ``-log det(I + 4 gamma C_p G[J, J]) / 2``
    per pattern, ``G`` the metric's precision (None: Euclidean)."""
    loops = engine.lazy_loops(f"{engine.__name__}._compiled", "the RBF kernels' loops")
    G = np.eye(c.n_features) if precision is None else precision
    per_pattern = np.empty(len(c.patterns))
    loops.self_logs(
        *_packed_patterns(c),
        np.ascontiguousarray(G, dtype=np.float64),
        float(gamma),
        per_pattern,
    )
    return per_pattern[c.pattern_index]


def gaussian_fourier(c: GaussianConditionals, fmap: FourierMap) -> np.ndarray:
    """Fourier features of Gaussian conditionals, damped per missing pattern
    (into ``fmap.out`` if it fits)."""
    return _rows_features(fmap, c.means, c, out=fmap._output(c.n_samples))


def mixture_fourier(c: MixtureConditionals, fmap: FourierMap) -> np.ndarray:
    """The components' Fourier features averaged by each row's weights
    (summed in the features' dtype, into ``fmap.out`` if it fits)."""
    out = fmap._output(c.n_samples)
    out.fill(0.0)
    for k in range(c.n_components):
        comp = c.component(k)
        _rows_features(fmap, comp.means, comp, c.weights[:, k], out, True)
    return out

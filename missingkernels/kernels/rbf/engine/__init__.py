"""The RBF family's engine: the expected RBF between sides of rows, fast.

A *side* is the rows of one argument of a Gram in the layout the compiled
loops read (:class:`Side`: means, per-pattern covariance factors, offsets
added inside the exponent, weights); a :class:`Metric` is the Euclidean or
Mahalanobis geometry the rows are taken in. The functions below choose, per
pair of sides, the compiled loop that computes it (pattern pairs, or row
pairs when patterns hold about one row each) and run it on threads over
disjoint output rows. Every result is ``exp(log E k + off_a[i] + off_b[j])``
or its log, so normalisations are applied inside the exponent and nothing
underflows to ``0 / 0``.

This is the API the family's cells (:mod:`missingkernels.kernels.rbf`) and
the mixed kernel use:

- sides: :func:`gaussian_side`, :func:`mixture_sides`, :func:`sample_sides`,
  :meth:`Side.build` over a :class:`Packed` pattern layout;
- Grams: :func:`gaussian_gram` and :func:`gaussian_self_log` (one Gaussian
  side), :func:`accumulated_gram` and :func:`accumulated_self_log` (weighted
  sums over sides: mixture components or draws), :func:`pairs` and
  :func:`aligned` (one pair of sides, filled or accumulated);
- helpers: :func:`exp_inplace`, :func:`symmetrize`;
- threads: ``LOCK`` (one Gram at a time), :func:`n_threads`, :func:`run`,
  :func:`deal`, :data:`serial_blas` (BLAS on one thread beside the loops);
- compiled code: ``FAST`` (the fast-math flags of every loop of the family)
  and :func:`lazy_loops` (import a module of loops on first use).

``MISSINGKERNELS_NUM_THREADS`` (else ``OMP_NUM_THREADS``, else every
available core) caps the threads.
"""

from ._gram import (
    accumulated_gram,
    accumulated_self_log,
    aligned,
    exp_inplace,
    gaussian_gram,
    gaussian_self_log,
    gaussian_side,
    mixture_sides,
    pairs,
    sample_sides,
    symmetrize,
)
from ._numba_setup import FAST, lazy_loops
from ._sides import Metric, Packed, Side
from ._threads import LOCK, deal, n_threads, run, serial_blas

__all__ = [
    "FAST",
    "LOCK",
    "Metric",
    "Packed",
    "Side",
    "accumulated_gram",
    "accumulated_self_log",
    "aligned",
    "deal",
    "exp_inplace",
    "gaussian_gram",
    "gaussian_self_log",
    "gaussian_side",
    "lazy_loops",
    "mixture_sides",
    "n_threads",
    "pairs",
    "run",
    "sample_sides",
    "serial_blas",
    "symmetrize",
]

"""Compiled loop of :class:`~missingkernels.estimators.GeomSVC` (numba).

For every missingness pattern ``p`` (its valid features ``F_p``) the update of
the scalings needs the quadratic form

    q_p = sum_{j < k} beta_j beta_k prod_{f in F_p} e_f(j, k),
    e_f(j, k) = exp(-gamma (x_jf - x_kf)^2),

the RBF kernel on rows projected onto ``F_p`` written as a product over
features. Taking the product instead of ``exp(-gamma sum_f ...)`` needs one
exponential per feature and pair instead of one per pattern and pair, and the
patterns share their partial products: sorted lexicographically, they form a
prefix tree over the features, and a product is formed once per node of the
tree rather than once per pattern. :func:`pattern_program` lays the tree out as
a list of operations; :func:`pattern_forms` runs it over blocks of pairs small
enough that every operand stays in cache.

The factors lie in ``(0, 1]``, so a partial product only decreases: if it
underflows to zero, so does the exact value. No exponential can overflow.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

# Operations of a program (first column): buf[dst] = buf[src] * e_f;
# q_p += buf[src] . e_f; q_p += sum(buf[src]).
MUL, DOT, SUM = 0, 1, 2

# Pairs per block: the (n_features + 1) x block buffers stay in L2.
_BLOCK = 1024

_FAST = {"reassoc", "contract", "nsz"}


def pattern_program(patterns: np.ndarray) -> np.ndarray:
    """The prefix tree of sorted patterns as operations for :func:`pattern_forms`.

    Parameters
    ----------
    patterns : ndarray of bool, shape (n_patterns, n_features)
        Distinct patterns (True = valid feature), sorted lexicographically
        (as :func:`missingkernels.conditionals.group_patterns` sorts them).

    Returns
    -------
    program : ndarray of int64, shape (n_operations, 5)
        Rows ``(operation, dst, src, feature, pattern)``. Buffer row 0 holds
        ``beta_j beta_k``; the product over the valid features before ``f`` of a
        node at depth ``f`` sits in a row ``<= f``, and its subtree only writes
        rows ``> f``, so the rows of nodes still waiting on the stack survive.
    """
    n_patterns = patterns.shape[0]
    ops: list[tuple[int, int, int, int, int]] = []
    stack = [(0, n_patterns, 0, 0)] if n_patterns else []
    while stack:
        lo, hi, f, row = stack.pop()
        if hi - lo == 1:
            feats = f + np.flatnonzero(patterns[lo, f:])
            if feats.size == 0:
                ops.append((SUM, -1, row, -1, lo))
                continue
            for g in feats[:-1]:
                ops.append((MUL, int(g) + 1, row, int(g), -1))
                row = int(g) + 1
            ops.append((DOT, -1, row, int(feats[-1]), lo))
            continue
        # Sorted rows: within [lo, hi) feature f is False first, then True.
        split = hi - int(patterns[lo:hi, f].sum())
        if split > lo:
            stack.append((lo, split, f + 1, row))
        if split < hi:
            # Emitted now, run before the subtree popped next.
            ops.append((MUL, f + 1, row, f, -1))
            stack.append((split, hi, f + 1, f + 1))
    return np.asarray(ops, dtype=np.int64).reshape(-1, 5)


@njit(cache=True, nogil=True, fastmath=_FAST)
def pattern_forms(
    S: np.ndarray,
    beta: np.ndarray,
    program: np.ndarray,
    gamma: float,
    n_patterns: int,
) -> np.ndarray:  # pragma: no cover - compiled
    """``q_p`` of the module docstring for every pattern of ``program``.

    ``S`` holds the rows, one feature per row of ``S`` (shape
    ``(n_features, n_rows)``), in the feature order of the patterns.
    """
    d, n = S.shape
    q = np.zeros(n_patterns)
    e = np.empty((d, _BLOCK))
    buf = np.empty((d + 1, _BLOCK))
    jj = np.empty(_BLOCK, dtype=np.int64)
    kk = np.empty(_BLOCK, dtype=np.int64)
    j, k = 0, 1  # the next pair j < k
    while k < n:
        m = 0
        while m < _BLOCK and k < n:
            jj[m], kk[m] = j, k
            m += 1
            j += 1
            if j == k:
                j, k = 0, k + 1
        for f in range(d):
            for p in range(m):
                diff = S[f, jj[p]] - S[f, kk[p]]
                e[f, p] = math.exp(-gamma * diff * diff)
        for p in range(m):
            buf[0, p] = beta[jj[p]] * beta[kk[p]]
        for o in range(program.shape[0]):
            op, dst, src, f = program[o, 0], program[o, 1], program[o, 2], program[o, 3]
            if op == MUL:
                for p in range(m):
                    buf[dst, p] = buf[src, p] * e[f, p]
            else:
                total = 0.0
                if op == DOT:
                    for p in range(m):
                        total += buf[src, p] * e[f, p]
                else:
                    for p in range(m):
                        total += buf[src, p]
                q[program[o, 4]] += total
    return q

"""Data layouts of the factor-analytic RBF loops (shared by both metrics).

Rows go to the compiled loops in tiles with the row index last; the sums over
the features missing in both rows of a pair are read from a table of subset
sums indexed by the AND of the two rows' mask codes.
"""

from __future__ import annotations

import numpy as np

# Rows per tile of the left side, and columns per tile of the right side
# (the compiled loop's LANES, a compile-time constant there).
ROWS = 128
COLS = 64


def by_tiles(a: np.ndarray, B: int) -> np.ndarray:
    """``(n, ...)`` -> ``(T, ..., B)``: rows by tiles of ``B`` (the last
    padded with zeros), the row index last."""
    n = a.shape[0]
    T = max(1, -(-n // B))
    b = np.zeros((T * B, *a.shape[1:]))
    b[:n] = a
    b = b.reshape(T, B, *a.shape[1:])
    return np.ascontiguousarray(np.moveaxis(b, 1, -1))


def lower_indices(q: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``(a, b)``, ``b <= a``, of a packed lower triangle, by rows."""
    a, b = np.tril_indices(q)
    return a, b


# The sums over the features missing in both rows of a pair are read from a
# table: features in groups of ``bits``, one row per subset of a group (the
# AND of the two rows' codes). Entries per row: N, N' (packed) and the log
# determinant part, padded to a multiple of 8. The widest groups whose table
# stays within _TABLE_BYTES (cache-sized) are used, and never fewer than 4
# features per group: a pair costs d / bits table rows, and below 4 that is
# slower than the matrix products it replaces (the table is then larger,
# 32 d P bytes: 7 MB at d = 2000, q = 10).
_TABLE_BYTES = 1 << 21
_GROUP_BITS = (8, 6, 4)


def _n_groups(d: int, bits: int) -> int:
    """Groups of ``bits`` features, a multiple of 4 (the loop's unrolling;
    the padding groups are empty)."""
    return -(-d // (4 * bits)) * 4


def group_bits(d: int, q: int) -> int:
    """Bits per group of features for ``d`` features and ``q`` factors."""
    P = table_width(q)
    for bits in _GROUP_BITS:
        if _n_groups(d, bits) * (1 << bits) * P * 8 <= _TABLE_BYTES:
            return bits
    return _GROUP_BITS[-1]


def table_width(q: int) -> int:
    return -(-(q * (q + 1) + 1) // 8) * 8


def mask_codes(missing: np.ndarray, bits: int) -> np.ndarray:
    """``(n, G)``: each row's missing mask, ``bits`` features per code."""
    n, d = missing.shape
    G = _n_groups(d, bits)
    m = np.zeros((n, G * bits), dtype=np.int64)
    m[:, :d] = missing
    weights = np.left_shift(1, np.arange(bits, dtype=np.int64))
    return np.ascontiguousarray(m.reshape(n, G, bits) @ weights)


def pair_table(values: np.ndarray, bits: int) -> np.ndarray:
    """``(G, 2^bits, P)``: for every group of ``bits`` features and every
    subset of it (a code), the sum of ``values`` (``(d, P)``) over the subset."""
    d, P = values.shape
    G = _n_groups(d, bits)
    v = np.zeros((G * bits, P))
    v[:d] = values
    members = (np.arange(1 << bits)[:, None] >> np.arange(bits)) & 1
    table = np.einsum("cl,glp->gcp", members.astype(np.float64), v.reshape(G, bits, P))
    return np.ascontiguousarray(table)

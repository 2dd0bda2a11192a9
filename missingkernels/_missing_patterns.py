"""Grouping of rows by missing pattern (one helper for every caller: the
representations and the densities, hence at the root of the package)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["PatternGroup", "PatternGroups", "group_patterns", "pattern_groups"]


def group_patterns(missing: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Group rows by their missing pattern.

    Parameters
    ----------
    missing : ndarray of shape (n_samples, n_features), dtype bool
        True where an entry is missing.

    Returns
    -------
    patterns : ndarray of shape (n_patterns, n_features), dtype bool
        The distinct patterns, sorted lexicographically.
    pattern_index : ndarray of shape (n_samples,), dtype intp
        ``patterns[pattern_index[i]]`` is the pattern of row ``i``.

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.conditionals import group_patterns
    >>> patterns, index = group_patterns(np.array([[0, 1], [0, 0], [0, 1]], bool))
    >>> patterns.astype(int).tolist(), index.tolist()
    ([[0, 0], [0, 1]], [1, 0, 1])
    """
    missing = np.asarray(missing, dtype=bool)
    if missing.ndim != 2:
        raise ValueError(
            f"missing must be a 2D boolean array, got shape {missing.shape}."
        )
    if missing.shape[0] == 0:
        return np.zeros((0, missing.shape[1]), dtype=bool), np.zeros(0, np.intp)
    d = missing.shape[1]
    # Pack each row into bytes and unique the byte strings: much faster than
    # np.unique(axis=0). Big-endian bit order keeps the lexicographic order.
    packed = np.ascontiguousarray(np.packbits(missing, axis=1))
    width = packed.shape[1]
    if width <= 8:
        # Up to 64 features: the bytes as one big-endian integer, whose order
        # is the bytes' lexicographic one; sorting integers is several times
        # faster than sorting byte strings.
        padded = np.zeros((len(packed), 8), dtype=np.uint8)
        padded[:, :width] = packed
        keys = padded.view(">u8").ravel()
        unique, pattern_index = np.unique(keys, return_inverse=True)
        unique_bytes = unique.astype(">u8").view(np.uint8).reshape(-1, 8)[:, :width]
    else:
        keys = packed.view(np.dtype((np.void, width))).ravel()
        unique, pattern_index = np.unique(keys, return_inverse=True)
        unique_bytes = unique.view(np.uint8).reshape(-1, width)
    patterns = np.unpackbits(unique_bytes, axis=1, count=d).astype(bool)
    return patterns, np.asarray(pattern_index, np.intp).reshape(-1)


@dataclass(frozen=True, eq=False)
class PatternGroup:
    """The patterns with the same number ``k >= 1`` of missing features.

    Attributes
    ----------
    patterns : ndarray of shape (P_k,)
        Indices of these patterns among the distinct patterns.
    missing_idx : ndarray of shape (P_k, k)
        The missing features of each pattern, sorted.
    rows : ndarray of shape (n_k,)
        The rows having one of these patterns, in increasing order.
    pattern_of_row : ndarray of shape (n_k,)
        Pattern of each of ``rows``, as an index into ``patterns``.
    counts : ndarray of shape (P_k,)
        Number of rows of each pattern.
    """

    patterns: np.ndarray
    missing_idx: np.ndarray
    rows: np.ndarray
    pattern_of_row: np.ndarray
    counts: np.ndarray


@dataclass(frozen=True, eq=False)
class PatternGroups:
    """Rows grouped by pattern, then patterns by number of missing features.

    Attributes
    ----------
    missing : ndarray of shape (n_samples, n_features), dtype bool
    patterns, pattern_index
        As returned by :func:`group_patterns`.
    groups : tuple of PatternGroup
        One per number of missing features ``k >= 1``, increasing ``k``; rows
        without a missing entry are in none.
    """

    missing: np.ndarray
    patterns: np.ndarray
    pattern_index: np.ndarray
    groups: tuple[PatternGroup, ...]

    @property
    def n_patterns(self) -> int:
        return len(self.patterns)

    def per_pattern(self, blocks: list[np.ndarray]) -> list[np.ndarray]:
        """Spread per-group stacks ``blocks[g][q]`` into one entry per pattern.

        Patterns without a missing feature get a ``(0, 0)`` array.
        """
        out: list[np.ndarray] = [np.zeros((0, 0))] * self.n_patterns
        for group, stack in zip(self.groups, blocks, strict=True):
            for q, p in enumerate(group.patterns):
                out[p] = stack[q]
        return out


def pattern_groups(missing: np.ndarray) -> PatternGroups:
    """Group rows by pattern, then patterns by their number of missing features.

    Built on :func:`group_patterns`; what the batched conditioning and the EM
    of the Gaussian densities iterate over.

    Parameters
    ----------
    missing : ndarray of shape (n_samples, n_features), dtype bool

    Returns
    -------
    groups : PatternGroups
    """
    missing = np.asarray(missing, dtype=bool)
    patterns, index = group_patterns(missing)
    n_missing = patterns.sum(axis=1)
    groups = []
    for k in np.unique(n_missing):
        if k == 0:
            continue
        pats = np.flatnonzero(n_missing == k)
        local = np.full(len(patterns), -1, dtype=np.intp)
        local[pats] = np.arange(len(pats))
        rows = np.flatnonzero(local[index] >= 0)
        pattern_of_row = local[index[rows]]
        # np.nonzero on a boolean matrix returns column indices row by row,
        # so each pattern's k missing indices come out sorted and contiguous.
        missing_idx = np.nonzero(patterns[pats])[1].reshape(len(pats), int(k))
        groups.append(
            PatternGroup(
                patterns=pats,
                missing_idx=missing_idx,
                rows=rows,
                pattern_of_row=pattern_of_row,
                counts=np.bincount(pattern_of_row, minlength=len(pats)),
            )
        )
    return PatternGroups(missing, patterns, index, tuple(groups))

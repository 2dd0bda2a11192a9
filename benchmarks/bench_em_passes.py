"""How long do the Gaussian EM's passes take, out of core, at 8e5 rows?

Issue 49: ``GaussianEMDensity().fit`` on a dask array of 8e5 rows x 20
features, 30% of the entries missing completely at random (so nearly every
row has a missing pattern of its own), in blocks of 50,000 rows. Prints the
seconds per E-step pass and for the whole fit, the number of EM steps
(passes), and, measured in the same run on one block of 50,000 rows, the
old E-step (kept below as ``old_e_step``: the batched numpy route through
``condition_gaussian`` with the grouping of the rows by pattern that each
pass used to redo) against the new one, with the largest difference of
their sums and of the fits they give.

The machine is shared: wall and CPU seconds are both printed, with the load
average.

Run from the repository root::

    .venv/bin/python benchmarks/bench_em_passes.py [--n 800000]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from typing import Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning

sys.path.insert(0, os.path.dirname(__file__))
from bench_scale import make_data

from missingkernels._gaussian_conditioning import condition_gaussian
from missingkernels._missing_patterns import (
    PatternGroup,
    PatternGroups,
)
from missingkernels.densities import GaussianEMDensity
from missingkernels.densities._base_em import _pattern_cov_sum
from missingkernels.densities._gaussian_em import (
    _gaussian_block_e_step,
)

BLOCK = 50_000


# -- the old pass, as it was before issue 49's change --------------------------
def old_pattern_groups(missing: np.ndarray) -> PatternGroups:
    """The grouping each pass redid: byte-string keys, one scan per count k."""
    d = missing.shape[1]
    packed = np.ascontiguousarray(np.packbits(missing, axis=1))
    width = packed.shape[1]
    keys = packed.view(np.dtype((np.void, width))).ravel()
    unique, index = np.unique(keys, return_inverse=True)
    index = np.asarray(index, np.intp).reshape(-1)
    patterns = np.unpackbits(
        unique.view(np.uint8).reshape(-1, width), axis=1, count=d
    ).astype(bool)
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
        missing_idx = np.nonzero(patterns[pats])[1].reshape(len(pats), int(k))
        groups.append(
            PatternGroup(
                pats,
                missing_idx,
                rows,
                pattern_of_row,
                np.bincount(pattern_of_row, minlength=len(pats)),
            )
        )
    return PatternGroups(missing, patterns, index, tuple(groups))


def old_sums(
    Z0: np.ndarray,
    groups: PatternGroups,
    params: tuple[np.ndarray, np.ndarray],
    fill: bool,
) -> tuple[Any, ...]:
    """The old ``_gaussian_e_step``: ``condition_gaussian`` (per count k, one
    ``inv`` and ``slogdet`` per stack of patterns, gathers per chunk of rows)
    and the covariances summed by ``bincount``."""
    m, S = params
    cond = condition_gaussian(Z0, groups, m, S, fill=fill, logpdf=True)
    assert cond.logpdf is not None
    loglik = float(cond.logpdf.sum())
    if not fill:
        return (loglik,)
    assert cond.means is not None
    centred = cond.means - m
    cov_sum = _pattern_cov_sum(groups, cond.blocks, Z0.shape[1])
    return loglik, cond.means.sum(axis=0), centred.T @ centred, cov_sum


def old_e_step(
    block: np.ndarray,
    center: np.ndarray,
    scale: np.ndarray,
    params: tuple[np.ndarray, np.ndarray],
    fill: bool,
) -> tuple[Any, ...]:
    """One block of the old pass: standardise, group by pattern, then
    :func:`old_sums`."""
    X = np.asarray(block, dtype=np.float64)
    used = ~np.isnan(X).all(axis=1)
    Z = (X[used] - center) / scale
    mask = np.isnan(Z)
    return old_sums(np.where(mask, 0.0, Z), old_pattern_groups(mask), params, fill)


# -- measurements ----------------------------------------------------------------
def timed(function: Any, *args: Any, repeat: int = 3) -> tuple[float, float, Any]:
    """Best wall and CPU seconds of ``repeat`` calls, and the last result."""
    wall = cpu = np.inf
    result = None
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        result = function(*args)
        wall = min(wall, time.perf_counter() - w)
        cpu = min(cpu, time.process_time() - c)
    return wall, cpu, result


class OldEStep(GaussianEMDensity):
    """The density with the old E-step, in memory and per block."""

    _e_step = staticmethod(old_sums)
    _block_e_step = None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=800_000)
    args = parser.parse_args()
    import dask
    import dask.array as da

    print(f"load average at start: {os.getloadavg()}")
    X, _ = make_data(args.n)
    d = X.shape[1]
    print(f"rows {args.n}, features {d}, blocks of {BLOCK}")

    # One block, old against new, at a parameter value EM visits (a few
    # steps in), so that the covariance is not the identity.
    block = X[:BLOCK]
    center, scale = np.nanmean(block, axis=0), np.nanstd(block, axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warm = GaussianEMDensity(max_iter=3).fit(block)
    m = (warm.mean_ - center) / scale
    S = warm.covariance_ / np.outer(scale, scale)
    _gaussian_block_e_step(block, center, scale, (m, S), True)  # compile / load
    old_wall, old_cpu, old = timed(old_e_step, block, center, scale, (m, S), True)
    new_wall, new_cpu, new = timed(
        _gaussian_block_e_step, block, center, scale, (m, S), True, repeat=5
    )
    diff = max(
        float(np.max(np.abs(np.asarray(a) - np.asarray(b)) / np.max(np.abs(b))))
        for a, b in zip(new, old, strict=True)
    )
    n_patterns = len(np.unique(np.packbits(np.isnan(block), axis=1), axis=0))
    from threadpoolctl import threadpool_limits

    # On a loaded machine, BLAS threads waiting for one another slow the old
    # route's row-sized products most: the same on one BLAS thread.
    with threadpool_limits(1):
        old1_wall, old1_cpu, _ = timed(old_e_step, block, center, scale, (m, S), True)
        new1_wall, new1_cpu, _ = timed(
            _gaussian_block_e_step, block, center, scale, (m, S), True, repeat=5
        )
    print(
        f"one pass over {BLOCK} rows ({n_patterns} distinct patterns): "
        f"old {old_wall:.3f} s (cpu {old_cpu:.3f}), new {new_wall:.3f} s "
        f"(cpu {new_cpu:.3f}); ratio old/new wall {old_wall / new_wall:.1f}, "
        f"cpu {old_cpu / new_cpu:.1f}; largest relative difference of the sums "
        f"{diff:.1e}"
    )
    print(
        f"  the same on one BLAS thread: old {old1_wall:.3f} s (cpu "
        f"{old1_cpu:.3f}), new {new1_wall:.3f} s (cpu {new1_cpu:.3f}); ratio "
        f"wall {old1_wall / new1_wall:.1f}, cpu {old1_cpu / new1_cpu:.1f}"
    )

    # The same fit, old and new E-step, on that block in memory.
    fits = {}
    for name, cls in (("old", OldEStep), ("new", GaussianEMDensity)):
        w = time.perf_counter()
        fits[name] = cls().fit(block)
        fits[name + "_s"] = time.perf_counter() - w
    mean_diff = np.max(np.abs(fits["new"].mean_ - fits["old"].mean_))
    cov_diff = np.max(np.abs(fits["new"].covariance_ - fits["old"].covariance_))
    print(
        f"fit on {BLOCK} rows in memory: old {fits['old_s']:.2f} s, "
        f"{fits['old'].n_iter_} EM steps; new {fits['new_s']:.2f} s, "
        f"{fits['new'].n_iter_} EM steps; largest difference of the fitted "
        f"mean {mean_diff:.1e}, covariance {cov_diff:.1e} (data units, "
        f"variances about 1)"
    )
    w = time.perf_counter()
    plain = GaussianEMDensity(acceleration="none").fit(block)
    print(
        f"plain EM (no SQUAREM) on {BLOCK} rows: {plain.n_iter_} EM steps, "
        f"{time.perf_counter() - w:.2f} s"
    )

    # Out of core: one pass, then the whole fit.
    Xd = da.from_array(X, chunks=(BLOCK, d))
    from missingkernels._dask_blocks import block_sums

    center, scale = np.nanmean(X, axis=0), np.nanstd(X, axis=0)
    pass_wall, pass_cpu, _ = timed(
        block_sums, Xd, _gaussian_block_e_step, center, scale, (m, S), True
    )
    with dask.config.set(scheduler="sync"):
        sync_wall, sync_cpu, _ = timed(
            block_sums, Xd, _gaussian_block_e_step, center, scale, (m, S), True
        )
    print(
        f"one E-step pass over {args.n} rows ({args.n // BLOCK} blocks): "
        f"{pass_wall:.2f} s wall (cpu {pass_cpu:.2f}) with dask's threads, "
        f"{sync_wall:.2f} s (cpu {sync_cpu:.2f}) on one thread; the old pass "
        f"extrapolated from one block: {old_wall * args.n / BLOCK:.1f} s"
    )
    w, c = time.perf_counter(), time.process_time()
    density = GaussianEMDensity().fit(Xd)
    fit_wall, fit_cpu = time.perf_counter() - w, time.process_time() - c
    print(
        f"whole fit on {args.n} rows (dask, SQUAREM): {fit_wall:.1f} s wall "
        f"(cpu {fit_cpu:.1f}), {density.n_iter_} EM steps, converged "
        f"{density.converged_}, {fit_wall / (density.n_iter_ + 3):.2f} s per "
        "pass (n_iter_ E-steps plus the standardisation's two passes and the "
        "final log-likelihood)"
    )
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()

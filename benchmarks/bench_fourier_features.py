"""Expected random Fourier features at scale (issue 49): the compiled pass.

Question: how long do ``ExpectedKernelFeatures(gamma=0.05, n_components=D,
random_state=0).fit(X).transform(X)``'s features take on 20,000 rows x 20
columns (30% missing completely at random, ``bench_scale.make_data``), for
D in {512, 2048}, float64 and float32, against the numpy implementation they
replace (kept below as the in-run reference: per group of patterns with k
missing, gathered frequencies and batched ``C @ W`` for the damping, then
matmul, cos, sin and ``np.hstack``; float64, cast by the estimator's copy)?
And how far apart are the two?

Two times per setting: the whole ``transform`` (validation, conditionals,
genRBF's normalisation and the output included; the old one with the old
normaliser, the engine's aligned row pairs, and the old copy into the
output), and the features of the conditionals alone (``gaussian_fourier``).
Each is the best of ``--repeat`` runs; the machine may be shared, so the
ratios are the figure to read.

Run: ``python benchmarks/bench_fourier_features.py [--rows 20000] [--repeat 2]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import make_data

# -- the reference: the numpy implementation before the compiled pass ----------------

_OLD_PATTERN_BLOCK = 256


def old_transform(fmap: Any, A: np.ndarray, damping: np.ndarray | None) -> np.ndarray:
    """The old ``FourierMap.transform``: ``[cos, sin] * damping / sqrt(F)``."""
    phase = (A - fmap.center) @ fmap.omega.T
    scale = np.sqrt(1.0 / fmap.omega.shape[0])
    amp = scale if damping is None else scale * damping
    return np.hstack([amp * np.cos(phase), amp * np.sin(phase)])


def old_gaussian_fourier(c: Any, fmap: Any) -> np.ndarray:
    """The old ``gaussian_fourier``: the damping per pattern, patterns with
    the same number k of missing features batched, then the map (float64)."""
    per_pattern = np.zeros((len(c.patterns), fmap.omega.shape[0]))
    counts = c.patterns.sum(axis=1)
    for k in np.unique(counts[counts > 0]):
        group = np.flatnonzero(counts == k)
        covs = np.stack([np.asarray(c.covariances[p]) for p in group])
        cols = np.stack([np.flatnonzero(c.patterns[p]) for p in group])
        for s in range(0, len(group), _OLD_PATTERN_BLOCK):
            sl = slice(s, s + _OLD_PATTERN_BLOCK)
            W = fmap.omega.T[cols[sl]]  # (P, k, F)
            per_pattern[group[sl]] = np.einsum("pkf,pkf->pf", W, covs[sl] @ W)
    damping = np.exp(-0.5 * np.maximum(per_pattern, 0.0))[c.pattern_index]
    return old_transform(fmap, c.means, damping)


# -- the measurements -----------------------------------------------------------------


def best(fn: Any, repeat: int) -> tuple[float, Any]:
    """The shortest of ``repeat`` runs of ``fn()``, and its last result."""
    times, out = [], None
    for _ in range(repeat):
        out = None  # free the last result before the next run
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def measure(X: np.ndarray, D: int, dtype: str, repeat: int) -> dict[str, float]:
    from missingkernels import ExpectedKernelFeatures
    from missingkernels.kernels.rbf import _fourier
    from missingkernels.kernels.rbf._cells import GaussianSums

    est = ExpectedKernelFeatures(
        gamma=0.05, n_components=D, random_state=0, dtype=dtype
    ).fit(X)
    est.transform(X[:64])  # numba's loops loaded (compiled once, cached on disk)
    new_t, Z_new = best(lambda: est.transform(X), repeat)
    base = est.kernel_.base_kernel_

    def old_self_log(c: Any, gamma: float, precision: Any) -> np.ndarray:
        # the normaliser as before: the Gram's aligned row pairs (engine)
        return GaussianSums().self_log(base, c, gamma)

    new_fourier, new_self_log = _fourier.gaussian_fourier, _fourier.gaussian_self_log
    # (the cell calls both by name through the module)
    _fourier.gaussian_fourier = old_gaussian_fourier
    _fourier.gaussian_self_log = old_self_log
    try:
        old_t, Z_old = best(lambda: est.transform(X), repeat)
    finally:
        _fourier.gaussian_fourier = new_fourier
        _fourier.gaussian_self_log = new_self_log
    _, c = est.kernel_._conditionals(X)
    fmap = est.feature_map_.with_dtype(dtype)
    new_f, F_new = best(lambda: _fourier.gaussian_fourier(c, fmap), repeat)
    old_f, F_old = best(lambda: old_gaussian_fourier(c, fmap), repeat)
    diff = np.abs(Z_new.astype(np.float64) - Z_old.astype(np.float64)).max()
    fdiff = np.abs(F_new.astype(np.float64) - F_old).max()
    return {
        "transform_new": new_t,
        "transform_old": old_t,
        "features_new": new_f,
        "features_old": old_f,
        "max_abs_diff": float(diff),
        "max_abs_ref": float(np.abs(Z_old).max()),
        "features_max_abs_diff": float(fdiff),
        "features_max_abs_ref": float(np.abs(F_old).max()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--components", type=int, nargs="+", default=[512, 2048])
    args = parser.parse_args()
    from missingkernels.kernels.rbf.engine import n_threads

    start = time.perf_counter()
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    X, _ = make_data(args.rows)
    print(f"commit {commit}; {args.rows} rows x {X.shape[1]} columns, "
          f"{np.isnan(X).mean():.0%} missing; {n_threads()} threads; "
          f"best of {args.repeat}; load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    print(
        f"{'D':>5} {'dtype':>7} | {'transform new':>13} {'old':>7} {'ratio':>6} | "
        f"{'features new':>12} {'old':>7} {'ratio':>6} | "
        f"{'max|new-old|':>12} {'/max|old|':>9} {'/eps':>6}"
    )
    for D in args.components:
        for dtype in ("float64", "float32"):
            r = measure(X, D, dtype, args.repeat)
            rel = r["max_abs_diff"] / r["max_abs_ref"]
            eps = float(np.finfo(dtype).eps)
            t_ratio = r["transform_old"] / r["transform_new"]
            f_ratio = r["features_old"] / r["features_new"]
            print(
                f"{D:>5} {dtype:>7} | {r['transform_new']:>12.3f}s "
                f"{r['transform_old']:>6.3f}s {t_ratio:>5.1f}x | "
                f"{r['features_new']:>11.3f}s {r['features_old']:>6.3f}s "
                f"{f_ratio:>5.1f}x | "
                f"{r['max_abs_diff']:>12.3g} {rel:>9.3g} {rel / eps:>6.2f}"
            )  # fmt: skip
            sys.stdout.flush()
    print(
        f"run time {time.perf_counter() - start:.0f} s; "
        f"load average {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()

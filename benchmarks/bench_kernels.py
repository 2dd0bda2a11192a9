"""Speed of the genRBF Gram against scikit-learn's rbf_kernel on filled data.

For n in {1000, 2000, 4000}, d in {8, 14, 34}, 30% MCAR and structured
missingness (16 distinct patterns), both metrics, prints the wall time of
``genrbf`` ``k(X)`` on its training rows (density fitted beforehand; the
kernel reuses the conditionals it computed at fit, as an SVM's fit does), of
``rbf_kernel`` on the same rows with the missing entries filled, and their
ratio; then the cross Gram ``k(X_test, X_train)`` per entry and the peak
memory of ``k(X)`` at the largest n relative to the size of its output.

Usage::

    python benchmarks/bench_kernels.py            # the full table
    python benchmarks/bench_kernels.py --quick    # n=2000, d=14 only

The first call compiles the numba loops (about 20 s, cached on disk); the
script warms them up before timing. ``MISSINGKERNELS_NUM_THREADS`` caps the
threads of the kernels; ``OMP_NUM_THREADS`` those of the BLAS behind
``rbf_kernel``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import warnings
from functools import partial

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel

from missingkernels import get_kernel


def make_data(rng, n, d, kind, rate=0.3, n_patterns=16):
    A = rng.normal(size=(d, d))
    X = rng.normal(size=(n, d)) @ A / np.sqrt(d) + rng.normal(size=d)
    if kind == "mcar":
        mask = rng.random((n, d)) < rate
    else:
        patterns = rng.random((n_patterns, d)) < rate
        mask = patterns[rng.integers(0, n_patterns, n)]
    mask[mask.all(axis=1), 0] = False  # keep one entry in fully missing rows
    X_missing = X.copy()
    X_missing[mask] = np.nan
    return X, X_missing


def best_time(f, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def _read_status(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    return 0


def measure_peak(n, d, kind, metric, seed):
    """In a fresh process: peak resident memory of ``k(X)`` above the baseline."""
    rng = np.random.default_rng(seed)
    X_missing = make_data(rng, n, d, kind)[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k = get_kernel("genrbf", gamma=1.0 / d, metric=metric).fit(X_missing)
    k(X_missing[:50])  # load the compiled loops
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # reset the peak (VmHWM) to the current RSS
    before = _read_status("VmRSS")
    K = k(X_missing)
    peak = _read_status("VmHWM")
    print(peak - before, K.nbytes)


def peak_in_subprocess(n, d, kind, metric, seed):
    cmd = [sys.executable, __file__, "--peak", str(n), str(d), kind, metric,
           "--seed", str(seed)]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    peak, nbytes = (int(v) for v in out.split())
    return peak, nbytes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="n=2000, d=14 only")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--peak", nargs=4, metavar=("N", "D", "KIND", "METRIC"),
                        help=argparse.SUPPRESS)  # fmt: skip
    args = parser.parse_args()
    if args.peak:
        n, d, kind, metric = args.peak
        measure_peak(int(n), int(d), kind, metric, args.seed)
        return
    ns = [2000] if args.quick else [1000, 2000, 4000]
    ds = [14] if args.quick else [8, 14, 34]
    rng = np.random.default_rng(args.seed)

    env = os.environ.get
    print(
        f"threads: kernels {env('MISSINGKERNELS_NUM_THREADS', 'all')}"
        f", BLAS (OMP_NUM_THREADS) {env('OMP_NUM_THREADS', 'all')}"
    )
    warm_X = make_data(rng, 50, 4, "mcar")[1]
    for metric in ("euclidean", "mahalanobis"):
        get_kernel("genrbf", metric=metric).fit(warm_X)(warm_X)

    header = (
        f"{'n':>5} {'d':>3} {'missing':>10} {'patterns':>8} {'metric':>11} "
        f"{'genrbf s':>9} {'rbf s':>7} {'ratio':>6}"
    )
    print(header)
    print("-" * len(header))
    rows = []
    for n in ns:
        for d in ds:
            for kind in ("mcar", "structured"):
                X, X_missing = make_data(rng, n + 500, d, kind)
                # The last 500 rows (same distribution) are the test rows.
                X, X_missing, X_test = X[:n], X_missing[:n], X_missing[n:]
                filled = np.where(np.isnan(X_missing), np.nanmean(X_missing, 0), X)
                t_rbf = best_time(partial(rbf_kernel, filled, gamma=1.0 / d), 3)
                n_patterns = len(np.unique(np.isnan(X_missing), axis=0))
                for metric in ("euclidean", "mahalanobis"):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # EM convergence notes
                        k = get_kernel("genrbf", gamma=1.0 / d, metric=metric)
                        k.fit(X_missing)
                    repeat = 1 if n * n * d > 2e8 and kind == "mcar" else 2
                    t_k = best_time(partial(k, X_missing), repeat)
                    label = "30% MCAR" if kind == "mcar" else "16 pat."
                    print(
                        f"{n:>5} {d:>3} {label:>10} {n_patterns:>8} {metric:>11} "
                        f"{t_k:>9.3f} {t_rbf:>7.3f} {t_k / t_rbf:>6.1f}",
                        flush=True,
                    )
                    rows.append((n, d, kind, metric, k, X_missing, X_test, t_k))

    print("\ncross Gram k(X_test, X_train) vs training Gram k(X), ns per entry")
    for n, d, kind, metric, k, X_missing, X_test, t_k in rows:
        if n != max(ns) or d != 14:
            continue
        t_cross = best_time(partial(k, X_test, X_missing), 2)
        print(
            f"n={n} d={d} {kind:>10} {metric:>11}: k(X) {t_k / n**2 * 1e9:7.1f} ns, "
            f"k(X_test, X) {t_cross / (500 * n) * 1e9:7.1f} ns"
        )

    print("\npeak memory of k(X) above the baseline (fresh process), vs its output")
    if not os.path.exists("/proc/self/clear_refs"):
        print("(needs Linux /proc; skipped)")
        return
    n, d = max(ns), max(ds)
    for kind in ("mcar", "structured"):
        for metric in ("euclidean", "mahalanobis"):
            peak, nbytes = peak_in_subprocess(n, d, kind, metric, args.seed)
            print(
                f"n={n} d={d} {kind:>10} {metric:>11}: {peak / 2**20:7.1f} MiB "
                f"= {peak / nbytes:.2f} x the {nbytes / 2**20:.0f} MiB output"
            )


if __name__ == "__main__":
    main()

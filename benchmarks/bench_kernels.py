"""Speed of the genRBF Gram against scikit-learn's rbf_kernel on filled data.

For n in {1000, 2000, 4000}, d in {8, 14, 34, 64}, 10/30/50% MCAR and
structured missingness (16 distinct patterns, 30% missing), both metrics,
with all threads and with one, prints the wall time of ``genrbf`` ``k(X)`` on
its training rows (density fitted beforehand; the kernel reuses the
conditionals it computed at fit, as an SVM's fit does, but builds and factors
their side afresh: the first Gram of a fit), of ``rbf_kernel`` on
the same rows with the missing entries filled (timed in the same run, same
thread setting), their ratio, and the cross Gram ``k(X_test, X_train)``
(500 test rows, the training side kept from the training Gram, as in
predictions after a fit) in ns per entry and per row pair against the
training Gram's (which computes each unordered pair once). Then the peak memory of
``k(X)`` at the largest n relative to the size of its output.

Usage::

    python benchmarks/bench_kernels.py            # the full table (long)
    python benchmarks/bench_kernels.py --quick    # n=2000, d=14, 30% MCAR
                                                  # and structured, all threads
    python benchmarks/bench_kernels.py --n 2000 --d 14 34 --missing mcar30

The first call compiles the numba loops (about 20 s, cached on disk); the
script warms them up before timing. ``MISSINGKERNELS_NUM_THREADS`` caps the
threads of the kernels and threadpoolctl those of the BLAS behind
``rbf_kernel``; ``--threads`` chooses the settings measured.
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
from threadpoolctl import threadpool_limits

from missingkernels import get_kernel
from missingkernels.kernels.rbf.engine import _gram

MISSING = {
    "mcar10": ("mcar", 0.1),
    "mcar30": ("mcar", 0.3),
    "mcar50": ("mcar", 0.5),
    "structured": ("structured", 0.3),
}
LABELS = {"mcar10": "10% MCAR", "mcar30": "30% MCAR", "mcar50": "50% MCAR",
          "structured": "16 pat."}  # fmt: skip
N_TEST = 500


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


def cold_gram(k, X):
    """``k(X)`` without the sides kept from earlier Grams."""
    _gram._SIDES.clear()
    return k(X)


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


def time_row(rng, n, d, missing, threads):
    """Timings of one (n, d, missingness) for both metrics."""
    kind, rate = MISSING[missing]
    X, X_missing = make_data(rng, n + N_TEST, d, kind, rate)
    # The last rows (same distribution) are the test rows.
    X, X_missing, X_test = X[:n], X_missing[:n], X_missing[n:]
    filled = np.where(np.isnan(X_missing), np.nanmean(X_missing, 0), X)
    n_patterns = len(np.unique(np.isnan(X_missing), axis=0))
    blas = None if threads == "all" else 1
    if threads == "all":
        os.environ.pop("MISSINGKERNELS_NUM_THREADS", None)
    else:
        os.environ["MISSINGKERNELS_NUM_THREADS"] = "1"
    with threadpool_limits(limits=blas):
        t_rbf = best_time(partial(rbf_kernel, filled, gamma=1.0 / d), 5)
    out = []
    for metric in ("euclidean", "mahalanobis"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # EM convergence notes
            k = get_kernel("genrbf", gamma=1.0 / d, metric=metric).fit(X_missing)
        repeat = 1 if n * n * d > 2e8 and kind == "mcar" else 2
        with threadpool_limits(limits=blas):
            t_k = best_time(partial(cold_gram, k, X_missing), repeat)
            t_cross = best_time(partial(k, X_test, X_missing), repeat)
        out.append((metric, n_patterns, t_k, t_rbf, t_cross))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="n=2000, d=14, 30%% MCAR and structured, all threads",
    )
    parser.add_argument("--n", type=int, nargs="+", default=[1000, 2000, 4000])
    parser.add_argument("--d", type=int, nargs="+", default=[8, 14, 34, 64])
    parser.add_argument(
        "--missing", nargs="+", choices=list(MISSING), default=list(MISSING)
    )
    parser.add_argument(
        "--threads", nargs="+", choices=["all", "1"], default=["all", "1"]
    )
    parser.add_argument("--no-peak", action="store_true", help="skip peak memory")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--peak", nargs=4, metavar=("N", "D", "KIND", "METRIC"),
                        help=argparse.SUPPRESS)  # fmt: skip
    args = parser.parse_args()
    if args.peak:
        n, d, kind, metric = args.peak
        measure_peak(int(n), int(d), kind, metric, args.seed)
        return
    if args.quick:
        args.n, args.d, args.threads = [2000], [14], ["all"]
        args.missing = ["mcar30", "structured"]
    rng = np.random.default_rng(args.seed)

    warm_X = make_data(rng, 50, 4, "mcar")[1]
    for metric in ("euclidean", "mahalanobis"):
        get_kernel("genrbf", metric=metric).fit(warm_X)(warm_X)

    header = (
        f"{'threads':>7} {'n':>5} {'d':>3} {'missing':>9} {'patterns':>8} "
        f"{'metric':>11} {'genrbf s':>9} {'rbf s':>7} {'ratio':>6} "
        f"{'k(X) ns':>8} {'cross ns':>8} {'/entry':>6} {'/pair':>6}"
    )
    print(header)
    print("-" * len(header))
    for threads in args.threads:
        for n in args.n:
            for d in args.d:
                for missing in args.missing:
                    for metric, n_pat, t_k, t_rbf, t_cross in time_row(
                        rng, n, d, missing, threads
                    ):
                        per_entry = t_k / n**2 * 1e9
                        cross = t_cross / (N_TEST * n) * 1e9
                        # k(X) computes each unordered pair once.
                        per_pair = t_k / (n * (n + 1) / 2) * 1e9
                        print(
                            f"{threads:>7} {n:>5} {d:>3} {LABELS[missing]:>9} "
                            f"{n_pat:>8} {metric:>11} {t_k:>9.3f} {t_rbf:>7.4f} "
                            f"{t_k / t_rbf:>6.1f} {per_entry:>8.1f} {cross:>8.1f} "
                            f"{cross / per_entry:>6.2f} {cross / per_pair:>6.2f}",
                            flush=True,
                        )
    print(
        "\nratio = genrbf k(X) / rbf_kernel; k(X) ns and cross ns: ns per entry of "
        "k(X) and k(X_test, X); /entry and /pair: the cross Gram's time per entry "
        "over k(X)'s per entry and per unordered pair"
    )

    if args.no_peak:
        return
    print("\npeak memory of k(X) above the baseline (fresh process), vs its output")
    if not os.path.exists("/proc/self/clear_refs"):
        print("(needs Linux /proc; skipped)")
        return
    n, d = max(args.n), max(args.d)
    for kind in ("mcar", "structured"):
        for metric in ("euclidean", "mahalanobis"):
            peak, nbytes = peak_in_subprocess(n, d, kind, metric, args.seed)
            print(
                f"n={n} d={d} {kind:>10} {metric:>11}: {peak / 2**20:7.1f} MiB "
                f"= {peak / nbytes:.2f} x the {nbytes / 2**20:.0f} MiB output"
            )


if __name__ == "__main__":
    main()

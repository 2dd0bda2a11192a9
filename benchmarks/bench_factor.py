"""Speed of genRBF with the factor-analytic density against rbf_kernel.

At n=2000 rows, d in {34, 64, 128}, 50% MCAR, on one thread (the kernels'
loops and the BLAS), prints the time of ``genrbf`` ``k(X)`` on its training
rows with ``density=FactorAnalysisDensity(n_factors=5)`` (the sides built
afresh, as in the first Gram of a fit), of scikit-learn's ``rbf_kernel`` on
the same rows with the missing entries filled, timed in the same run, and
their ratio; beside it the ratio of genRBF with the full Gaussian density
(``gaussian_em``). The full-Gaussian Gram costs a factorisation of size
``|J|`` per pair: above ``--full-max-d`` features it is timed on the first
``--full-rows`` rows and scaled by the number of pairs (marked ``~``).

Both wall-clock and CPU-time (``time.process_time``) ratios are printed: on
a shared machine the CPU time of a single-threaded run is the steadier one.

Usage::

    python benchmarks/bench_factor.py
    python benchmarks/bench_factor.py --d 64 --n 2000 --factors 5
    python benchmarks/bench_factor.py --metric mahalanobis
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from functools import partial

os.environ["MISSINGKERNELS_NUM_THREADS"] = "1"

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel
from threadpoolctl import threadpool_limits

from missingkernels import get_kernel
from missingkernels.densities import FactorAnalysisDensity
from missingkernels.kernels.rbf.engine import _gram
from missingkernels.kernels.rbf.factor import _cell as _factor_cell


def make_data(rng, n, d, q, rate):
    W = rng.normal(size=(d, q))
    X = rng.normal(size=(n, q)) @ W.T + rng.normal(size=(n, d)) + rng.normal(size=d)
    mask = rng.random((n, d)) < rate
    mask[mask.all(axis=1), 0] = False
    X_missing = X.copy()
    X_missing[mask] = np.nan
    return X_missing


def best(f, repeat):
    """Smallest wall and CPU time of ``repeat`` calls."""
    wall, cpu = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        f()
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return min(wall), min(cpu)


def cold(k, X):
    _factor_cell._SIDES.clear()
    _gram._SIDES.clear()
    return k(X)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--d", type=int, nargs="+", default=[34, 64, 128])
    parser.add_argument("--missing", type=float, default=0.5)
    parser.add_argument("--factors", type=int, default=5)
    parser.add_argument("--full-max-d", type=int, default=64)
    parser.add_argument("--full-rows", type=int, default=1000)
    parser.add_argument(
        "--metric", choices=["euclidean", "mahalanobis"], default="euclidean"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    header = (
        f"{'n':>5} {'d':>4} {'q':>2} {'rbf s':>7} {'factor s':>9} {'ratio':>6} "
        f"{'cpu ratio':>9} {'full ratio':>10} {'full cpu':>9}"
    )
    print(header)
    print("-" * len(header))
    with threadpool_limits(limits=1):
        warm = make_data(rng, 60, 6, 2, 0.3)
        get_kernel("genrbf", density=FactorAnalysisDensity(n_factors=2)).fit(warm)(warm)
        get_kernel("genrbf").fit(warm)(warm)
        for d in args.d:
            X = make_data(rng, args.n, d, args.factors, args.missing)
            filled = np.where(np.isnan(X), np.nanmean(X, axis=0), X)
            t_rbf = best(partial(rbf_kernel, filled, gamma=1.0 / d), 7)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fa = FactorAnalysisDensity(n_factors=args.factors)
                kw = {"gamma": 1.0 / d, "metric": args.metric}
                k = get_kernel("genrbf", density=fa, **kw).fit(X)
                full = get_kernel("genrbf", **kw).fit(X)
            t_fa = best(partial(cold, k, X), 3)
            rows, mark = X, ""
            if d > args.full_max_d:
                rows, mark = X[: args.full_rows], "~"
            t_full = best(partial(cold, full, rows), 1)
            scale = (len(X) / len(rows)) ** 2
            print(
                f"{args.n:>5} {d:>4} {args.factors:>2} {t_rbf[0]:>7.4f} "
                f"{t_fa[0]:>9.3f} {t_fa[0] / t_rbf[0]:>6.1f} "
                f"{t_fa[1] / t_rbf[1]:>9.1f} "
                f"{mark + format(scale * t_full[0] / t_rbf[0], '.1f'):>10} "
                f"{mark + format(scale * t_full[1] / t_rbf[1], '.1f'):>9}",
                flush=True,
            )


if __name__ == "__main__":
    main()

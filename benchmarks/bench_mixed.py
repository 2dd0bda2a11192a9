"""Benchmark the mixed kernel (RBF x matching over latent classes).

Run::

    .venv/bin/python benchmarks/bench_mixed.py [--n 2000] [--numeric 10]
        [--nominal 10] [--levels 4] [--rate 0.2] [--classes 1] [--repeats 3]

Times the training Gram ``k(X)`` of ``mixed_rbf`` (fitted density, so the
Gram alone) and the cross Gram ``k(X_new, X)``, and prints their ratio to
``sklearn.metrics.pairwise.rbf_kernel`` on the same table with the missing
entries filled (numeric: column means; nominal: one-hot codes of the column
mode), timed in the same run (median of ``--repeats``). Ratios, not seconds,
are what compare across machines.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel

from missingkernels.densities import LatentClassDensity
from missingkernels.kernels import MixedRBFKernel


def _table(rng, n, p, q, levels, rate):
    z = rng.random(n) < 0.5
    num = rng.normal(size=(n, p)) + np.where(z[:, None], 1.0, -1.0)
    nom = np.where(
        z[:, None], rng.integers(0, levels, (n, q)), rng.integers(0, 2, (n, q))
    )
    T = np.hstack([num, nom.astype(float)])
    T[rng.random(T.shape) < rate] = np.nan
    return T


def _filled_one_hot(T, p, levels):
    num = T[:, :p].copy()
    means = np.nanmean(num, axis=0)
    num = np.where(np.isnan(num), means, num)
    blocks = []
    for v in range(p, T.shape[1]):
        col = T[:, v].copy()
        vals, counts = np.unique(col[~np.isnan(col)], return_counts=True)
        col[np.isnan(col)] = vals[np.argmax(counts)]
        blocks.append((col[:, None] == np.arange(levels)[None]).astype(float))
    return np.hstack([num, *blocks])


def _median_time(f, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--numeric", type=int, default=10)
    parser.add_argument("--nominal", type=int, default=10)
    parser.add_argument("--levels", type=int, default=4)
    parser.add_argument("--rate", type=float, default=0.2, help="MCAR rate")
    parser.add_argument("--classes", type=int, default=1, help="latent classes")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    p, q = args.numeric, args.nominal
    T = _table(rng, args.n, p, q, args.levels, args.rate)
    new = _table(rng, args.n // 4, p, q, args.levels, args.rate)
    nominal = list(range(p, p + q))
    kernel = MixedRBFKernel(
        gamma=1.0 / p,
        nominal_features=nominal,
        density=LatentClassDensity(args.classes, random_state=0),
    )
    start = time.perf_counter()
    kernel.fit(T)
    fit_time = time.perf_counter() - start
    kernel(T[:50])  # compile / load the loops outside the timings

    filled = _filled_one_hot(T, p, args.levels)
    filled_new = _filled_one_hot(new, p, args.levels)
    ref = _median_time(lambda: rbf_kernel(filled, gamma=1.0 / p), args.repeats)
    ref_cross = _median_time(
        lambda: rbf_kernel(filled_new, filled, gamma=1.0 / p), args.repeats
    )
    train = _median_time(lambda: kernel(T), args.repeats)
    cross = _median_time(lambda: kernel(new, T), args.repeats)
    n_patterns = len(np.unique(np.isnan(T), axis=0))
    print(
        f"n={args.n} numeric={p} nominal={q} levels={args.levels} "
        f"MCAR={args.rate:.2f} classes={args.classes} "
        f"distinct patterns={n_patterns}"
    )
    print(f"density fit: {fit_time:.2f} s ({kernel.density_.n_iter_} EM iterations)")
    print(
        f"training Gram k(X): {train:.3f} s, ratio to rbf_kernel on the filled "
        f"one-hot table {train / ref:.1f}x (rbf_kernel {ref:.3f} s)"
    )
    per_entry = (cross / (len(new) * len(T))) / (train / len(T) ** 2)
    print(
        f"cross Gram k(X_new, X): {cross:.3f} s, ratio {cross / ref_cross:.1f}x "
        f"(rbf_kernel {ref_cross:.3f} s); per entry {per_entry:.2f}x the "
        "training Gram's"
    )


if __name__ == "__main__":
    main()

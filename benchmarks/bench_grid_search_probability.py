"""What probability=True costs inside GridSearchCV, as a ratio to the same grid
without it.

``GridSearchCV(MissingKernelSVC(probability=True), grid, cv=3)`` fits the
calibration of every grid point on every fold: ``calibration_folds`` (5) more
SVMs per fit. This script times the same search with ``probability=False``
and ``probability=True``, each in a fresh process (so that each has its own
fit cache, default size, and its own peak memory), and prints the ratios of
the wall times and of the CPU times (all threads; less sensitive than the
wall time to other processes' load), the peak resident memory of each
process and the bytes the fit cache held at the end. The two searches must
pick the same grid point with the same test scores (accuracy does not read
the probabilities).

Run::

    .venv/bin/python benchmarks/bench_grid_search_probability.py [--rows 2400]
        [--features 20] [--rate 0.3] [--repeats 1]

Data: ``make_classification`` (seed 0; 8 informative features), 30% of the
entries removed completely at random (seed 0), a 3 x 3 grid of C and gamma,
3 stratified folds (shuffled, seed 0), one process at a time. On a shared
machine the times move with the load: compare the ratio, which both runs of
a repeat see under about the same load.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import warnings

GRID = {"C": [1.0, 8.0, 64.0], "gamma": [2.0**-7, 2.0**-5, 2.0**-3]}


def one_search(rows: int, features: int, rate: float, probability: bool) -> dict:
    import numpy as np
    from sklearn.datasets import make_classification
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    from missingkernels import MissingKernelSVC
    from missingkernels._fit_cache import fit_cache_info
    from missingkernels.experiments import simulate_missing

    X, y = make_classification(
        rows, features, n_informative=8, n_redundant=4, random_state=0
    )
    X = simulate_missing(X, "mcar", rate, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # Compile numba's loops (or load them from its cache) before timing.
        MissingKernelSVC().fit(X[:60], y[:60])
        cv = StratifiedKFold(3, shuffle=True, random_state=0)
        gs = GridSearchCV(MissingKernelSVC(probability=probability), GRID, cv=cv)
        start, cpu = time.perf_counter(), time.process_time()
        gs.fit(X, y)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    scores = [gs.cv_results_[f"split{i}_test_score"].tolist() for i in range(3)]
    return {
        "seconds": seconds,
        "cpu": cpu,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "cache_mib": fit_cache_info()["bytes"] / 2**20,
        "best": gs.best_params_,
        "scores": scores,
        "has_proba": bool(probability and np.isfinite(gs.predict_proba(X)).all()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2400)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--rate", type=float, default=0.3)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--child", choices=["0", "1"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        out = one_search(args.rows, args.features, args.rate, args.child == "1")
        print(json.dumps(out))
        return

    def run(probability: bool) -> dict:
        command = [
            sys.executable,
            __file__,
            f"--rows={args.rows}",
            f"--features={args.features}",
            f"--rate={args.rate}",
            f"--child={int(probability)}",
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))

    print(
        f"{args.rows} rows x {args.features} features, MCAR {args.rate:.0%}; "
        f"grid {GRID}, 3 folds; each search in its own process"
    )
    start = time.perf_counter()
    runs: list[tuple[dict, dict]] = []
    for repeat in range(args.repeats):
        plain = run(False)
        proba = run(True)
        runs.append((plain, proba))
        same = plain["scores"] == proba["scores"] and plain["best"] == proba["best"]
        print(
            f"repeat {repeat}: probability=False {plain['seconds']:6.1f} s, "
            f"probability=True {proba['seconds']:6.1f} s: "
            f"ratio {proba['seconds'] / plain['seconds']:.2f}; CPU time "
            f"{plain['cpu']:.1f} s vs {proba['cpu']:.1f} s: ratio "
            f"{proba['cpu'] / plain['cpu']:.2f}"
        )
        print(
            f"  peak RSS {plain['peak_rss_mib']:.0f} MiB vs "
            f"{proba['peak_rss_mib']:.0f} MiB; fit cache at the end "
            f"{plain['cache_mib']:.0f} MiB vs {proba['cache_mib']:.0f} MiB; "
            f"same best point and test scores: {same}; "
            f"probabilities finite: {proba['has_proba']}"
        )
    if args.repeats > 1:
        # The fastest run of each kind: the least disturbed by other work.
        for key, what in (("seconds", "wall"), ("cpu", "CPU")):
            fastest = [min(r[i][key] for r in runs) for i in (0, 1)]
            print(
                f"fastest of {args.repeats}, {what} time: {fastest[0]:.1f} s vs "
                f"{fastest[1]:.1f} s: ratio {fastest[1] / fastest[0]:.2f}"
            )
    print(f"total wall time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()

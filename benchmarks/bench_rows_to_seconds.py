"""How long MissingKernelSVC() takes to fit, and how much memory, by rows.

A rough guide for the user guide's *Large data* page: the default
``MissingKernelSVC()`` (genRBF over ``gaussian_em``, ``gamma="scale"``,
``C=1``) fitted on 500 to 10,000 rows of 20 features with 30% of the entries
missing completely at random, on the exact route (the n x n Gram and libsvm)
and on the features route (2,000 expected random Fourier features and a
linear SVM). Each fit runs in a fresh process, which reports the wall time
of ``fit``, its CPU time (all threads; less sensitive than the wall time to
other processes' load), the wall time of ``predict`` on 1,000 new rows, its
resident memory before the fit and its peak (``ru_maxrss``) after it.

Run::

    .venv/bin/python benchmarks/bench_rows_to_seconds.py [--rows 500 2000 5000 10000]

Data: ``make_classification`` (seed 0, 8 informative and 4 redundant
features), MCAR 30% (seed 0). The numba loops are compiled (or loaded from
numba's cache) before the timed fit. On a shared machine the times move with
the load: read them as orders of magnitude.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
import warnings


def _rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def one_fit(rows: int, route: str) -> dict:
    from sklearn.datasets import make_classification

    from missingkernels import MissingKernelSVC
    from missingkernels.experiments import simulate_missing

    X, y = make_classification(
        rows + 1000, 20, n_informative=8, n_redundant=4, random_state=0
    )
    X = simulate_missing(X, "mcar", 0.3, random_state=0)
    X_new, X = X[rows:], X[:rows]
    y = y[:rows]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # Compile numba's loops (or load them from its cache) first.
        MissingKernelSVC(route=route, n_kernel_features=50).fit(X[:60], y[:60])
        before = _rss_mib()
        start, cpu = time.perf_counter(), time.process_time()
        clf = MissingKernelSVC(route=route).fit(X, y)
        fit, fit_cpu = time.perf_counter() - start, time.process_time() - cpu
        start = time.perf_counter()
        clf.predict(X_new)
        predict = time.perf_counter() - start
    return {
        "fit": fit,
        "fit_cpu": fit_cpu,
        "predict": predict,
        "rss_before": before,
        "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "n_support": int(getattr(clf, "n_support_", [0]).sum())
        if route == "exact"
        else 0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[500, 2000, 5000, 10000])
    parser.add_argument("--routes", nargs="+", default=["exact", "features"])
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_fit(int(args.child[0]), args.child[1])))
        return
    print(
        f"MissingKernelSVC() on n rows x 20 features, MCAR 30%; "
        f"{os.cpu_count()} cores, {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}; each fit in its own process"
    )
    print(
        "| rows | route | fit (s) | fit, CPU (s) | predict 1,000 rows (s) | "
        "peak memory (MiB) | of which before the fit (MiB) |"
    )
    print("|---|---|---|---|---|---|---|")
    start = time.perf_counter()
    for rows in args.rows:
        for route in args.routes:
            command = [sys.executable, __file__, "--child", str(rows), route]
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            r = json.loads(done.stdout.strip().splitlines()[-1])
            print(
                f"| {rows:,} | {route} | {r['fit']:.1f} | {r['fit_cpu']:.1f} | "
                f"{r['predict']:.2f} | "
                f"{r['peak']:.0f} | {r['rss_before']:.0f} |",
                flush=True,
            )
    print(f"\ntotal wall time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()

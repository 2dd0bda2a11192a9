"""Expected-kernel classification from 10^4 to 10^6 incomplete rows.

Synthetic data: 20 correlated numeric features, a nonlinear two-class target,
30% of the entries missing completely at random; 80% of the rows train, 20%
test. For each n, each route runs in its own process (so that its peak memory
is its own) and prints wall time of fit + predict, peak memory (max RSS) and
test accuracy:

- ``exact``: MissingKernelSVC(route="exact"), genRBF, the n x n Gram matrix
  (only where it fits: n <= --exact-max).
- ``features``: MissingKernelSVC(route="features"): 8,192 expected random
  Fourier features and LinearSVC, in memory (n <= --linear-max).
- ``stream``: ExpectedKernelFeatures (density fitted on 20,000 rows, 512
  float32 features computed once) and averaged SGDClassifier (hinge loss,
  the SVM's C) trained by partial_fit over blocks: the recipe for millions
  of rows.
- ``dask``: the same on a dask.distributed LocalCluster with 2 workers: the
  Gaussian EM fitted out of core on all training rows (map-reduce), the
  feature map fitted on 10,000 rows with that density frozen, features
  computed blockwise, SGD over the blocks (n <= --dask-max).
- ``outofcore``: ``MissingKernelSVC(route="features").fit`` on a dask array
  (dask's threads, this process): standardisation, density and feature map
  from block sums, LinearSVC's squared hinge from blockwise D x D
  statistics (``--ooc-features`` float32 features, never all in memory),
  ``predict`` on a dask array.
- ``cluster``: the same fit and predict on a dask.distributed LocalCluster of
  2 worker processes with a memory limit each (``WORKER_MEMORY``), the rows
  drawn block by block on the workers (n >= --cluster-min; every route's
  rows are then drawn by the same blocks, :func:`make_block`); the peaks of
  the driver and of each worker.
- ``hgb``: HistGradientBoostingClassifier (defaults) on the rows with NaN,
  the reference beside every n.

Then the approximation error of the feature Gram against the exact Gram on
2,000 rows, as a function of n_components (it should fall like 1/sqrt(D)).

Usage::

    python benchmarks/bench_scale.py                 # n = 1e4, 1e5, 1e6
    python benchmarks/bench_scale.py --n 10000 --quick
    python benchmarks/bench_scale.py --n 10000000 --routes cluster hgb --quick
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import time

import numpy as np

GAMMA = 0.05  # on standardised data with 20 features, gamma="scale"
C = 1.0
D_LINEAR = 8192  # the in-memory feature route (float64, LinearSVC)
D_STREAM = 512  # float32 features of every row kept: 2 GB at 10^6 rows
D_OUT_OF_CORE = 2560  # default of --ooc-features: the 10^6 line of issue 49
OOC_CHUNK = 25000  # rows per dask block of the out-of-core route
WORKER_MEMORY = "4GiB"  # memory limit of each LocalCluster worker (route cluster)


def make_data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    d = 20
    A = rng.normal(size=(d, d)) / np.sqrt(d)
    X = rng.normal(size=(n, d)) @ A
    X /= X.std(axis=0)
    y = (X[:, 0] * X[:, 1] + np.sin(2 * X[:, 2]) + 0.5 * X[:, 3] > 0).astype(int)
    X[rng.random(X.shape) < 0.3] = np.nan
    return X, y


def _mixing(d: int = 20, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The features' mixing matrix and their standard deviations."""
    A = np.random.default_rng(seed).normal(size=(d, d)) / np.sqrt(d)
    return A, np.sqrt((A**2).sum(axis=0))  # X = Z A, Z standard normal


def make_block(k: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Block ``k`` of ``rows`` rows of the data of :func:`make_data`, drawn
    on its own (seed ``(1, k)``) and standardised by the features'
    theoretical standard deviations: rows made where they are used, for n
    beyond memory."""
    A, std = _mixing()
    rng = np.random.default_rng([1, k])
    X = rng.normal(size=(rows, len(A))) @ A / std
    y = (X[:, 0] * X[:, 1] + np.sin(2 * X[:, 2]) + 0.5 * X[:, 3] > 0).astype(int)
    X[rng.random(X.shape) < 0.3] = np.nan
    return X, y


def make_blocks(n: int) -> tuple[np.ndarray, np.ndarray]:
    """All the blocks of :func:`make_block` for ``n`` rows, in memory."""
    parts = [make_block(k, rows) for k, rows in enumerate(_block_rows(n))]
    return np.vstack([X for X, _ in parts]), np.concatenate([y for _, y in parts])


def _block_rows(n: int) -> list[int]:
    return [min(OOC_CHUNK, n - s) for s in range(0, n, OOC_CHUNK)]


def run(
    route: str, n: int, n_features: int = D_OUT_OF_CORE, blockwise: bool = False
) -> dict:
    """One route at one n, in this process; returns the measurements."""
    import resource

    from sklearn.linear_model import SGDClassifier

    from missingkernels import ExpectedKernelFeatures, MissingKernelSVC

    workers: list[float] = []
    if route != "cluster":  # (it draws its rows on the workers)
        X, y = make_blocks(n) if blockwise else make_data(n)
    cut = int(0.8 * n)
    start = time.perf_counter()
    if route == "cluster":
        accuracy, workers = _cluster_route(n, n_features)
    elif route in ("exact", "features"):
        model = MissingKernelSVC(
            gamma=GAMMA, C=C, route=route, n_kernel_features=D_LINEAR, random_state=0
        ).fit(X[:cut], y[:cut])
        accuracy = float(model.score(X[cut:], y[cut:]))
    elif route == "dask":
        accuracy = _dask_route(X, y, cut)
    elif route == "outofcore":
        accuracy = _out_of_core_route(X, y, cut, n_features)
    elif route == "hgb":
        from sklearn.ensemble import HistGradientBoostingClassifier

        hgb = HistGradientBoostingClassifier(random_state=0).fit(X[:cut], y[:cut])
        accuracy = float(hgb.score(X[cut:], y[cut:]))
    else:
        features = ExpectedKernelFeatures(
            gamma=GAMMA,
            n_components=D_STREAM,
            density_rows=20000,
            dtype="float32",
            random_state=0,
        ).fit(X[:cut])
        Z = features.transform(X)
        # The SVM's objective (alpha = 1 / (C n)); averaged SGD is stable at
        # such a small alpha.
        sgd = SGDClassifier(
            loss="hinge", alpha=1.0 / (C * cut), average=True, random_state=0
        )
        block = 50000
        classes = np.unique(y)
        for epoch in range(5):
            order = np.random.default_rng(epoch).permutation(cut)
            for s in range(0, cut, block):
                rows = np.sort(order[s : s + block])
                sgd.partial_fit(Z[rows], y[rows], classes=classes)
        accuracy = float(sgd.score(Z[cut:], y[cut:]))
    seconds = time.perf_counter() - start
    # The largest process: this one, or a dask worker (ended by now).
    peak = (
        max(
            resource.getrusage(who).ru_maxrss
            for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        )
        / 2**20
    )  # GiB
    return {"route": route, "n": n, "seconds": seconds, "peak_gib": peak,
            "accuracy": accuracy, "workers_peak_gib": workers}  # fmt: skip


def _dask_route(X: np.ndarray, y: np.ndarray, cut: int) -> float:
    import dask.array as da
    from dask.distributed import Client, LocalCluster
    from sklearn.frozen import FrozenEstimator
    from sklearn.linear_model import SGDClassifier

    from missingkernels import ExpectedKernelFeatures
    from missingkernels.dask import expected_features, partial_fit
    from missingkernels.densities import GaussianEMDensity

    with LocalCluster(n_workers=2, threads_per_worker=1) as cluster, Client(cluster):
        chunks = (min(100000, cut), X.shape[1])
        Xd = da.from_array(X[:cut], chunks=chunks).persist()
        yd = da.from_array(y[:cut], chunks=chunks[0]).persist()
        density = GaussianEMDensity().fit(Xd)
        features = ExpectedKernelFeatures(
            gamma=GAMMA,
            n_components=D_STREAM,
            dtype="float32",
            random_state=0,
            density=FrozenEstimator(density),
        ).fit(X[: min(cut, 10000)])
        Zd = expected_features(features, Xd).persist()
        sgd = SGDClassifier(
            loss="hinge", alpha=1.0 / (C * cut), average=True, random_state=0
        )
        partial_fit(sgd, Zd, yd, classes=np.unique(y), n_epochs=5)
        test = da.from_array(X[cut:], chunks=chunks)
        Zt = expected_features(features, test).compute()
        return float(sgd.score(Zt, y[cut:]))


def _out_of_core_route(X: np.ndarray, y: np.ndarray, cut: int, m: int) -> float:
    import dask.array as da

    from missingkernels import MissingKernelSVC

    chunks = (min(OOC_CHUNK, cut), X.shape[1])
    model = MissingKernelSVC(
        gamma=GAMMA, C=C, route="features", n_kernel_features=m, random_state=0
    ).fit(da.from_array(X[:cut], chunks=chunks), da.from_array(y[:cut], chunks[0]))
    print(f"passes over the rows: {model.n_iter_}", file=sys.stderr)
    pred = model.predict(da.from_array(X[cut:], chunks=chunks)).compute()
    return float(np.mean(pred == y[cut:]))


def _cluster_route(n: int, m: int) -> tuple[float, list[float]]:
    """The out-of-core route on a LocalCluster of 2 worker processes with
    bounded memory (:data:`WORKER_MEMORY` each), the rows drawn block by
    block on the workers (:func:`make_block`): no process holds them all.
    Returns the test accuracy and each worker's peak memory (GiB)."""
    import dask
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    from missingkernels import MissingKernelSVC

    rows = _block_rows(n)
    cut = int(0.8 * n)
    assert cut % OOC_CHUNK == 0, "n: a multiple of 5 blocks"
    n_train = cut // OOC_CHUNK
    blocks = [dask.delayed(make_block, pure=True)(k, r) for k, r in enumerate(rows)]
    X = [
        da.from_delayed(b[0], shape=(r, 20), dtype=float)
        for b, r in zip(blocks, rows, strict=True)
    ]
    y = [
        da.from_delayed(b[1], shape=(r,), dtype=int)
        for b, r in zip(blocks, rows, strict=True)
    ]
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, memory_limit=WORKER_MEMORY,
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):  # fmt: skip
        model = MissingKernelSVC(
            gamma=GAMMA, C=C, route="features", n_kernel_features=m, random_state=0,
            verbose=1,
        )  # fmt: skip
        with contextlib.redirect_stdout(sys.stderr):  # the reports, as they come
            model.fit(da.concatenate(X[:n_train]), da.concatenate(y[:n_train]))
        print(f"passes over the rows: {model.n_iter_}", file=sys.stderr)
        pred = model.predict(da.concatenate(X[n_train:]))
        accuracy = float((pred == da.concatenate(y[n_train:])).mean().compute())
        peaks = client.run(_peak_gib)
    return accuracy, sorted(peaks.values())


def _peak_gib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def gram_error(n: int = 2000) -> list[tuple[int, float]]:
    from missingkernels import ExpectedKernelFeatures

    X, _ = make_data(n, seed=1)
    out = []
    for n_components in (64, 256, 1024, 4096):
        errors = []
        for seed in range(3):
            f = ExpectedKernelFeatures(
                gamma=GAMMA, n_components=n_components, random_state=seed
            ).fit(X)
            Z = f.transform(X)
            K = f.kernel_(X, X.copy())
            errors.append(np.sqrt(np.mean((Z @ Z.T - K) ** 2)))
        out.append((n_components, float(np.mean(errors))))
    return out


def summary(rows: list[dict]) -> None:
    """Each route's time as a ratio to HGB's at the same n (same run), and
    its accuracy against HGB's and against the in-memory features route at
    the largest n it ran."""
    hgb = {r["n"]: r for r in rows if r["route"] == "hgb"}
    features = [r for r in rows if r["route"] == "features"]
    best = max(features, key=lambda r: r["n"]) if features else None
    head = "\nThe same runs against HGB at the same n (time ratio, accuracy points)"
    if best is not None:
        head += f" and the in-memory features route at n = {best['n']}"
    print(head)
    for r in rows:
        if r["route"] == "hgb" or r["n"] not in hgb:
            continue
        h = hgb[r["n"]]
        line = (
            f"{r['n']:>8} {r['route']:>9}  time/HGB {r['seconds'] / h['seconds']:6.2f}"
            f"  vs HGB {100 * (r['accuracy'] - h['accuracy']):+6.2f}"
        )
        if best is not None:
            gap = 100 * (r["accuracy"] - best["accuracy"])
            line += f"  vs features@{best['n']} {gap:+6.2f}"
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="*", default=[10**4, 10**5, 10**6])
    parser.add_argument("--exact-max", type=int, default=10**4)
    parser.add_argument("--linear-max", type=int, default=2 * 10**4)
    parser.add_argument("--dask-max", type=int, default=10**5)
    parser.add_argument("--ooc-max", type=int, default=10**6)
    parser.add_argument("--ooc-features", type=int, default=D_OUT_OF_CORE)
    parser.add_argument(
        "--cluster-min", type=int, default=10**7,
        help="from this n: the LocalCluster route, every route's rows drawn "
        "block by block (make_block)",
    )  # fmt: skip
    parser.add_argument(
        "--routes", nargs="*", help="only these routes (default: all that apply)"
    )
    parser.add_argument("--quick", action="store_true", help="skip the Gram error")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        n = int(args.one[1])
        r = run(args.one[0], n, args.ooc_features, n >= args.cluster_min)
        print(json.dumps(r))
        return
    print(f"{'n':>8} {'route':>9} {'seconds':>8} {'peak GiB':>9} {'accuracy':>9}")
    done_rows: list[dict] = []
    for n in args.n:
        routes = ["stream"] + (["dask"] if n <= args.dask_max else [])
        routes += ["outofcore"] if n <= args.ooc_max else []
        routes += (["cluster"] if n >= args.cluster_min else []) + ["hgb"]
        if n <= args.linear_max:
            routes.insert(0, "features")
        if n <= args.exact_max:
            routes.insert(0, "exact")
        if args.routes:
            routes = [r for r in routes if r in args.routes]
        for route in routes:
            done = subprocess.run(
                [
                    *(sys.executable, __file__, "--one", route, str(n)),
                    *("--ooc-features", str(args.ooc_features)),
                    *("--cluster-min", str(args.cluster_min)),
                ],
                stdout=subprocess.PIPE,  # (its reports and errors: on stderr)
                text=True,
            )
            if done.returncode:
                print(f"{n:>8} {route:>9} failed (its error above)")
                continue
            r = json.loads(done.stdout.strip().splitlines()[-1])
            done_rows.append(r)
            workers = " ".join(f"{w:.2f}" for w in r.get("workers_peak_gib", []))
            print(
                f"{n:>8} {route:>9} {r['seconds']:>8.1f} {r['peak_gib']:>9.2f} "
                f"{r['accuracy']:>9.4f}"
                + (f"  (workers' peaks {workers})" * bool(workers)),
                flush=True,
            )
    summary(done_rows)
    if not args.quick:
        print("\nRMS error of the feature Gram (genRBF, 2,000 rows) vs n_components")
        for n_components, err in gram_error():
            print(f"  D={n_components:>5}: {err:.4f}")


if __name__ == "__main__":
    main()

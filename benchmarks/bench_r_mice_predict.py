"""Cost of predicting new rows with R's mice as the density, against ``mice``.

Run::

    .venv/bin/python benchmarks/bench_r_mice_predict.py [--train 300]
        [--test 100 468] [--rate 0.07] [--repeats 3] [--seed 0] [--out FILE]

Fits ``MissingKernelSVC(density=...)`` on ``--train`` rows of 8 correlated
columns with ``--rate`` of their entries missing completely at random
(0.07 leaves about 44% of the rows incomplete, as the 100 rows of issue 48
had 43), once with ``density="r_mice"`` (R's mice through rpy2) and once
with ``density="mice"`` (statsmodels' chained equations), then times
``predict`` on ``--test`` new rows of the same law, in the same run. A new
fitted copy (unpickled) is timed each repeat, so that the draws cached by a
first call do not make the later ones free.

Printed: the ratio r_mice / mice of the median ``predict`` time, per test
size (seconds beside it only to read the ratio; they do not compare across
machines). Issue 48's target: within 10x of ``mice``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import pickle
import platform
import sys
import time

import numpy as np


def _table(rng: np.random.Generator, n: int, rate: float) -> tuple:
    d = 8
    cov = 0.5 * np.eye(d) + 0.5
    X = rng.multivariate_normal(np.zeros(d), cov, size=n)
    y = (X[:, :3].sum(axis=1) + rng.normal(scale=0.5, size=n) > 0).astype(int)
    X[rng.random(X.shape) < rate] = np.nan
    return X, y


def _predict_seconds(blob: bytes, X: np.ndarray, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        model = pickle.loads(blob)
        start = time.perf_counter()
        model.predict(X)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=int, default=300)
    parser.add_argument("--test", type=int, nargs="+", default=[100, 468])
    parser.add_argument("--rate", type=float, default=0.07)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out")
    args = parser.parse_args(argv)

    from missingkernels import MissingKernelSVC

    rng = np.random.default_rng(args.seed)
    X, y = _table(rng, args.train, args.rate)
    tests = {n: _table(rng, n, args.rate)[0] for n in args.test}
    blobs = {}
    for density in ("mice", "r_mice"):
        model = MissingKernelSVC(density=density, random_state=args.seed).fit(X, y)
        blobs[density] = pickle.dumps(model)
    lines = [
        f"# {dt.datetime.now(dt.timezone.utc).isoformat(timespec='seconds')} "
        f"{platform.node()} python {platform.python_version()}",
        f"# command: python {' '.join(sys.argv)}",
        f"# {args.train} training rows x 8, {args.rate:.0%} MCAR; predict "
        f"median of {args.repeats} (fresh unpickled model each)",
        "| new rows | incomplete | mice (s) | r_mice (s) | r_mice / mice |",
        "|---|---|---|---|---|",
    ]
    for n, Xt in tests.items():
        incomplete = int(np.isnan(Xt).any(axis=1).sum())
        base = _predict_seconds(blobs["mice"], Xt, args.repeats)
        ours = _predict_seconds(blobs["r_mice"], Xt, args.repeats)
        lines.append(
            f"| {n} | {incomplete} | {base:.3f} | {ours:.3f} | {ours / base:.1f} |"
        )
        print(lines[-1], flush=True)
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "a") as fh:
            fh.write(text + "\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The PSD battery of issue 32: Grams of genrbf and expected_rbf on 200 rows
with the maximum-likelihood Gaussian EM density (``prior_rows=0``: the
ill-conditioned fits of few rows with many entries missing; ``--prior`` uses
the default density with its prior), d in {2, 10, 40}, 0 to 90% of the
entries missing at random, both metrics. Prints, per Gram, the smallest
eigenvalue relative to n, the range of the entries, and whether the Gram was
refused (the seconds include the density's fit, on the first Gram of each
setting); exits non-zero if a Gram is not PSD (smallest eigenvalue below
-1e-10 n), leaves [0, 1], or is refused.

Usage::

    python benchmarks/psd_battery.py            # the whole battery
    python benchmarks/psd_battery.py --d 10     # one dimension
    python benchmarks/psd_battery.py --prior    # the default density

The committed results_psd_battery.txt was computed when the maximum-likelihood
fit was the default density, i.e. as the first command now runs.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np

from missingkernels import get_kernel
from missingkernels.densities import GaussianEMDensity


def data(rng: np.random.Generator, n: int, d: int, rate: float) -> np.ndarray:
    A = rng.normal(size=(d, d))
    X = rng.normal(size=(n, d)) @ A / np.sqrt(d) + rng.normal(size=d)
    mask = rng.random(X.shape) < rate
    mask[mask.all(axis=1), 0] = False
    X[mask] = np.nan
    return X


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--d", type=int, nargs="+", default=[2, 10, 40])
    parser.add_argument(
        "--rates", type=float, nargs="+", default=[0.0, 0.3, 0.5, 0.7, 0.9]
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--prior",
        action="store_true",
        help="the default density (with its prior) instead of the ML fit",
    )
    args = parser.parse_args()
    density = GaussianEMDensity() if args.prior else GaussianEMDensity(prior_rows=0)
    bad = 0
    print(f"{'d':>3} {'rate':>5} {'metric':>11} {'kernel':>12} "
          f"{'min eig / n':>12} {'min':>9} {'max':>9} {'s':>6}  status")  # fmt: skip
    for d in args.d:
        for rate in args.rates:
            X = data(np.random.default_rng(args.seed), args.n, d, rate)
            for metric in ("euclidean", "mahalanobis"):
                for name in ("genrbf", "expected_rbf"):
                    t = time.perf_counter()
                    try:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            kernel = get_kernel(name, metric=metric, density=density)
                            K = kernel.fit(X)(X)
                    except ValueError as exc:
                        bad += 1
                        print(f"{d:>3} {rate:>5.1f} {metric:>11} {name:>12} "
                              f"REFUSED: {str(exc)[:60]}")  # fmt: skip
                        continue
                    low = float(np.linalg.eigvalsh(0.5 * (K + K.T)).min())
                    ok = low >= -1e-10 * len(K) and K.min() >= 0 and K.max() <= 1
                    bad += not ok
                    print(f"{d:>3} {rate:>5.1f} {metric:>11} {name:>12} "
                          f"{low / len(K):>12.2e} {K.min():>9.2e} {K.max():>9.6f} "
                          f"{time.perf_counter() - t:>6.2f}  "
                          f"{'ok' if ok else 'FAIL'}")  # fmt: skip
    print(f"{bad} failing Grams")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark the EM densities on incomplete data: plain EM against SQUAREM.

Run::

    .venv/bin/python benchmarks/bench_em.py [--n 100000] [--d 20] [--rate 0.2]
    .venv/bin/python benchmarks/bench_em.py --real [--repeats 5] [--data-dir DIR]

The simulated mode (default: 100k rows, 20 features, MCAR) prints the fit
time, the number of EM steps and the time per step (each step is one pass
over the rows grouped by missing pattern: O(n d^2 + sum over patterns of
|J|^3)) of plain EM and of SQUAREM, and the ratio SQUAREM / plain of the fit
times.

The real mode fits the tables with natural missing values of the shared data
(horse_colic without 'outcome', hepatitis, mammographic_masses,
cleveland_heart_disease, pima_indians_diabetes_na, house_votes_84),
standardised as the experiment runner does (``StandardScaler`` on the rows),
and prints per table, for ``acceleration="none"`` and ``"squarem"``: EM
steps, the converged flag and the median time per fit over ``--repeats``
fits (both measured in this run, interleaved), the ratios SQUAREM / plain of
the steps and of the median times, and the largest difference between the two
fits' means and covariances in units of the features' standard deviations
and the difference of their (penalised) log-likelihoods, SQUAREM - plain.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from missingkernels.densities import GaussianEMDensity, GaussianMixtureDensity
from missingkernels.experiments import simulate_missing

REAL_TABLES = [
    "horse_colic",
    "hepatitis",
    "mammographic_masses",
    "cleveland_heart_disease",
    "pima_indians_diabetes_na",
    "house_votes_84",
]
SCHEMES = ("none", "squarem")


def _density(kind: str, acceleration: str) -> GaussianEMDensity:
    if kind == "gmm":
        return GaussianMixtureDensity(  # type: ignore[return-value]
            n_components=3, random_state=0, acceleration=acceleration
        )
    return GaussianEMDensity(acceleration=acceleration)


def _moments(density) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(density, GaussianMixtureDensity):
        return density.means_, density.covariances_
    return density.mean_, density.covariance_


def _timed_fits(X: np.ndarray, kind: str, repeats: int) -> dict:
    """Both schemes, ``repeats`` fits each, interleaved (same load)."""
    times: dict[str, list[float]] = {s: [] for s in SCHEMES}
    fits: dict[str, object] = {}
    for _ in range(repeats):
        for scheme in SCHEMES:
            density = _density(kind, scheme)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                start = time.perf_counter()
                density.fit(X)
                times[scheme].append(time.perf_counter() - start)
            fits[scheme] = density
    return {s: (fits[s], float(np.median(times[s]))) for s in SCHEMES}


def simulated(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(args.seed)
    A = rng.normal(size=(args.d, args.d))
    cov = A @ A.T / args.d + 0.1 * np.eye(args.d)
    X = rng.multivariate_normal(np.zeros(args.d), cov, size=args.n)
    X = simulate_missing(X, "mcar", args.rate, random_state=args.seed)
    n_patterns = len(np.unique(np.isnan(X), axis=0))
    print(
        f"n={args.n} d={args.d} MCAR rate={args.rate:.2f} "
        f"distinct patterns={n_patterns}, median of {args.repeats} fit(s)"
    )
    results = _timed_fits(X, "gaussian_em", args.repeats)
    for scheme, (density, fit_time) in results.items():
        # fit also evaluates the log-likelihood once more at the final estimate.
        per_iter = fit_time / (density.n_iter_ + 1)
        err = np.max(np.abs(density.covariance_ - cov)) / np.max(np.abs(cov))
        print(
            f"acceleration={scheme!r}: {fit_time:.2f} s, {density.n_iter_} EM "
            f"steps (converged={density.converged_}), {per_iter * 1000:.0f} ms "
            f"per step; max |covariance error| / max |covariance| = {err:.3f}"
        )
    plain, fast = results["none"], results["squarem"]
    print(f"ratio squarem/plain: time {fast[1] / plain[1]:.2f}")
    start = time.perf_counter()
    fast[0].conditionals(X)
    print(f"conditionals(X) for all rows: {time.perf_counter() - start:.2f} s")


def real(args: argparse.Namespace) -> None:
    from sklearn.preprocessing import StandardScaler

    from missingkernels.datasets import load_dataset

    print(
        f"density={args.density}, median of {args.repeats} fits per scheme "
        "(interleaved); diff = max |squarem - plain| over means and "
        "covariances, in feature sd"
    )
    header = (
        f"{'table':<26}{'n x d':>9}{'miss%':>7} | {'plain: steps conv ms':>21} | "
        f"{'squarem: steps conv ms':>23} | {'ratio steps':>11}{'ratio time':>11}"
        f"{'diff':>9}{'dloglik':>9}"
    )
    print(header)
    print("-" * len(header))
    ratios = []
    for name in args.tables:
        X = load_dataset(name, data_dir=args.data_dir).X.astype(np.float64)
        X = StandardScaler().fit_transform(X)  # NaN kept, as the runner does
        results = _timed_fits(X, args.density, args.repeats)
        (plain, t_plain), (fast, t_fast) = results["none"], results["squarem"]
        m0, S0 = _moments(plain)
        m1, S1 = _moments(fast)
        # The standardised features have observed sd 1: differences are in sd.
        diff = max(np.max(np.abs(m1 - m0)), np.max(np.abs(S1 - S0)))
        gain = fast.loglik_ - plain.loglik_
        ratio_time = t_fast / t_plain
        ratios.append(ratio_time)
        print(
            f"{name:<26}{f'{X.shape[0]}x{X.shape[1]}':>9}"
            f"{100 * np.isnan(X).mean():>7.1f} | "
            f"{plain.n_iter_:>9} {plain.converged_!s:>5} {1000 * t_plain:>5.1f} | "
            f"{fast.n_iter_:>11} {fast.converged_!s:>5} {1000 * t_fast:>5.1f} | "
            f"{fast.n_iter_ / plain.n_iter_:>11.2f}{ratio_time:>11.2f}{diff:>9.1e}"
            f"{gain:>9.1e}"
        )
    print(f"geometric mean of the time ratios: {np.exp(np.mean(np.log(ratios))):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--d", type=int, default=20)
    parser.add_argument("--rate", type=float, default=0.2, help="MCAR rate")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--real", action="store_true", help="the real tables with natural NaN"
    )
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--data-dir", default=None, help="the shared data folder")
    parser.add_argument("--tables", nargs="+", default=REAL_TABLES)
    parser.add_argument(
        "--density", choices=["gaussian_em", "gmm"], default="gaussian_em"
    )
    args = parser.parse_args()
    if args.real:
        args.repeats = args.repeats or 5
        real(args)
    else:
        args.repeats = args.repeats or 1
        simulated(args)


if __name__ == "__main__":
    main()

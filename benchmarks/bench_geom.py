"""GeomSVC's instance norms: the compiled prefix-tree products against one
exponential per pattern and pair (numpy), as ratios measured in the same run.

Usage: python benchmarks/bench_geom.py [--sizes 200 400 800] [--features 8 14 34]
[--rate 0.3]

For each training size n and number of features d (correlated Gaussian rows,
standardised, MAR missingness of the genRBF paper at ``--rate``) it fits
``GeomSVC(C=8, gamma=1/d)`` once (the first fit compiles the loop and is not
timed), then prints: the seconds of one update of ``||w^(i)||`` over the
training rows with the compiled loop and with the direct numpy evaluation,
their ratio and largest relative difference, and the whole fit's seconds as a
ratio to one scikit-learn ``SVC`` fit on mean-imputed rows.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.impute import SimpleImputer
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from missingkernels.estimators import GeomSVC
from missingkernels.experiments import simulate_missing


def direct_norms(clf: GeomSVC, X: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """``sqrt(b' exp(-gamma sum_{f in F_i} (x_jf - x_kf)^2) b)``, one exponential
    per pattern and pair (blocks of patterns to bound memory)."""
    S0 = np.nan_to_num(clf.support_vectors_, nan=0.0)
    patterns, which = np.unique(~np.isnan(X), axis=0, return_inverse=True)
    j, k = np.triu_indices(S0.shape[0], 1)
    log_k = ((S0[j] - S0[k]) ** 2).T * -clf.gamma_
    weights = beta[j] * beta[k]
    out = np.empty(patterns.shape[0])
    step = max(1, 4_000_000 // max(1, j.size))
    for start in range(0, patterns.shape[0], step):
        block = patterns[start : start + step].astype(float) @ log_k
        out[start : start + step] = 2.0 * (np.exp(block) @ weights)
    return np.sqrt(np.maximum(out + beta @ beta, 0.0))[which.ravel()]


def best_of(repeats: int, func, *args) -> float:  # type: ignore[no-untyped-def]
    """Fewest seconds of ``func(*args)`` over ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func(*args)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 400, 800])
    parser.add_argument("--features", type=int, nargs="+", default=[8, 14, 34])
    parser.add_argument("--rate", type=float, default=0.3)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    warm = rng.normal(size=(40, 3))
    GeomSVC(max_iter=2).fit(
        simulate_missing(warm, "mcar", 0.2, random_state=0), warm[:, 0] > 0
    )
    print(
        f"{'n':>5} {'d':>3} {'patterns':>8} {'n_SV':>5} {'tree s':>8} {'direct s':>9}"
        f" {'direct/tree':>11} {'max rel diff':>12} {'fit s':>7} {'fit/SVC':>8}"
    )
    for d in args.features:
        for n in args.sizes:
            A = rng.normal(size=(d, d)) / np.sqrt(d)
            X = rng.normal(size=(n, d)) @ (A + np.eye(d))
            y = X[:, 0] - X[:, 1] + 0.5 * rng.normal(size=n) > 0
            Xm = StandardScaler().fit_transform(
                simulate_missing(X, "mar", args.rate, random_state=0)
            )
            model = GeomSVC(C=8.0, gamma=1.0 / d)
            fit_s = best_of(1, model.fit, Xm, y)
            X_mean = SimpleImputer().fit_transform(Xm)
            svc_s = best_of(3, SVC(C=8.0, gamma=1.0 / d).fit, X_mean, y)
            beta = model.dual_coef_[0] / model.scalings_[model.support_]
            tree_s = best_of(3, model._instance_norms, Xm, beta)
            direct_s = best_of(3, direct_norms, model, Xm, beta)
            tree, direct = (
                model._instance_norms(Xm, beta),
                direct_norms(model, Xm, beta),
            )
            rel = np.abs(tree - direct).max() / np.abs(direct).max()
            n_patterns = np.unique(~np.isnan(Xm), axis=0).shape[0]
            print(
                f"{n:>5} {d:>3} {n_patterns:>8} {len(model.support_):>5} {tree_s:>8.3f}"
                f" {direct_s:>9.3f} {direct_s / tree_s:>11.1f} {rel:>12.1e}"
                f" {fit_s:>7.2f} {fit_s / svc_s:>8.0f}"
            )


if __name__ == "__main__":
    main()

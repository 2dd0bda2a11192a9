"""Vignette 1: getting started with missingkernels.

Fit and predict on rows with NaN, tune C and gamma with GridSearchCV, choose
the density of the missing entries, and extend the registry with a plugin.

    python vignettes/01_getting_started.py --quick
    python vignettes/01_getting_started.py --full

The output (Markdown) is written to vignettes/results/01_getting_started/;
the full mode's is committed (about 1.5 minutes on two cores).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import missingkernels
from missingkernels import MissingKernelSVC
from missingkernels.experiments import simulate_missing
from missingkernels.hookspecs import hookimpl

OUT = Path(__file__).resolve().parent / "results" / "01_getting_started"


def steps(quick: bool) -> None:
    print("## 1. Data with missing values\n")
    X, y = load_breast_cancer(return_X_y=True)
    if quick:
        X, y = X[:200, :8], y[:200]
    X_miss = simulate_missing(X, "mar", 0.3, random_state=0)
    print(
        f"{X_miss.shape[0]} rows x {X_miss.shape[1]} features, "
        f"{np.isnan(X_miss).mean():.1%} missing (MAR, genRBF paper eq. 26)\n"
    )
    X_tr, X_te, y_tr, y_te = train_test_split(
        X_miss, y, test_size=0.3, stratify=y, random_state=0
    )

    print("## 2. Fit and predict: no imputation, NaN goes straight in\n")
    # StandardScaler learns each feature's mean and scale from the observed
    # training entries only and keeps NaN: inside the pipeline, the test rows
    # never inform the scaling (nor the density, fitted in MissingKernelSVC).
    clf = make_pipeline(StandardScaler(), MissingKernelSVC(kernel="genrbf", C=1.0))
    clf.fit(X_tr, y_tr)
    print(
        "```python\n"
        "clf = make_pipeline(StandardScaler(), "
        'MissingKernelSVC(kernel="genrbf", C=1.0))\n'
        "clf.fit(X_tr, y_tr)\n```"
    )
    print(
        f"test accuracy: {clf.score(X_te, y_te):.3f}; the scaling and the density "
        f"({type(clf[-1].density_).__name__}) are fitted on the training rows "
        "only\n"
    )

    print(
        "## 3. Grid search (the scaling and the density are refitted inside "
        "every fold)\n"
    )
    grid = {"C": [1.0, 8.0], "gamma": [2.0**-5, 2.0**-3]}
    if not quick:
        grid = {
            "C": [2.0**k for k in range(-1, 8, 2)],
            "gamma": [2.0**k for k in range(-7, 0, 2)],
        }
    pipe = make_pipeline(StandardScaler(), MissingKernelSVC(kernel="genrbf"))
    search = GridSearchCV(
        pipe, {f"missingkernelsvc__{k}": v for k, v in grid.items()}, cv=3
    ).fit(X_tr, y_tr)
    best = {k.split("__")[1]: v for k, v in search.best_params_.items()}
    print(
        f"best {best}, CV accuracy {search.best_score_:.3f}, "
        f"test accuracy {search.score(X_te, y_te):.3f}\n"
    )

    print("## 4. Choosing a density\n")
    print("| kernel | density | test accuracy | fit seconds |\n|---|---|---|---|")
    choices = [
        ("genrbf", "gaussian_em"),
        ("expected_rbf", "gaussian_em"),
        ("genrbf", "gaussian_mixture"),
    ]
    if not quick:
        choices.append(("genrbf", "iterative"))
    for kernel, density in choices:
        if density not in missingkernels.list_densities():
            print(f"| {kernel} | {density} | not installed | - |")
            continue
        start = time.perf_counter()
        model = make_pipeline(
            StandardScaler(),
            MissingKernelSVC(
                kernel=kernel, density=density, C=8.0, gamma=best["gamma"]
            ),
        ).fit(X_tr, y_tr)
        print(
            f"| {kernel} | {density} | {model.score(X_te, y_te):.3f} | "
            f"{time.perf_counter() - start:.2f} |"
        )
    print()

    print("## 5. Plugins\n")
    print("Registered kernels: " + ", ".join(missingkernels.list_kernels()))
    print("\nRegistered densities: " + ", ".join(missingkernels.list_densities()))
    print("\nRegistered baselines: " + ", ".join(missingkernels.list_baselines()))

    class MyPlugin:
        @hookimpl
        def missingkernels_register_densities(self):  # type: ignore[no-untyped-def]
            from missingkernels.densities import GaussianEMDensity

            def ridge_em(**params):  # type: ignore[no-untyped-def]
                """Gaussian EM with a ridge on the covariance."""
                return GaussianEMDensity(ridge=1e-3, **params)

            return {"ridge_em": ridge_em}

    missingkernels.register_plugin(MyPlugin(), name="my-plugin")
    try:
        model = make_pipeline(
            StandardScaler(), MissingKernelSVC(density="ridge_em")
        ).fit(X_tr, y_tr)
        print(
            f"\nA density registered at run time ('ridge_em'): test accuracy "
            f"{model.score(X_te, y_te):.3f}. Installed plugins use the entry-point "
            "group 'missingkernels' instead (see the R plugin in plugins/)."
        )
    finally:
        missingkernels.unregister_plugin("my-plugin")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--quick", action="store_true")
    mode.add_argument("--full", action="store_true")
    args = parser.parse_args()
    buf = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(buf):
        print("# Getting started with missingkernels\n")
        steps(args.quick)
        mode = "--quick" if args.quick else "--full"
        print(
            f"\n(command `python vignettes/01_getting_started.py {mode}`, run time "
            f"{time.perf_counter() - start:.1f} s, missingkernels "
            f"{missingkernels.__version__})"
        )
    text = buf.getvalue()
    out = OUT / ("quick" if args.quick else "full")
    out.mkdir(parents=True, exist_ok=True)
    (out / "README.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

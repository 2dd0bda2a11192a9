"""Vignette 3: regression under MAR 30% (Struski et al.), R^2.

Struski, Śmieja, Tabor, "Pointed subspace approach to incomplete data" /
"regression SVM for incomplete data" (struski-regression-svm-incomplete-data):
seven UCI/KEEL regression sets (their Table 1), 5-fold CV, SVR with C = 1,
epsilon = 0.1 and a fixed gamma per dataset (their Table 1), MAR removal by
the same distance rule as the genRBF paper. That paper reports its R^2 in
Figures 3-4 only (no table in the text), so no paper numbers are quoted here.

    python vignettes/03_regression_mar.py --quick
    python vignettes/03_regression_mar.py --full

gamma is for standardised features, as in the paper ("trained on normalized
subsets"). abalone's sex (M/F/I) is one-hot encoded (10 features, the paper
counts 8 attributes).
"""

from __future__ import annotations

import sys

from _common import PLAIN_EM_NOTE, STRUSKI_GAMMA, best_of, load, main, mean_std

OURS = ("genrbf", "expected_rbf")
IMPUTATION = ("zero", "mean", "knn", "iterative", "mean_indicator", "knn_indicator")

# Struski et al., Table 1: gamma per dataset.
GAMMA = STRUSKI_GAMMA
METHODS = [
    "zero",
    "mean",
    "knn",
    "iterative",
    "mean_indicator",
    "knn_indicator",
    "hgb",
    "genrbf",
    "expected_rbf",
]


def config(quick: bool) -> dict:
    names = ["friedman", "laser"] if quick else list(GAMMA)
    return dict(
        datasets=load(names, max_rows=300 if quick else None),
        metric="r2",
        methods=["mean", "hgb", "genrbf"] if quick else METHODS,
        mechanisms=["mar"],
        rates=[0.3],
        n_draws=1 if quick else 5,
        outer_folds=2 if quick else 5,
        inner_folds=2 if quick else 5,
        C_grid=[1.0],
        gamma_grid=sorted(set(GAMMA.values())),
        intro=(
            "Paper: Struski et al., regression SVM for incomplete data (Table 1 for "
            "the datasets and gammas; results only in Figures 3-4, not quoted). "
            "Deviation: the paper fixes gamma per dataset from complete-data runs; "
            "here C = 1 as in the paper and gamma is chosen by the inner CV among "
            "the paper's per-dataset values {2^-6, 2^-5, 2^-4}. Beside the "
            "paper's methods: mean and k-NN imputation with missingness "
            "indicators, and histogram gradient boosting with native missing "
            "values (hgb, searched over learning_rate in {0.03, 0.1, 0.3} x "
            "max_leaf_nodes in {15, 31, 63} instead of C x gamma)." + PLAIN_EM_NOTE
        ),
    )


COMPARISON = """\
Our kernels against what a user would otherwise pick, on the table above: the
expected-RBF SVR is within 0.012 R^2 of genRBF everywhere, so "ours" is
genRBF throughout. It is best on abalone (0.509, +0.021 over hgb, +0.037 over
the best imputation, mean + indicators) and ties on mortgage (0.996 at three
decimals, though plain k-NN imputation is higher by less than 0.001 in all
five draws; hgb 0.985). Histogram gradient boosting is far ahead
on airfoil_self_noise (0.627 vs 0.457 and 0.495 for mean + indicators),
laser (0.898 vs 0.795 and 0.806) and concrete_compressive_strength (0.678 vs
0.592 and 0.587), and slightly ahead on stock (0.909 vs 0.900), where k-NN
imputation with indicators is best (0.934). On friedman the three are within
0.02 (mean + indicators 0.684, hgb 0.670, genRBF 0.665). Adding missingness
indicators to mean imputation gains 0.021 (mortgage) to 0.061 (laser) on every
dataset and makes it beat genRBF on three of seven (airfoil, friedman, laser);
genRBF is ahead of it on concrete only by 0.005. The
SVRs are held to the paper's C = 1, epsilon = 0.1 and three gammas while hgb
searches nine settings of its own, so part of hgb's lead may be tuning; the
best imputation pipeline is picked per dataset after the fact, which favours
it. With seven blocks no pair differs after Holm's correction (the smallest
two-sided Wilcoxon p-value with n = 7 is 1/64, times 36 pairs > 0.05), and in
the Friedman/Nemenyi ranks hgb (2.43) and genRBF (2.86) are within the
critical difference of each other and of both indicator pipelines.
"""


def _versus(means, draws, ours, other):  # type: ignore[no-untyped-def]
    """Ours minus other (means over draws), and the draws where ours is higher."""
    if ours is None or other is None:
        return "-"
    wins = int((draws[ours] > draws[other]).sum())
    diff = means.loc[ours, "mean"] - means.loc[other, "mean"]
    return f"{diff:+.3f} ({wins}/{len(draws)} draws)"


def report(results, extra) -> str:  # type: ignore[no-untyped-def]
    """Per dataset: our best kernel, the best imputation pipeline and hgb."""
    ok = results[(results["metric"] == "r2") & (results["error"] == "")]
    per_draw = ok.groupby(["dataset", "method", "draw"])["score"].mean()
    stats = per_draw.groupby(["dataset", "method"]).agg(["mean", "std"])
    lines = [
        "## Our best kernel vs the best imputation pipeline vs hgb (R^2)",
        "",
        "Per dataset, the best by mean R^2 of our kernels (genrbf, expected_rbf) "
        "and of the imputation pipelines (zero, mean, knn, iterative, "
        "mean_indicator, knn_indicator), and hgb; mean ± std over draws; the "
        "differences are ours minus the other, with the draws (of those all "
        "three finished) where ours scores higher.",
        "",
        "| dataset | ours (best kernel) | best imputation pipeline | hgb "
        "| ours - imputation | ours - hgb |",
        "|---|---|---|---|---|---|",
    ]
    for dataset in sorted(ok["dataset"].unique()):
        means = stats.loc[dataset]
        ours, imp = best_of(means, OURS), best_of(means, IMPUTATION)
        hgb = "hgb" if "hgb" in means.index else None
        names = [n for n in (ours, imp, hgb) if n is not None]
        draws = per_draw.loc[dataset].unstack("method")[names].dropna()
        lines.append(
            f"| {dataset} | {ours}: {mean_std(means, ours)} | "
            f"{imp}: {mean_std(means, imp)} | {mean_std(means, hgb)} | "
            f"{_versus(means, draws, ours, imp)} | "
            f"{_versus(means, draws, ours, hgb)} |"
        )
    return "\n".join(lines) + "\n\n" + COMPARISON


if __name__ == "__main__":
    sys.exit(main("03_regression_mar", "Regression, MAR 30% (R^2)", config, report))

"""Vignette 6: datasets with real missing values, all methods.

pima_indians_diabetes_na, hepatitis, horse_colic (post-hoc 'outcome'
dropped), mammographic_masses (non-predictive 'bi_rads' dropped) and
cleveland_heart_disease (target num > 0). Balanced accuracy is reported too
(hepatitis and horse_colic are imbalanced).

    python vignettes/06_real_missingness.py --quick
    python vignettes/06_real_missingness.py --full
"""

from __future__ import annotations

import sys

from _common import load, main, socp_method, versus_table

from missingkernels.datasets import load_dataset
from missingkernels.experiments import (
    PAPER_C_GRID,
    PAPER_GAMMA_GRID,
    format_table,
)

DATASETS = [
    "pima_indians_diabetes_na",
    "hepatitis",
    "horse_colic",
    "mammographic_masses",
    "cleveland_heart_disease",
]
METHODS = [
    "zero",
    "mean",
    "knn",
    "iterative",
    "r_mice",
    "missforest",
    "gmm",
    "em",
    "mean_indicator",
    "knn_indicator",
    "hgb",
    "genrbf",
    "expected_rbf",
    "geom",
]


def config(quick: bool) -> dict:
    return dict(
        datasets=load(["hepatitis", "cleveland_heart_disease"] if quick else DATASETS),
        metric="accuracy",
        methods=["zero", "mean", "em", "mean_indicator", "hgb"]
        if quick
        else [*METHODS, socp_method()],
        mechanisms=["none"],
        n_draws=1 if quick else 5,
        outer_folds=2 if quick else 5,
        inner_folds=2 if quick else 5,
        C_grid=[1.0, 8.0] if quick else PAPER_C_GRID,
        gamma_grid=[2.0**-5, 2.0**-3] if quick else PAPER_GAMMA_GRID,
        intro=(
            "The data's own missing values (mechanism none); a draw is a new "
            "split. Every method of the package for real-valued features: the "
            "imputation baselines (mean and k-NN also with missingness "
            "indicators), the EM-imputed SVM, our kernels, the SOCP "
            "(kappa 0.9, searched over C in {1, 8, 64} x gamma in {2^-5, 2^-3} "
            "as in vignette 4; the others over the genRBF paper's grid), the "
            "peer geom (all five targets are binary) and histogram gradient "
            "boosting with native missing values (hgb, searched over "
            "learning_rate in {0.03, 0.1, 0.3} x max_leaf_nodes in "
            "{15, 31, 63}). Belanche's K1/K2 are for binary features "
            "(vignette 5). The EM-based methods em, genrbf, expected_rbf and "
            "gmm were rerun with SQUAREM when it became the EM densities' "
            "default (acceleration='squarem'); socp's cells (its expected RBF "
            "over the Gaussian EM density) were computed with plain EM and "
            "not rerun (282 min of compute). geom was rerun after a fix of "
            "its scalings (a row valid only on features constant over the "
            "support vectors now keeps s = 1; see vignette 8): 1 of its 125 "
            "cells changed (mammographic_masses, draw 1, fold 0: accuracy "
            "0.798 before, 0.793 after, with another grid point)."
            " The r_mice cells were computed before the R plugin imputed a "
            "test row from the fitted chains' models (2026-11-28); they used one "
            "mice run per test row (the row marked in mice's ignore): not rerun "
            "yet, so they may differ from what the current package computes."
        ),
    )


OURS = ("genrbf", "expected_rbf")
IMPUTATION = (
    "zero",
    "mean",
    "knn",
    "iterative",
    "r_mice",
    "missforest",
    "gmm",
    "em",
    "mean_indicator",
    "knn_indicator",
)

COMPARISON = """\
Our kernels against what a user would otherwise pick, on the tables above
(accuracy first). genRBF and the expected-RBF kernel are within 0.006 of each
other on every dataset, and in accuracy the better of them is never the best
of the three. The best imputation pipeline, picked per dataset after the fact
(which favours it), is ahead of it everywhere, by 0.001 (cleveland, mean
imputation) to 0.011 (mammographic_masses, k-NN with indicators, all five
draws); ours scores higher in 4 of the 25 draws. In balanced accuracy it is
level on hepatitis (+0.001) and behind by 0.001 to 0.011 elsewhere. Against
histogram gradient boosting the kernels win on the two smallest sets:
cleveland_heart_disease (303 rows, 0.15% missing, so a plain SVM-vs-boosting
comparison: +0.033, all five draws) and hepatitis (155 rows: +0.062 in
accuracy and +0.095 in balanced accuracy, four of five draws), where hgb's
accuracy (0.786) is below the majority-class rate (0.794) on average and in
three of five draws. hgb wins on horse_colic, the set with most missing
values (24.9%: 0.844 vs 0.832, all five draws, also ahead of every imputation
pipeline), and on mammographic_masses (0.800 vs 0.788, all five draws); on
pima_indians_diabetes_na it ties in accuracy (0.759 vs 0.758) but is ahead in
balanced accuracy (0.722 vs 0.704, all five draws). Missingness indicators
matter little here: mean imputation with them is within 0.008 of mean
imputation either way, k-NN with them gains 0.004 to 0.012 except on pima
(-0.006), and it ranks second overall (4.40) after missForest (3.60). With
five datasets nothing is significant: Friedman p = 0.27, and no pair differs
after Holm's correction (the smallest two-sided Wilcoxon p-value with n = 5
is 1/16 before it); genRBF (8.80) and expected_rbf (9.00) rank in the lower
half of the 15 methods, hgb 8.00, all within the critical difference (9.59).
The kernel and imputation SVMs search 72 (C, gamma) points while hgb
searches 9 settings around scikit-learn's defaults (min_samples_leaf 20 on
training folds of 124 rows for hepatitis), so hgb may be under-tuned on the
small sets. On these five
sets with real missing values the kernels are not better than what a user
would otherwise do: the best imputation pipeline is as good or slightly
better on every set, and boosting is better on three of the five
(horse_colic, the most incomplete, mammographic_masses, and pima in balanced
accuracy) and worse on the two smallest.
"""


def _labels(dataset: str):  # type: ignore[no-untyped-def]
    return load_dataset(dataset).y


def report(results, extra) -> str:  # type: ignore[no-untyped-def]
    # Accuracy selects the hyperparameters; balanced accuracy of the same
    # models is shown for the imbalanced sets (hepatitis 79% / horse_colic 63%
    # majority class).
    lines = [
        "## Our best kernel vs the best imputation pipeline vs hgb",
        "",
        "Per dataset, the best by mean score of our kernels (genrbf, "
        "expected_rbf) and of the imputation pipelines (zero, mean, knn, "
        "iterative, r_mice, missforest, gmm, em, mean_indicator, "
        "knn_indicator), and hgb; mean ± std over draws; the differences are "
        "ours minus the other, with the draws (of those all three finished) "
        "where ours scores higher / the same / lower. The majority class "
        "column is the score of always predicting the most frequent class. "
        "The SOCP and the peer geom are in the tables above and below.",
        "",
        "### accuracy",
        "",
        *versus_table(results, "accuracy", OURS, IMPUTATION, _labels),
        "",
        "### balanced accuracy (the same models, selected on accuracy; the "
        "best of each group picked again by balanced accuracy)",
        "",
        *versus_table(results, "balanced_accuracy", OURS, IMPUTATION, _labels),
        "",
        COMPARISON,
        "## balanced_accuracy: mean ± std over draws (same models)",
        "",
        format_table(results, "balanced_accuracy"),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(
        main("06_real_missingness", "Real missingness, all methods", config, report)
    )

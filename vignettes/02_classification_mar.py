"""Vignette 2: classification under MAR 30%, the eight datasets of Table 2.

Śmieja, Struski, Tabor, Marzec, "Generalized RBF kernel for incomplete data",
Knowledge-Based Systems 173 (2019), Table 2 (mean ± std accuracy over 10 draws
of 30% MAR missingness, eq. 26; nested 5x5 CV; C in {2^-5, ..., 2^9},
gamma in {2^-5, ..., 2^11}).

Run from the repository root::

    python vignettes/02_classification_mar.py --quick   # CI smoke run
    python vignettes/02_classification_mar.py --full    # the paper's protocol

Deviations from the paper, on purpose and stated in the report: the 16 rows
of breast_cancer_wisconsin with a naturally missing bare_nuclei are dropped
before simulating (the MAR mechanism needs complete data); genRBF's Gaussian
is fitted by our EM (``gaussian_em``), not R ``norm``; the paper's MICE is run
as ``iterative``, scikit-learn's chained equations with one posterior draw,
not R ``mice``; missForest uses 30 trees and 5 iterations (R: 100 trees, up
to 10 iterations); karma is not implemented (geom is, as GeomSVC).
"""

from __future__ import annotations

import dataclasses
import sys

from _common import (
    GENRBF_PAPER_DATASETS,
    IMPUTATION_PIPELINES,
    PLAIN_EM_NOTE,
    complete_rows,
    load,
    main,
    paper_beside,
    versus_table,
)

from missingkernels.experiments import (
    PAPER_C_GRID,
    PAPER_GAMMA_GRID,
    format_table,
    resolve_method,
)

DATASETS = list(GENRBF_PAPER_DATASETS)
# genRBF in the fitted covariance's scalar product (the paper's Appendix D and
# the authors' experiments); "genrbf" is the Euclidean default.
GENRBF_MAHALANOBIS = dataclasses.replace(
    resolve_method("genrbf", kernel_params={"metric": "mahalanobis"}),
    name="genrbf_mahalanobis",
)
METHODS = [
    *IMPUTATION_PIPELINES,
    "hgb",
    "genrbf",
    GENRBF_MAHALANOBIS,
    "expected_rbf",
    "geom",
]

# Table 2 of the genRBF paper, verbatim (accuracy, mean ± std over 10 draws).
PAPER_TABLE_2 = {
    "australian": {
        "genrbf": "0.833 ± 0.014",
        "geom": "0.799 ± 0.017",
        "gmm": "0.692 ± 0.012",
        "karma": "0.828 ± 0.018",
        "knn": "0.566 ± 0.007",
        "mean": "0.832 ± 0.018",
        "mice": "0.558 ± 0.009",
        "missforest": "0.565 ± 0.009",
        "zero": "0.817 ± 0.019",
    },
    "banknote_authentication": {
        "genrbf": "0.911 ± 0.012",
        "geom": "0.786 ± 0.029",
        "gmm": "0.778 ± 0.019",
        "karma": "0.907 ± 0.016",
        "knn": "0.724 ± 0.012",
        "mean": "0.894 ± 0.020",
        "mice": "0.748 ± 0.011",
        "missforest": "0.787 ± 0.009",
        "zero": "0.898 ± 0.019",
    },
    "breast_cancer_wisconsin": {
        "genrbf": "0.954 ± 0.005",
        "geom": "0.937 ± 0.006",
        "gmm": "0.832 ± 0.012",
        "karma": "0.952 ± 0.004",
        "knn": "0.829 ± 0.003",
        "mean": "0.949 ± 0.005",
        "mice": "0.814 ± 0.002",
        "missforest": "0.833 ± 0.004",
        "zero": "0.948 ± 0.005",
    },
    "climate_model_crashes": {
        "genrbf": "0.917 ± 0.006",
        "geom": "0.915 ± 0.000",
        "gmm": "0.909 ± 0.003",
        "karma": "0.921 ± 0.006",
        "knn": "0.907 ± 0.002",
        "mean": "0.919 ± 0.008",
        "mice": "0.906 ± 0.002",
        "missforest": "0.905 ± 0.003",
        "zero": "0.916 ± 0.005",
    },
    "ionosphere": {
        "genrbf": "0.834 ± 0.016",
        "geom": "0.907 ± 0.012",
        "gmm": "0.773 ± 0.009",
        "karma": "0.887 ± 0.011",
        "knn": "0.769 ± 0.004",
        "mean": "0.844 ± 0.032",
        "mice": "0.759 ± 0.002",
        "missforest": "0.770 ± 0.004",
        "zero": "0.803 ± 0.020",
    },
    "liver_disorders_bupa": {
        "genrbf": "0.636 ± 0.023",
        "geom": "0.578 ± 0.021",
        "gmm": "0.588 ± 0.012",
        "karma": "0.606 ± 0.019",
        "knn": "0.580 ± 0.007",
        "mean": "0.608 ± 0.031",
        "mice": "0.580 ± 0.004",
        "missforest": "0.583 ± 0.005",
        "zero": "0.594 ± 0.028",
    },
    "pima_indians_diabetes": {
        "genrbf": "0.746 ± 0.013",
        "geom": "0.710 ± 0.019",
        "gmm": "0.680 ± 0.008",
        "karma": "0.744 ± 0.012",
        "knn": "0.648 ± 0.002",
        "mean": "0.745 ± 0.012",
        "mice": "0.651 ± 0.003",
        "missforest": "0.651 ± 0.003",
        "zero": "0.743 ± 0.012",
    },
    "statlog_heart": {
        "genrbf": "0.787 ± 0.017",
        "geom": "0.789 ± 0.014",
        "gmm": "0.656 ± 0.015",
        "karma": "0.797 ± 0.020",
        "knn": "0.568 ± 0.007",
        "mean": "0.791 ± 0.014",
        "mice": "0.566 ± 0.007",
        "missforest": "0.573 ± 0.007",
        "zero": "0.728 ± 0.013",
    },
}


def config(quick: bool) -> dict:
    names = ["statlog_heart", "liver_disorders_bupa"] if quick else DATASETS
    datasets = {k: complete_rows(v) for k, v in load(names).items()}
    common = dict(datasets=datasets, metric="accuracy", mechanisms=["mar"], rates=[0.3])
    intro = (
        "Paper: Śmieja et al. (2019), Table 2. Of the paper's peers, geom is "
        "implemented (GeomSVC; the form is described in its docstring); with "
        "this grid a cell is 361 fits of 5 QPs each, 1-2 min on one core "
        "for australian; karma is not implemented (see vignettes/README.md). "
        "breast_cancer_wisconsin: the 16 rows with a naturally missing value are "
        "dropped before the simulation (683 rows). Beside the paper's methods: "
        "mean and k-NN imputation with missingness indicators "
        "(mean_indicator, knn_indicator) and histogram gradient boosting with "
        "native missing values (hgb, searched over learning_rate in "
        "{0.03, 0.1, 0.3} x max_leaf_nodes in {15, 31, 63} instead of "
        "C x gamma). geom's cells were rerun after a fix of its scalings (a "
        "row valid only on features constant over the support vectors now "
        "keeps s = 1; see vignette 8) on five datasets (ionosphere, "
        "statlog_heart, liver_disorders_bupa, breast_cancer_wisconsin, "
        "climate_model_crashes): 0 of 250 cells changed; its cells on "
        "pima_indians_diabetes, banknote_authentication and australian were "
        "not rerun." + PLAIN_EM_NOTE
    )
    if quick:
        return dict(
            common,
            methods=["zero", "mean", "mean_indicator", "hgb", "genrbf"],
            n_draws=1,
            outer_folds=2,
            inner_folds=2,
            C_grid=[1.0, 8.0],
            gamma_grid=[2.0**-5, 2.0**-3],
            intro=intro,
        )
    return dict(
        common,
        methods=METHODS,
        n_draws=10,
        outer_folds=5,
        inner_folds=5,
        C_grid=PAPER_C_GRID,
        gamma_grid=PAPER_GAMMA_GRID,
        intro=intro,
    )


DIFFERENCES = """## What differs from the paper

- ``genrbf`` uses the Euclidean scalar product (``metric="euclidean"``, the
  package default); the paper's Appendix D and the authors' code use the
  Mahalanobis one, run as ``genrbf_mahalanobis``.
- genRBF's Gaussian is fitted by our EM (``gaussian_em``), the paper used R
  ``norm``; the paper's MICE is run as ``iterative`` (scikit-learn's
  IterativeImputer with one posterior draw; this baseline was called ``mice``
  before), the paper used R ``mice``; missForest uses 30 trees, sqrt(p)
  features per split and 5 iterations.
- The MAR draws, fold splits and tie-breaking of the grid search are ours, so
  single numbers cannot match; compare means within the standard deviations.
- Ionosphere: every method here scores above the paper, by 0.08-0.11 for
  genRBF, mean and zero imputation, 0.14-0.16 for the imputation baselines
  and 0.03 for geom, which points at a difference in the data or its
  preprocessing rather than in a method (the paper does not say how the
  constant column a02 was handled).
- The paper's imputation baselines do not reproduce. Its k-NN, MICE and
  missForest accuracies are 0.07-0.27 below its own mean imputation on six of
  the eight datasets (all but climate_model_crashes and liver_disorders_bupa),
  and on australian (0.56-0.57) and statlog_heart (0.57) they sit at the
  majority-class rate (0.555 and 0.556). Here, over 10 draws, k-NN and
  missForest are within 0.02 of mean imputation on every dataset, and
  iterative imputation and the GMM draws are at most 0.06 below it
  (banknote_authentication). The paper does not say how the imputed data were
  scaled or tuned, so the cause is not known.
"""


OURS = ("genrbf", "genrbf_mahalanobis", "expected_rbf")
IMPUTATION = IMPUTATION_PIPELINES

COMPARISON = """\
Our kernels against what a user would otherwise pick, on the tables above
(accuracy first). Under simulated MAR 30% the best of our three kernels and
the best of the eight imputation pipelines, picked per dataset after the
fact (which favours the larger group), are level: within 0.005 of each other
on every dataset in accuracy and balanced accuracy, ours ahead on
climate_model_crashes (+0.004, 8 of 10 draws), liver_disorders_bupa (+0.004)
and ionosphere (+0.001), behind by 0.001 on banknote_authentication (mean
imputation with indicators) and statlog_heart, level elsewhere. Against
histogram gradient boosting the kernels are ahead in accuracy on seven of
the eight sets, by 0.001 (banknote_authentication, where hgb is level with
the best SVMs) to 0.040 (statlog_heart, 9 of 10 draws; also
pima_indians_diabetes +0.013 and ionosphere +0.011); hgb wins on
liver_disorders_bupa (0.658 vs 0.643, and 0.643 vs 0.610 in balanced
accuracy, 8 of 10 draws), where it is ahead of every other method, and in
balanced accuracy also on climate_model_crashes (0.603 vs 0.589; every
method is near the 0.915 majority-class accuracy there) and
pima_indians_diabetes (0.690 vs 0.684). Missingness indicators help on
banknote_authentication (+0.025 for mean, +0.043 for k-NN imputation) and
liver_disorders_bupa (+0.013 for mean); elsewhere they change accuracy by at
most 0.004. Over all 13 methods Friedman's test rejects equal ranks (p =
2.8e-7, critical difference 6.45): genrbf ranks first (3.12), expected_rbf
and missForest next (4.06), hgb 7.25, mean_indicator 6.19, knn_indicator
7.38; only zero, GMM and iterative imputation are beyond the critical
difference from the best. No pair differs after Holm's correction over 78
pairs (the smallest adjusted p is 0.61; with n = 8 the smallest two-sided
Wilcoxon p-value is 1/128 before it). hgb searches 9 settings against the
SVMs' 72 (C, gamma) points and picked the smallest max_leaf_nodes (15) in
308 of 400 cells, the corner (learning_rate 0.03, 15 leaves) in 138, so it
may be under-tuned on these small sets (270-1372 rows). On simulated MAR
data the kernels are as good as the best imputation pipeline, not better,
and mostly ahead of boosting.
"""


def _labels(dataset: str):  # type: ignore[no-untyped-def]
    # The labels of the rows simulated on (breast_cancer_wisconsin: the 683
    # complete rows).
    return complete_rows(load([dataset])[dataset]).y


def _versus_section(results) -> str:  # type: ignore[no-untyped-def]
    lines = [
        "## Our best kernel vs the best imputation pipeline vs hgb",
        "",
        "Per dataset, the best by mean score of our kernels (genrbf, "
        "genrbf_mahalanobis, expected_rbf) and of the imputation pipelines "
        "(zero, mean, knn, iterative, missforest, gmm, mean_indicator, "
        "knn_indicator), and hgb; mean ± std over draws; the differences are "
        "ours minus the other, with the draws (of those all three finished) "
        "where ours scores higher / the same / lower. The majority class "
        "column is the score of always predicting the most frequent class. "
        "The peer geom is in the tables above and below.",
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
        "",
        "",
    ]
    return "\n".join(lines)


def report(results, extra) -> str:  # type: ignore[no-untyped-def]
    # The paper has one genRBF column; it stands beside both metrics here.
    paper = {
        name: {**row, "genrbf_mahalanobis": row["genrbf"]}
        for name, row in PAPER_TABLE_2.items()
    }
    return (
        _versus_section(results)
        + DIFFERENCES
        + "\n## Beside the paper's Table 2 (accuracy)\n\n"
        + "The paper's genRBF column is shown beside both of ours.\n\n"
        + paper_beside(
            extra["summary"],
            paper,
            ["genrbf", "genrbf_mahalanobis", "mean", "zero"],
        )
        + "\n\n"
        + paper_beside(
            extra["summary"],
            PAPER_TABLE_2,
            ["knn", ("iterative", "mice"), "missforest", "gmm"],
        )
        + "\n\n"
        + paper_beside(extra["summary"], PAPER_TABLE_2, ["geom", "karma"])
    )


if __name__ == "__main__":
    sys.exit(
        main(
            "02_classification_mar", "Classification, MAR 30% (Table 2)", config, report
        )
    )

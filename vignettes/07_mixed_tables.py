"""Vignette 7: mixed tables (numeric and nominal columns) with real missing values.

Every dataset of ../shared/data with nominal columns and missing values:
hepatitis, horse_colic (post-hoc 'outcome' dropped), cleveland_heart_disease
(target num > 0), mammographic_masses (non-predictive 'bi_rads' dropped) and
house_votes_84 (all columns nominal); australian has nominal columns but no
missing value (a control: the missingness factor is then constant). The
nominal columns are those of the dataset catalogue
(``missingkernels.datasets``, with the reason per column).

    python vignettes/07_mixed_tables.py --quick
    python vignettes/07_mixed_tables.py --full
"""

from __future__ import annotations

import dataclasses
import sys

from _common import load, main, mean_std, versus, versus_table

from missingkernels.datasets import load_dataset
from missingkernels.densities import GaussianEMDensity, LatentClassDensity
from missingkernels.experiments import (
    PAPER_C_GRID,
    PAPER_GAMMA_GRID,
    format_table,
    resolve_method,
)

DATASETS = [
    "hepatitis",
    "horse_colic",
    "cleveland_heart_disease",
    "mammographic_masses",
    "house_votes_84",
    "australian",
]
#: The nominal block's weight w in (1 - w) + w * matching, searched by the
#: inner CV with C and gamma.
NOMINAL_WEIGHTS = (0.25, 0.5, 1.0)
#: mixed_rbf_prod (nominal_combination="product"): each mismatch multiplies
#: the kernel by 1 - w, so w = 1 would zero it; searched over {0.1, 0.25, 0.5}
#: (one mismatch: x 0.9, 0.75, 0.5). Added after the first full run showed
#: the additive block's weakness (see the report).
PRODUCT_WEIGHTS = (0.1, 0.25, 0.5)
#: The weight of the factor on the missingness masks (mixed_rbf_miss).
MISSINGNESS_WEIGHT = 0.5
#: EM iterations of genRBF's Gaussian density over one-hot codes: the 0/1
#: columns of a nominal column sum to 1, the covariance is singular and the
#: EM runs to any max_iter (500, its default, costs about 45 s per fit on
#: horse_colic); 100 keeps the run affordable and is said in the report.
GENRBF_ONEHOT_MAX_ITER = 100


def _mixed(name: str, C_grid, gamma_grid, weights=NOMINAL_WEIGHTS, **params):  # type: ignore[no-untyped-def]
    spec = resolve_method(
        "mixed_rbf", C_grid=C_grid, gamma_grid=gamma_grid, kernel_params=params
    )
    grid = {**spec.grid, "nominal_weight": list(weights)}
    return dataclasses.replace(spec, name=name, grid=grid)


def methods(quick: bool, C_grid, gamma_grid) -> list:  # type: ignore[no-untyped-def]
    ours = [
        _mixed("mixed_rbf", C_grid, gamma_grid),
        _mixed(
            "mixed_rbf_miss",
            C_grid,
            gamma_grid,
            missingness_weight=MISSINGNESS_WEIGHT,
        ),
    ]
    if quick:
        return [*ours, "mean", "mean_indicator", "knn", "hgb"]
    lc3 = _mixed("mixed_rbf_lc3", C_grid, gamma_grid, density=LatentClassDensity(3))
    bic = _mixed(
        "mixed_rbf_bic",
        C_grid,
        gamma_grid,
        density=LatentClassDensity(n_components="bic"),
    )
    prod = _mixed(
        "mixed_rbf_prod",
        C_grid,
        gamma_grid,
        weights=PRODUCT_WEIGHTS,
        nominal_combination="product",
    )
    genrbf = resolve_method(
        "genrbf",
        C_grid=C_grid,
        gamma_grid=gamma_grid,
        kernel_params={"density": GaussianEMDensity(max_iter=GENRBF_ONEHOT_MAX_ITER)},
    )
    return [
        *ours,
        lc3,
        bic,
        prod,
        dataclasses.replace(genrbf, name="genrbf_onehot"),
        "mean",
        "mean_indicator",
        "knn",
        "knn_indicator",
        "iterative",
        "hgb",
    ]


def config(quick: bool) -> dict:
    C_grid = [1.0, 8.0] if quick else PAPER_C_GRID
    gamma_grid = [2.0**-5, 2.0**-3] if quick else PAPER_GAMMA_GRID
    return dict(
        datasets=load(
            ["hepatitis", "cleveland_heart_disease"] if quick else DATASETS,
            nominal=True,
        ),
        metric="accuracy",
        methods=methods(quick, C_grid, gamma_grid),
        mechanisms=["none"],
        n_draws=1 if quick else 3,
        outer_folds=2 if quick else 5,
        inner_folds=2 if quick else 3,
        C_grid=C_grid,
        gamma_grid=gamma_grid,
        intro=(
            "The data's own missing values (mechanism none); a draw is a new "
            "split. The nominal columns (category codes) are those of the "
            "dataset catalogue; they are never standardised, the numeric "
            "columns are standardised on the training rows of each fit. "
            "Ours: mixed_rbf, the normalised expected RBF (numeric columns) x "
            "((1 - w) + w matching (nominal columns)) over a one-class "
            "latent-class density (Gaussian x independent categoricals), "
            "searched over C x gamma (the genRBF paper's grids) x w in "
            "{0.25, 0.5, 1}; mixed_rbf_miss the same with the factor on the "
            f"missingness masks (missingness_weight {MISSINGNESS_WEIGHT}); "
            "mixed_rbf_lc3 the same as mixed_rbf with a 3-class latent-class "
            "density; mixed_rbf_bic the same with the number of latent "
            "classes chosen by BIC (1 to 6) on each training set; "
            "mixed_rbf_prod the product form of the nominal block, "
            "prod_v ((1 - w) + w 1[match]), w in {0.1, 0.25, 0.5} (added after "
            "the first full run). genrbf_onehot: genRBF (Gaussian EM density) over the "
            "standardised numeric columns and the one-hot codes of the "
            "nominal ones (a missing nominal entry is missing in all of its "
            f"0/1 columns), EM capped at {GENRBF_ONEHOT_MAX_ITER} iterations "
            "(the 0/1 columns of a column sum to 1, so the maximum-likelihood "
            "covariance is singular and its EM did not converge at 500 either; "
            "the default prior keeps the covariance invertible). The imputation "
            "pipelines one-hot code the nominal columns: mean (mean "
            "imputation of the numeric columns, mode imputation of the "
            "nominal ones), mean_indicator (the same with one missingness "
            "indicator per column), knn and iterative (k-NN and chained-"
            "equation imputation on the standardised numeric + one-hot "
            "table), knn_indicator; then an RBF SVC on the same C x gamma "
            "grid. hgb: HistGradientBoostingClassifier with native missing "
            "values and the nominal columns as categorical_features, "
            "searched over learning_rate {0.03, 0.1, 0.3} x max_leaf_nodes "
            "{15, 31, 63}. Protocol: 3 repetitions of 5-fold outer CV with a "
            "3-fold inner grid search (vignette 6 uses 5 x 5 x 5; reduced to "
            "fit a shared 2-core machine)."
        ),
    )


OURS = ("mixed_rbf",)
IMPUTATION = ("mean", "mean_indicator", "knn", "knn_indicator", "iterative")

COMPARISON = """\
What the full run shows (accuracy first; 3 draws, so differences below about
0.005 are noise: mixed_rbf_miss and mixed_rbf are the same kernel on
australian, which has no missing value, and still differ by 0.005 there,
only because each method draws its own inner-CV splits). Our methods were
rerun on 2026-11-27 with the densities' default prior (prior_rows="auto");
the imputation pipelines and hgb do not use a density and were not rerun.
Against the maximum-likelihood densities of the first run, the prior changed
12-29 of the 90 cells per method and the mean accuracy per table by at most
0.012 (genrbf_onehot on horse_colic -0.012, mixed_rbf_lc3 on hepatitis
-0.011, mixed_rbf on hepatitis -0.009; all others within 0.006).

mixed_rbf (one latent class) is not ahead of the best imputation pipeline
on most tables. Against the best of the five pipelines picked per dataset
after the fact (which favours them) it is ahead only on mammographic_masses
(+0.003, 2 of 3 draws) and behind on the other five: horse_colic -0.003 and
australian -0.004 (noise level), house_votes_84 -0.007, cleveland -0.011 and
hepatitis -0.039 (k-NN imputation with indicators, 0.873). Against hgb it
wins on cleveland (+0.023) and hepatitis (+0.049, where hgb is below the
majority-class rate), all draws, and on mammographic_masses (+0.003); it
loses on australian (-0.010) and on horse_colic, the most incomplete table
(-0.013), all draws; house_votes_84 is a tie (-0.001).

The number of latent classes chosen by BIC (mixed_rbf_bic, 1 to 6 classes
on each training set) does better than one class on four tables: cleveland
+0.013 (all draws; now ahead of the best imputation pipeline, +0.002, and of
hgb, +0.036), hepatitis +0.019 (2 of 3 draws; balanced accuracy +0.042),
horse_colic +0.003 and house_votes_84 +0.002; it is level on australian and
loses on mammographic_masses (-0.009, all draws; BIC takes the top of the
range, 6 classes, on its 4 columns). Mean over the six tables: +0.005
accuracy, +0.008 balanced accuracy; three fixed classes (mixed_rbf_lc3) do
as well (+0.005, +0.012). It costs 2.1 times mixed_rbf's cell time (29.2
against 13.8 min summed over cells; 5.8 times on horse_colic). Nothing is
significant: Friedman p = 0.97 over the six tables, every method within the
critical difference; the mean ranks in accuracy are knn_indicator 5.00,
mixed_rbf_lc3 5.50, mixed_rbf_bic 5.67, hgb 6.08, ..., mixed_rbf 8.25 (the
worst). "bic" therefore stays an option of LatentClassDensity, not its
default: its gain over one class is of the size of the draw-to-draw spread
on five tables, it loses on one in every draw, and it makes every fit of a
mixed table several times slower; users with a few hundred rows and nominal
columns that depend on each other should try it (one argument:
``density_params={"n_components": "bic"}``).

genRBF over one-hot codes (EM capped at 100 iterations) is not worse than
mixed_rbf: it is ahead on cleveland, hepatitis, house_votes_84 and
horse_colic and behind on mammographic_masses (the table above). The
one-class latent-class density makes the nominal columns independent of
each other and of the numeric ones, so a missing entry is averaged over its
column's marginal, while the Gaussian over one-hot codes conditions it on
the observed entries (linearly); more latent classes restore some of that
dependence, which is where the gains of mixed_rbf_lc3 and mixed_rbf_bic
come from.

The nominal block of mixed_rbf, (1 - w) + w * (share of matching columns),
is additive over the columns and never below 1 - w, whereas an RBF over
one-hot codes multiplies exp(-2 gamma) per mismatch. mixed_rbf_prod, the
product form prod_v ((1 - w) + w 1[match]) (which is the RBF over one-hot
codes when w = 1 - exp(-2 gamma)), was added after the first full run
showed this, and run on the same splits: it is within noise of mixed_rbf
(the tables above). The form of the nominal block is not what holds
mixed_rbf back on these tables; the independence of the nominal columns
under one latent class is the better candidate.

The missingness factor (missingness_weight 0.5) does not measurably help:
+0.015 on hepatitis (2 of 3 draws), within +-0.005 on the others and -0.007
on mammographic_masses, against +0.005 on the australian control with an
identical kernel. We keep it off by default.
"""


def _factor(results, metric: str) -> list[str]:  # type: ignore[no-untyped-def]
    """Per dataset: mixed_rbf with and without the missingness factor (and
    with three latent classes, where it ran)."""
    ok = results[(results["metric"] == metric) & (results["error"] == "")]
    per_draw = ok.groupby(["dataset", "method", "draw"])["score"].mean()
    stats = per_draw.groupby(["dataset", "method"]).agg(["mean", "std"])
    lines = [
        "| dataset | missing | mixed_rbf | mixed_rbf_miss | miss - plain "
        "| mixed_rbf_lc3 | lc3 - plain | mixed_rbf_bic | bic - plain |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for dataset in sorted(ok["dataset"].unique()):
        means = stats.loc[dataset]
        if "mixed_rbf" not in means.index:
            continue
        rate = float(ok[ok["dataset"] == dataset]["missing_rate"].iloc[0])
        draws = per_draw.loc[dataset].unstack("method")
        cells = []
        for other in ("mixed_rbf_miss", "mixed_rbf_lc3", "mixed_rbf_bic"):
            if other in means.index:
                both = draws[["mixed_rbf", other]].dropna()
                cells += [
                    mean_std(means, other),
                    versus(means, both, other, "mixed_rbf"),
                ]
            else:
                cells += ["not run", "-"]
        lines.append(
            f"| {dataset} | {100 * rate:.1f}% | {mean_std(means, 'mixed_rbf')} | "
            + " | ".join(cells)
            + " |"
        )
    return lines


def _labels(dataset: str):  # type: ignore[no-untyped-def]
    return load_dataset(dataset).y


def report(results, extra) -> str:  # type: ignore[no-untyped-def]
    lines = [
        "## mixed_rbf vs the best imputation pipeline vs hgb",
        "",
        "Per dataset, mixed_rbf, the best by mean score of the imputation "
        "pipelines (mean, mean_indicator, knn, knn_indicator, iterative; "
        "picked after the fact, which favours them) and hgb; mean ± std over "
        "draws; the differences are mixed_rbf minus the other, with the "
        "draws (of those all three finished) where mixed_rbf scores higher / "
        "the same / lower. The majority class column is the score of always "
        "predicting the most frequent class.",
        "",
        "### accuracy",
        "",
        *versus_table(
            results, "accuracy", OURS, IMPUTATION, _labels, single="mixed_rbf"
        ),
        "",
        "### balanced accuracy (the same models, selected on accuracy; the "
        "best imputation pipeline picked again by balanced accuracy)",
        "",
        *versus_table(
            results, "balanced_accuracy", OURS, IMPUTATION, _labels, single="mixed_rbf"
        ),
        "",
        "## The number of latent classes chosen by BIC",
        "",
        'mixed_rbf_bic (LatentClassDensity(n_components="bic"), 1 to 6 '
        "classes chosen on each training set) in the same comparison.",
        "",
        "### accuracy",
        "",
        *versus_table(
            results,
            "accuracy",
            ("mixed_rbf_bic",),
            IMPUTATION,
            _labels,
            single="mixed_rbf_bic",
        ),
        "",
        "### balanced accuracy",
        "",
        *versus_table(
            results,
            "balanced_accuracy",
            ("mixed_rbf_bic",),
            IMPUTATION,
            _labels,
            single="mixed_rbf_bic",
        ),
        "",
        "## The missingness factor and more latent classes",
        "",
        "mixed_rbf_miss (factor on the missingness masks), mixed_rbf_lc3 "
        "(three latent classes) and mixed_rbf_bic (classes chosen by BIC) "
        "against mixed_rbf; differences are the "
        "variant minus mixed_rbf, with its draws higher / same / lower. On "
        "australian (no missing value) the factor is 1 for every pair, so "
        "mixed_rbf_miss equals mixed_rbf there.",
        "",
        "### accuracy",
        "",
        *_factor(results, "accuracy"),
        "",
        "### balanced accuracy",
        "",
        *_factor(results, "balanced_accuracy"),
        "",
        COMPARISON,
        "## balanced_accuracy: mean ± std over draws (same models)",
        "",
        format_table(results, "balanced_accuracy"),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(
        main(
            "07_mixed_tables",
            "Mixed tables with real missing values",
            config,
            report,
        )
    )

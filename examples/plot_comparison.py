"""
A small comparison and its critical-difference diagram
======================================================

:func:`~missingkernels.experiments.run_comparison` runs the papers'
protocol: missingness draws, outer folds, an inner grid search, refits;
imputation baselines against expected-kernel SVMs. Here a tiny version (one
draw, three outer folds of two datasets, two MAR rates, a 2 x 2 grid) so
that it runs in seconds; ``missingkernels compare`` and the vignettes run
the full protocol. The Friedman test ranks the methods over the blocks
(dataset x rate x fold), and the critical-difference diagram joins methods
whose mean ranks are not significantly different (Nemenyi).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer, load_wine

from missingkernels.experiments import (
    ComparisonData,
    block_scores,
    format_table,
    friedman_nemenyi,
    plot_critical_difference,
    run_comparison,
)

cancer = load_breast_cancer()
wine = load_wine()
rng = np.random.default_rng(0)
cancer_rows = rng.choice(len(cancer.target), 180, replace=False)
datasets = {
    "cancer": ComparisonData(
        cancer.data[cancer_rows, :8], cancer.target[cancer_rows], "classification"
    ),
    "wine": ComparisonData(wine.data, (wine.target == 0).astype(int), "classification"),
}
results = run_comparison(
    datasets,
    ["zero", "mean", "knn", "genrbf"],
    mechanisms=["mar"],
    rates=[0.2, 0.4],
    n_draws=1,
    outer_folds=3,
    inner_folds=2,
    C_grid=[1.0, 8.0],
    gamma_grid=[2.0**-5, 2.0**-3],
    random_state=0,
)
print(format_table(results, "accuracy"))

# %%
# Blocks: dataset x rate x outer fold.
scores = block_scores(results, "accuracy", blocks=["dataset", "rate", "fold"])
test = friedman_nemenyi(scores)
print(f"Friedman p = {test.pvalue:.3g} over {test.n_blocks} blocks")
plot_critical_difference(test, title="accuracy, MAR 20% and 40%")
plt.show()

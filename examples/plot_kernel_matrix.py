"""
The kernel matrix as a picture
==============================

Three Gram matrices of the same 60 rows, sorted by class: the RBF kernel on
the complete data, genRBF after removing 40% of the entries, and the RBF on
the same rows with the holes filled by the column means. Mean imputation
pulls the incomplete rows together (bright off-diagonal blocks); genRBF keeps
the structure of the complete data more closely, because it averages over
what the missing entries could be.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.metrics.pairwise import rbf_kernel

from missingkernels import get_kernel

X, y = load_breast_cancer(return_X_y=True)
rng = np.random.default_rng(1)
rows = np.concatenate(
    [rng.choice(np.flatnonzero(y == c), 30, replace=False) for c in (0, 1)]
)
X_all = (X - X.mean(0)) / X.std(0)  # illustration only: scaled on all rows
X_full = X_all[rows, :6]

X_miss = X_full.copy()
X_miss[rng.random(X_miss.shape) < 0.4] = np.nan
X_mean = np.where(np.isnan(X_miss), np.nanmean(X_miss, axis=0), X_miss)

gamma = 0.2
K_full = rbf_kernel(X_full, gamma=gamma)
K_gen = get_kernel("genrbf", gamma=gamma).fit(X_miss)(X_miss)  # density: these rows
K_mean = rbf_kernel(X_mean, gamma=gamma)

# %%
fig, axes = plt.subplots(1, 3, figsize=(11, 3.8), sharey=True, layout="constrained")
for ax, K, title in zip(
    axes,
    (K_full, K_gen, K_mean),
    ("RBF, complete data", "genRBF, 40% missing", "RBF after mean imputation"),
    strict=True,
):
    image = ax.imshow(K, vmin=0, vmax=1, cmap="magma")
    ax.set_title(title)
    ax.set_xticks([15, 45], ["malignant", "benign"])
    ax.set_yticks([15, 45], ["malignant", "benign"])
    ax.tick_params(labelleft=ax is axes[0])  # the class names once, at the left
fig.colorbar(image, ax=axes, shrink=0.8)
plt.show()

# %%
# How far is each matrix from the complete-data kernel?
for name, K in (("genRBF", K_gen), ("mean imputation", K_mean)):
    print(f"{name:16s} mean |K - K_complete| = {np.abs(K - K_full).mean():.3f}")

"""
Grid search over C and gamma
============================

Tune the SVM as usual with :class:`~sklearn.model_selection.GridSearchCV`
over the pipeline's parameters. Every candidate refits the scaling and the
density on the training rows of its fold.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from missingkernels import MissingKernelSVC
from missingkernels.experiments import simulate_missing

X, y = load_breast_cancer(return_X_y=True)
X, y = X[:300, :10], y[:300]  # small, for a quick example
X = simulate_missing(X, "mar", 0.3, random_state=0)  # MAR, genRBF paper eq. 26

pipe = make_pipeline(StandardScaler(), MissingKernelSVC(kernel="genrbf"))
C_grid = [0.5, 2.0, 8.0, 32.0]
gamma_grid = [2.0**-7, 2.0**-5, 2.0**-3, 2.0**-1]
search = GridSearchCV(
    pipe,
    {"missingkernelsvc__C": C_grid, "missingkernelsvc__gamma": gamma_grid},
    cv=3,
).fit(X, y)
print("best:", search.best_params_, f"CV accuracy {search.best_score_:.3f}")

# %%
# The mean CV accuracy of every candidate.
scores = search.cv_results_["mean_test_score"].reshape(len(C_grid), len(gamma_grid))
fig, ax = plt.subplots(figsize=(5.5, 4), layout="constrained")
image = ax.imshow(scores, cmap="viridis", origin="lower")
labels = [f"$2^{{{int(np.log2(g))}}}$" for g in gamma_grid]
ax.set_xticks(range(len(gamma_grid)), labels)
ax.set_yticks(range(len(C_grid)), [str(c) for c in C_grid])
ax.set_xlabel("gamma")
ax.set_ylabel("C")
fig.colorbar(image, label="mean CV accuracy")
ax.set_title("genRBF SVM, 30% MAR")
plt.show()

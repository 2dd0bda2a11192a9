"""
Fit and predict in a pipeline
=============================

:class:`~missingkernels.MissingKernelSVC` takes rows with ``NaN`` as they
are: its kernel averages the RBF over the missing entries under a Gaussian
fitted on the training rows. In a :class:`~sklearn.pipeline.Pipeline` after a
:class:`~sklearn.preprocessing.StandardScaler`, the scaling and the density
are both learnt from the training rows only.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.metrics import ConfusionMatrixDisplay
from sklearn.model_selection import cross_val_score, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from missingkernels import MissingKernelSVC

# %%
# Data with missing values: remove 20% of the entries at random.
data = load_breast_cancer()
X, y = data.data, data.target
rng = np.random.default_rng(0)
X[rng.random(X.shape) < 0.2] = np.nan
print(
    f"{np.isnan(X).mean():.0%} of the entries missing, "
    f"{np.isnan(X).any(axis=1).mean():.0%} of the rows incomplete"
)

X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.3, stratify=y, random_state=0
)

# %%
# Fit and predict: no imputation anywhere.
model = make_pipeline(StandardScaler(), MissingKernelSVC(kernel="genrbf", C=4.0))
model.fit(X_train, y_train)
print(f"test accuracy {model.score(X_test, y_test):.3f}")
print("density fitted on the training rows:", type(model[-1].density_).__name__)

# %%
# Cross-validation refits the scaling and the density in every fold.
scores = cross_val_score(model, X, y, cv=5)
print(f"5-fold accuracy {scores.mean():.3f} ± {scores.std():.3f}")

# %%
# The test rows' confusion matrix, with the classes' names.
ConfusionMatrixDisplay.from_estimator(
    model, X_test, y_test, display_labels=data.target_names
)
plt.title("genRBF SVM, 20% of the entries missing")
plt.show()

"""The estimators on real datasets (../shared/data), against mean imputation."""

from __future__ import annotations

import numpy as np
import pytest
from _helpers import load_shared_csv
from sklearn.impute import SimpleImputer
from sklearn.model_selection import (
    GridSearchCV,
    KFold,
    StratifiedKFold,
    cross_val_score,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, SVR

from missingkernels.estimators import MissingKernelSVC, MissingKernelSVR
from missingkernels.experiments import simulate_missing

pytestmark = pytest.mark.slow

GRID_C = [0.5, 2.0, 8.0]
GRID_GAMMA = [0.03, 0.1, 0.3]


def test_pima_real_missing_grid_search_balanced_accuracy(shared_data_dir, capsys):
    X, y = load_shared_csv(shared_data_dir, "pima_indians_diabetes_na")
    assert np.isnan(X).any()
    outer = StratifiedKFold(5, shuffle=True, random_state=0)
    inner = StratifiedKFold(3, shuffle=True, random_state=1)
    ours = GridSearchCV(
        make_pipeline(StandardScaler(), MissingKernelSVC()),
        {"missingkernelsvc__C": GRID_C, "missingkernelsvc__gamma": GRID_GAMMA},
        cv=inner,
        scoring="balanced_accuracy",
    )
    mean = GridSearchCV(
        make_pipeline(StandardScaler(), SimpleImputer(), SVC()),
        {"svc__C": GRID_C, "svc__gamma": GRID_GAMMA},
        cv=inner,
        scoring="balanced_accuracy",
    )
    s_ours = cross_val_score(ours, X, y, cv=outer, scoring="balanced_accuracy")
    s_mean = cross_val_score(mean, X, y, cv=outer, scoring="balanced_accuracy")
    with capsys.disabled():
        print(
            f"\npima_indians_diabetes_na, 5-fold balanced accuracy: genRBF SVC "
            f"{s_ours.mean():.3f} +- {s_ours.std():.3f}, mean imputation + RBF SVC "
            f"{s_mean.mean():.3f} +- {s_mean.std():.3f}"
        )
    # Majority-class balanced accuracy is 0.5; both models learn the task.
    assert s_ours.mean() > 0.65 and s_mean.mean() > 0.65


def test_friedman_30pct_mcar_svr_beats_mean_imputation(shared_data_dir, capsys):
    X, y = load_shared_csv(shared_data_dir, "friedman")
    X = StandardScaler().fit_transform(X)
    Xm = simulate_missing(X, "mcar", 0.3, random_state=0)
    cv = KFold(5, shuffle=True, random_state=0)
    inner = KFold(3, shuffle=True, random_state=1)
    grid = {"C": [1.0, 10.0, 100.0], "gamma": GRID_GAMMA, "epsilon": [0.5]}
    ours = cross_val_score(
        # epsilon in the units of y, as the baseline's SVR.
        GridSearchCV(MissingKernelSVR(standardize=False), grid, cv=inner),
        Xm,
        y,
        cv=cv,
        scoring="r2",
    )
    mean = cross_val_score(
        GridSearchCV(
            make_pipeline(SimpleImputer(), SVR()),
            {f"svr__{k}": v for k, v in grid.items()},
            cv=inner,
        ),
        Xm,
        y,
        cv=cv,
        scoring="r2",
    )
    with capsys.disabled():
        print(
            f"\nfriedman 30% MCAR, 5-fold R^2: genRBF SVR {ours.mean():.3f}, "
            f"mean imputation + SVR {mean.mean():.3f}"
        )
    assert ours.mean() > mean.mean()

"""The fit cache: densities and training Grams reused only for identical fits."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, StratifiedKFold

import missingkernels
from missingkernels import MissingKernelSVC, MissingKernelSVR, get_kernel
from missingkernels._fit_cache import (
    clear_fit_cache,
    fit_cache_info,
    fit_density,
    rows_digest,
)
from missingkernels.densities import GaussianEMDensity, GaussianMixtureDensity


class RecordingDensity(GaussianEMDensity):
    """A Gaussian EM density that records every real fit and its rows."""

    fits: list = []  # noqa: RUF012 - shared on purpose: counts fits

    def fit(self, X, y=None):  # type: ignore[no-untyped-def]
        super().fit(X, y)
        self.fitted_on_ = rows_digest(np.asarray(X))
        RecordingDensity.fits.append(self.fitted_on_)
        return self


@pytest.fixture(autouse=True)
def _fresh_cache():
    clear_fit_cache()
    RecordingDensity.fits.clear()
    yield
    missingkernels.set_config(fit_cache_memory=None)
    clear_fit_cache()


def _data(n=90, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    X[rng.random(X.shape) < 0.25] = np.nan
    return X, y


def _checking_scorer(seen, X_all):
    """Accuracy, after checking that the model's density was fitted on the
    model's own training rows (never on another fold's): those of ``X_all``
    (unscaled) that are not the rows it scores, in their order."""
    index = {row.tobytes(): i for i, row in enumerate(X_all)}

    def score(est, X, y):  # type: ignore[no-untyped-def]
        scored = {index[row.tobytes()] for row in X}
        train = [i for i in range(len(X_all)) if i not in scored]
        assert est.density_.fitted_on_ == rows_digest(X_all[train])
        seen.append(est.density_.fitted_on_)
        return float(np.mean(est.predict(X) == y))

    return score


def test_grid_search_fits_one_density_per_fold_and_never_shares_across_folds():
    X, y = _data()
    grid = {"C": [0.5, 4.0, 32.0], "gamma": [0.05, 0.2, 0.8]}
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    seen: list = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gs = GridSearchCV(
            MissingKernelSVC(density=RecordingDensity(), standardize=False),
            grid,
            cv=cv,
            scoring=_checking_scorer(seen, X),
        ).fit(X, y)
    # Five training folds and the refit on all rows: six distinct row sets,
    # each fitted exactly once.
    folds = [rows_digest(X[train]) for train, _ in cv.split(X, y)]
    assert sorted(RecordingDensity.fits) == sorted([*folds, rows_digest(X)])
    assert len(set(RecordingDensity.fits)) == 6
    # Every one of the 45 fold fits scored a density of its own fold.
    assert len(seen) == 45 and set(seen) == set(folds)
    refit = gs.best_estimator_
    assert refit.density_.fitted_on_ == rows_digest(X)
    info = fit_cache_info()
    # Kernel + Gram: one miss per (fold, gamma) and the refit; hits at the
    # other C. Densities: one miss per fold and the refit; hits at the other
    # gammas.
    assert info["misses"] == 5 * 3 + 1 + 5 + 1
    assert info["hits"] == 5 * 3 * 2 + 5 * 2


def test_cv_results_are_identical_with_and_without_the_cache():
    X, y = _data(n=80)
    grid = {"C": [1.0, 10.0], "gamma": [0.1, 0.5]}
    results = []
    for memory in (0, None):
        missingkernels.set_config(fit_cache_memory=memory)
        clear_fit_cache()
        RecordingDensity.fits.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gs = GridSearchCV(MissingKernelSVC(), grid, cv=4).fit(X, y)
        results.append(gs.cv_results_)
        if memory == 0:
            assert fit_cache_info()["misses"] == 0  # off: never consulted
    off, on = results
    for key in off:
        if "test_score" in key or key == "params":
            assert np.array_equal(np.asarray(off[key]), np.asarray(on[key])), key


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_the_cache_hits_only_on_identical_rows_and_parameters():
    X, _ = _data()
    first = fit_density(RecordingDensity(), X)
    again = fit_density(RecordingDensity(), X.copy())
    assert len(RecordingDensity.fits) == 1  # same rows, same parameters
    np.testing.assert_array_equal(first.mean_, again.mean_)
    # A new object: fitted attributes are not shared.
    assert again is not first and again.mean_ is not first.mean_
    again.mean_[0] = 99.0
    assert first.mean_[0] != 99.0
    assert fit_density(RecordingDensity(), X).mean_[0] != 99.0
    # One entry moved, one NaN placed elsewhere, one row less: refitted.
    moved = X.copy()
    moved[0, 0] += 1e-12
    fit_density(RecordingDensity(), moved)
    nan_elsewhere = X.copy()
    j = int(np.flatnonzero(~np.isnan(nan_elsewhere[1]))[0])
    nan_elsewhere[1, j] = np.nan
    fit_density(RecordingDensity(), nan_elsewhere)
    fit_density(RecordingDensity(), X[:-1])
    assert len(RecordingDensity.fits) == 4
    # Another parameter value, another class: refitted.
    fit_density(RecordingDensity(max_iter=7), X)
    assert len(RecordingDensity.fits) == 5
    other = fit_density(GaussianEMDensity(), X)
    assert type(other) is GaussianEMDensity and len(RecordingDensity.fits) == 5
    assert fit_cache_info()["hits"] == 2


def test_random_fits_and_fitted_parameters_are_not_cached():
    X, _ = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # random_state=None: two fits may differ, so each one is a fit.
        fit_density(GaussianMixtureDensity(n_components=2), X)
        fit_density(GaussianMixtureDensity(n_components=2), X)
        assert fit_cache_info()["uncacheable"] == 2
        a = fit_density(GaussianMixtureDensity(n_components=2, random_state=3), X)
        b = fit_density(GaussianMixtureDensity(n_components=2, random_state=3), X)
        np.testing.assert_array_equal(a.means_, b.means_)
        fit_density(GaussianMixtureDensity(n_components=2, random_state=4), X)
        info = fit_cache_info()
        assert (info["hits"], info["misses"]) == (1, 2)
        # A fitted density as a parameter (FrozenEstimator) is state the
        # parameters do not show: never a key.
        from sklearn.frozen import FrozenEstimator

        frozen = FrozenEstimator(GaussianEMDensity().fit(X))
        get_kernel("genrbf", density=frozen).fit(X)
        assert fit_cache_info()["uncacheable"] == 3


def test_kernel_gram_is_reused_across_C_and_copies_are_independent():
    X, y = _data()
    a = MissingKernelSVC(C=1.0, gamma=0.3).fit(X, y)
    b = MissingKernelSVC(C=10.0, gamma=0.3).fit(X, y)
    assert fit_cache_info()["hits"] == 1  # the kernel and Gram of a, for b
    assert a.kernel_ is not b.kernel_
    assert a.kernel_.density_ is not b.kernel_.density_
    missingkernels.set_config(fit_cache_memory=0)
    ref = MissingKernelSVC(C=10.0, gamma=0.3).fit(X, y)
    np.testing.assert_array_equal(b.decision_function(X), ref.decision_function(X))
    np.testing.assert_array_equal(b.dual_coef_, ref.dual_coef_)
    # Regression too.
    missingkernels.set_config(fit_cache_memory=None)
    t = np.nan_to_num(X[:, 0])
    r1 = MissingKernelSVR(C=1.0).fit(X, t)
    r2 = MissingKernelSVR(C=1.0).fit(X, t)
    np.testing.assert_array_equal(r1.predict(X), r2.predict(X))


def test_the_cache_is_bounded_and_estimators_pickle_without_it():
    X, y = _data()
    missingkernels.set_config(fit_cache_memory=100)  # too small for any fit
    fit_density(GaussianEMDensity(), X)
    assert fit_cache_info()["entries"] == 0
    missingkernels.set_config(fit_cache_memory=None)
    clf = MissingKernelSVC(gamma=0.3).fit(X, y)
    held = fit_cache_info()["bytes"]
    assert 0 < held <= 256 * 2**20
    clone = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(clone.predict(X), clf.predict(X))
    # The LRU bound: with room for about one kernel entry, older ones go.
    missingkernels.set_config(fit_cache_memory=int(held * 1.2))
    for gamma in (0.1, 0.2, 0.4):
        MissingKernelSVC(gamma=gamma).fit(X, y)
    assert fit_cache_info()["bytes"] <= int(held * 1.2)
    with pytest.raises(ValueError, match="non-negative"):
        missingkernels.set_config(fit_cache_memory=-1)


def test_the_cache_serves_joblib_workers_and_threads():
    from joblib import Parallel, delayed

    X, y = _data()

    def fit(C):  # type: ignore[no-untyped-def]
        return MissingKernelSVC(C=C, gamma=0.3).fit(X, y).decision_function(X)

    missingkernels.set_config(fit_cache_memory=0)
    expected = [fit(C) for C in (1.0, 2.0, 4.0)]
    missingkernels.set_config(fit_cache_memory=None)
    for backend in ("threading", "loky"):
        got = Parallel(n_jobs=2, backend=backend)(
            delayed(fit)(C) for C in (1.0, 2.0, 4.0)
        )
        for e, g in zip(expected, got, strict=True):
            np.testing.assert_array_equal(e, g)


def test_a_cached_fit_warns_as_the_fit_did():
    """A copy from the cache raises the warnings its fit raised: the same
    fit warns the same way whatever was fitted before it in the process."""
    from missingkernels import get_kernel
    from missingkernels.densities import GaussianEMDensity, SingularCovarianceWarning

    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 3))
    X[:, 2] = 1.0  # constant: the ML EM warns that it uses its automatic ridge
    X[rng.random(X.shape) < 0.2] = np.nan
    for _ in range(3):
        with pytest.warns(SingularCovarianceWarning, match="single value"):
            get_kernel("genrbf", density=GaussianEMDensity(prior_rows=0)).fit(X)


_CELL = """
import numpy as np
from missingkernels.densities import GaussianEMDensity


class EditedDensity(GaussianEMDensity):
    def fit(self, X, y=None):
        super().fit(X, y)
        self.version_ = {version}
        return self
"""


def test_a_class_redefined_under_the_same_name_does_not_get_the_old_fit():
    """A notebook cell defining a density, edited and run again: same module
    and qualified name, another class; its fit is computed anew."""
    import sys
    import types

    module = types.ModuleType("notebook_cell_for_the_fit_cache_test")
    sys.modules[module.__name__] = module
    try:
        X, _ = _data()
        exec(_CELL.format(version=1), module.__dict__)
        first = fit_density(module.EditedDensity(), X)
        assert first.version_ == 1
        exec(_CELL.format(version=2), module.__dict__)
        second = fit_density(module.EditedDensity(), X)
        assert type(second) is module.EditedDensity
        assert second.version_ == 2
        # The same class again is a hit, as before.
        hits = fit_cache_info()["hits"]
        assert fit_density(module.EditedDensity(), X).version_ == 2
        assert fit_cache_info()["hits"] == hits + 1
    finally:
        del sys.modules[module.__name__]

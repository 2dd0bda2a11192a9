"""Parameters reachable the scikit-learn way and names that say what they are."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from missingkernels import (
    ExpectedKernelFeatures,
    MissingKernelSVC,
    MissingKernelSVR,
    MissingKernelTransformer,
)


def _table(rng, n=60):
    x = rng.normal(size=n)
    y = (x + 0.5 * rng.normal(size=n) > 0).astype(int)
    frame = pd.DataFrame(
        {
            "x": x,
            "colour": rng.choice(["red", "green", "blue"], n),
            "size": rng.choice(["s", "m"], n),
        }
    )
    frame.loc[rng.random(n) < 0.15, "x"] = np.nan
    return frame, y


def test_density_params_reach_a_density_given_by_name(rng):
    X, y = _table(rng)
    clf = MissingKernelSVC(density="latent_class", density_params={"n_components": 3})
    clf.fit(X, y)
    assert clf.density_.n_components == 3
    assert clf.kernel_name_ == "mixed_rbf" and clf.density_name_ == "latent_class"
    # The kernel's default density (None) takes them too.
    default = MissingKernelSVC(density_params={"n_components": 2}).fit(X, y)
    assert default.density_.n_components == 2
    assert default.density_name_ == "latent_class"


def test_set_params_reaches_density_and_kernel_parameters_given_by_name(rng):
    X, y = _table(rng)
    clf = MissingKernelSVC(density="latent_class")
    clf.set_params(density__n_components=3, kernel_params__nominal_weight=0.25)
    assert clf.density_params == {"n_components": 3}
    assert clf.kernel_params == {"nominal_weight": 0.25}
    clf.set_params(kernel__nominal_combination="product")
    assert clf.kernel_params == {
        "nominal_weight": 0.25,
        "nominal_combination": "product",
    }
    clf.fit(X, y)
    assert clf.density_.n_components == 3
    assert clf.kernel_.nominal_weight == 0.25
    assert clf.kernel_.nominal_combination == "product"
    # A clone keeps them; an object density is set as scikit-learn does.
    assert clone(clf).get_params()["density_params"] == {"n_components": 3}
    from missingkernels.densities import LatentClassDensity

    obj = MissingKernelSVC(density=LatentClassDensity())
    obj.set_params(density__n_components=2)
    assert obj.density.n_components == 2 and obj.density_params is None


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_a_grid_over_density_and_kernel_parameters_one_by_one(rng):
    X, y = _table(rng)
    search = GridSearchCV(
        MissingKernelSVC(density="latent_class"),
        {
            "density__n_components": [1, 2],
            "kernel_params__nominal_weight": [0.25, 0.9],
        },
        cv=2,
    ).fit(X, y)
    got = {
        (p["density__n_components"], p["kernel_params__nominal_weight"])
        for p in search.cv_results_["params"]
    }
    assert got == {(1, 0.25), (1, 0.9), (2, 0.25), (2, 0.9)}
    best = search.best_estimator_
    assert best.density_.n_components == search.best_params_["density__n_components"]


def test_wrong_places_say_where_parameters_go(rng):
    X, y = _table(rng)
    with pytest.raises(ValueError, match=r"kernel 'mixed_rbf'.*go in density_params"):
        MissingKernelSVC(kernel_params={"n_components": 3}).fit(X, y)
    with pytest.raises(ValueError, match=r"not parameters of the density 'latent_c"):
        MissingKernelSVC(density_params={"n_classes": 3}).fit(X, y)
    from missingkernels.densities import LatentClassDensity

    with pytest.raises(ValueError, match="density_params is for a density given"):
        MissingKernelSVC(
            density=LatentClassDensity(), density_params={"n_components": 2}
        ).fit(X, y)


def test_the_feature_count_has_its_own_name_and_the_old_one_warns(rng):
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    new = MissingKernelSVC(route="features", n_kernel_features=40, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        new.fit(X, y)
    assert new.features_.n_components == 40
    old = MissingKernelSVC(route="features", n_components=40, random_state=0)
    with pytest.warns(FutureWarning, match="renamed n_kernel_features"):
        old.fit(X, y)
    np.testing.assert_allclose(old.decision_function(X), new.decision_function(X))
    reg = MissingKernelSVR(route="features", n_components=30, random_state=0)
    with pytest.warns(FutureWarning, match="density_params"):
        reg.fit(X, X[:, 0])
    assert reg.features_.n_components == 30


def test_fitted_attributes_name_the_kernel_and_density(rng):
    X = rng.normal(size=(50, 3))
    X[rng.random(X.shape) < 0.2] = np.nan
    y = (np.nan_to_num(X[:, 0]) > 0).astype(int)
    clf = MissingKernelSVC().fit(X, y)
    assert (clf.kernel_name_, clf.density_name_) == ("genrbf", "gaussian_em")
    t = MissingKernelTransformer(kernel="expected_rbf", density="mice").fit(X)
    assert (t.kernel_name_, t.density_name_) == ("expected_rbf", "mice")
    f = ExpectedKernelFeatures(n_components=10, random_state=0).fit(X)
    assert f.kernel_name_ == "genrbf"
    b = MissingKernelSVC(kernel="expected_linear").fit(X, y)
    assert b.kernel_name_ == "expected_linear"


def _holes(rng, n=50, d=3):
    X = rng.normal(size=(n, d))
    X[:, 1] += X[:, 0]
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    X[rng.random(X.shape) < 0.3] = np.nan
    return X, y


def test_the_estimators_random_state_seeds_a_density_given_by_name(rng):
    # A density of draws named by string used to stay unseeded whatever the
    # estimator's random_state: two fits of the same model on the same rows
    # gave different Grams (and a grid search compared different draws).
    X, y = _holes(rng)
    params = dict(kernel="genrbf", density="iterative", density_params={"n_draws": 2})
    a = MissingKernelSVC(random_state=0, **params).fit(X, y)
    b = MissingKernelSVC(random_state=0, **params).fit(X, y)
    assert a.density_.random_state == 0
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    # The same through the features route and for regression.
    f = ExpectedKernelFeatures(
        density="iterative", n_components=20, random_state=3
    ).fit(X)
    assert f.density_.random_state == 3
    r = MissingKernelSVR(kernel="genrbf", density="iterative", random_state=4)
    assert r.fit(X, y.astype(float)).density_.random_state == 4
    t = MissingKernelTransformer(kernel="genrbf", density="iterative", random_state=1)
    gram = t.fit(X).transform(X)
    np.testing.assert_array_equal(gram, clone(t).fit(X).transform(X))
    # A RandomState instance gives an integer seed drawn from it.
    c = MissingKernelSVC(random_state=np.random.RandomState(0), **params).fit(X, y)
    assert isinstance(c.density_.random_state, int)


def test_what_the_estimators_random_state_leaves_alone(rng):
    from missingkernels.densities import IterativeImputerDensity

    X, y = _holes(rng)
    # None: the density keeps its own default.
    none = MissingKernelSVC(kernel="genrbf", density="iterative").fit(X, y)
    assert none.density_.random_state is None
    # density_params (or density__random_state) says otherwise: it wins.
    own = MissingKernelSVC(
        kernel="genrbf",
        density="iterative",
        density_params={"random_state": 7},
        random_state=0,
    ).fit(X, y)
    assert own.density_.random_state == 7
    # A density object is the user's: its parameters are kept as given.
    obj = MissingKernelSVC(
        kernel="genrbf", density=IterativeImputerDensity(n_draws=2), random_state=0
    ).fit(X, y)
    assert obj.density_.random_state is None
    # A density without a random_state (the default Gaussian) is unaffected.
    em = MissingKernelSVC(kernel="genrbf", random_state=0).fit(X, y)
    assert em.density_name_ == "gaussian_em"
    assert "random_state" not in em.density_.get_params()
    # The mixed kernel's default (latent classes, seeded 0 by default) takes
    # the estimator's seed when one is given.
    T, t = _table(rng)
    mixed = MissingKernelSVC(random_state=5).fit(T, t)
    assert mixed.density_.random_state == 5


def test_a_seed_asks_no_density_of_a_kernel_without_one(rng):
    import missingkernels as mk
    from missingkernels.hookspecs import hookimpl

    class CountObserved:
        """Features observed in both rows: a kernel with no density."""

        def get_params(self, deep=True):
            return {}

        def fit(self, X):
            return self

        def __call__(self, X, Y=None):
            A = ~np.isnan(np.asarray(X, float))
            B = A if Y is None else ~np.isnan(np.asarray(Y, float))
            return A.astype(float) @ B.T.astype(float)

    class Plugin:
        @hookimpl
        def missingkernels_register_kernels(self):
            return {"count_observed_no_density": CountObserved}

    X, y = _holes(rng)
    mk.register_plugin(Plugin(), name="no-density")
    try:
        params = dict(kernel="count_observed_no_density", standardize=False)
        MissingKernelSVC(random_state=0, **params).fit(X, y)
        with pytest.raises(ValueError, match="does not use a density"):
            MissingKernelSVC(density="iterative", random_state=0, **params).fit(X, y)
    finally:
        mk.unregister_plugin("no-density")

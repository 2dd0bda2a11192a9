"""Peer "geom" (Chechik et al.): the paper's formulas, the runner, bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.pipeline import Pipeline
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

import missingkernels
from missingkernels import DroppedFeaturesWarning
from missingkernels.experiments import (
    ComparisonData,
    GeomSVC,
    resolve_method,
    run_comparison,
)
from missingkernels.experiments._baselines import geom_svm
from missingkernels.hookspecs import hookimpl


def _toy(rng: np.random.Generator, n: int = 40, d: int = 3, rate: float = 0.25):
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.7 * X[:, 1] + 0.4 * rng.normal(size=n) > 0).astype(int)
    Xm = X.copy()
    Xm[rng.random(X.shape) < rate] = np.nan
    return X, Xm, y


def _w_of(clf: GeomSVC) -> np.ndarray:
    """Linear kernel: ``w = sum_j y_j alpha_j x_j / s_j`` (absent entries zero)."""
    sup = clf.support_
    X0 = np.nan_to_num(clf.support_vectors_, nan=0.0)
    return (clf.dual_coef_[0] / clf.scalings_[sup]) @ X0


@parametrize_with_checks([GeomSVC(), GeomSVC(kernel="linear", max_iter=2)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize(
    ("kernel", "C", "gamma"), [("rbf", 2.0, 0.4), ("linear", 0.5, 1)]
)
def test_complete_rows_give_the_standard_svm(rng, kernel, C, gamma):
    X, _, y = _toy(rng, n=60)
    geom = GeomSVC(kernel=kernel, C=C, gamma=gamma).fit(X, y)
    ref = SVC(kernel=kernel, C=C, gamma=gamma).fit(X, y)
    # Every s_i = ||w^(i)|| / ||w|| = 1: one QP, converged.
    np.testing.assert_allclose(geom.scalings_, 1.0)
    assert geom.n_iter_ == 1
    X_new = rng.normal(size=(25, 3))
    np.testing.assert_allclose(
        geom.decision_function(X_new), ref.decision_function(X_new), atol=1e-8
    )
    np.testing.assert_array_equal(geom.predict(X_new), ref.predict(X_new))


def test_scalings_and_margins_match_a_naive_evaluation(rng):
    # RBF kernel form: ||w^(i)||^2 = sum_jk b_j b_k exp(-g sum_{f in F_i} (.)^2)
    # with b_j = y_j alpha_j / s_j and absent entries zero.
    _, Xm, y = _toy(rng, n=14, d=3, rate=0.3)
    clf = GeomSVC(C=3.0, gamma=0.7, max_iter=3, tol=0.0).fit(Xm, y)
    X0 = np.nan_to_num(Xm, nan=0.0)
    valid = ~np.isnan(Xm)
    sup, s = clf.support_, clf.scalings_
    b = clf.dual_coef_[0] / s[sup]

    def k(u, v, feats):
        return np.exp(-0.7 * sum((u[f] - v[f]) ** 2 for f in feats))

    def norm2(feats):  # ||w||^2 with every kernel taken on the features `feats`
        return sum(
            b[p] * b[q] * k(X0[row_p], X0[row_q], feats)
            for p, row_p in enumerate(sup)
            for q, row_q in enumerate(sup)
        )

    everything = range(3)
    w2 = norm2(everything)
    assert clf.weight_norm_ == pytest.approx(np.sqrt(w2), rel=1e-10)
    X_new = np.array([[0.3, np.nan, -1.0], [np.nan] * 3, [1.0, 2.0, 0.5]])
    for x in X_new:
        valid_x = np.flatnonzero(~np.isnan(x))
        # No valid feature: no subspace, s = 1 (see the module docstring).
        s_x = max(np.sqrt(norm2(valid_x) / w2), 1e-6) if valid_x.size else 1.0
        x0 = np.nan_to_num(x, nan=0.0)
        wx = sum(
            clf.dual_coef_[0][p] * k(X0[row], x0, everything) / s[row]
            for p, row in enumerate(sup)
        )
        f = wx / s_x + clf.intercept_[0]
        assert clf.decision_function(x[None])[0] == pytest.approx(f, rel=1e-9)
    # The s of each QP is the update computed from the QP before it.
    prev = GeomSVC(C=3.0, gamma=0.7, max_iter=2, tol=0.0).fit(Xm, y)
    np.testing.assert_allclose(prev.scalings_, clf.scaling_history_[1])
    np.testing.assert_allclose(prev._scalings(Xm), clf.scaling_history_[2])
    assert valid.all(axis=1).any()
    np.testing.assert_allclose(s[valid.all(axis=1)], 1.0, rtol=1e-12)


@pytest.mark.parametrize(
    ("n", "d", "rate"), [(90, 7, 0.35), (60, 12, 0.6), (5, 2, 0.5)]
)
def test_instance_norms_match_the_exponent_per_pattern(rng, n, d, rate):
    # The compiled product over features and patterns' prefix tree, against
    # ||w^(i)||^2 = sum_jk b_j b_k exp(-g sum_{f in F_i} (x_jf - x_kf)^2)
    # evaluated directly (several blocks of pairs when n = 90: 4005 pairs).
    _, Xm, y = _toy(rng, n=n, d=d, rate=rate)
    y[:2] = [0, 1]
    Xm[0] = np.nan  # a row missing everything: ||w^(i)||^2 = sum_j b_j^2
    Xm[1, 0] = 0.5
    # Every feature observed at least twice: none is dropped as too sparse.
    Xm[2:4] = np.where(np.isnan(Xm[2:4]), 0.25, Xm[2:4])
    clf = GeomSVC(C=50.0, gamma=0.3, max_iter=1).fit(Xm, y)
    X0 = np.nan_to_num(Xm[clf.support_], nan=0.0)
    b = rng.normal(size=len(clf.support_))
    X_new = np.vstack([Xm, rng.normal(size=(5, d))])
    X_new[-1, 1:] = np.nan
    expected = []
    for x in X_new:
        feats = ~np.isnan(x)
        sq = ((X0[:, None, feats] - X0[None, :, feats]) ** 2).sum(axis=2)
        expected.append(np.sqrt(b @ np.exp(-0.3 * sq) @ b))
    np.testing.assert_allclose(clf._instance_norms(X_new, b), expected, rtol=1e-11)


def test_each_step_solves_the_papers_objective():
    # Linear kernel, tiny problem: each QP is min 1/2 ||w||^2 + C sum xi_i
    # s.t. y_i (w . x_i / s_i + b) >= 1 - xi_i (absent entries zero), and the
    # next s_i is ||w_{F_i}|| / ||w||. Solved here directly with cvxpy.
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(7)
    _, Xm, y = _toy(rng, n=24, d=3, rate=0.3)
    X0 = np.nan_to_num(Xm, nan=0.0)
    valid = ~np.isnan(Xm)
    signs = np.where(y == 1, 1.0, -1.0)
    C = 0.8

    def solve(s: np.ndarray) -> tuple[np.ndarray, float, float]:
        w, b = cp.Variable(3), cp.Variable()
        xi = cp.Variable(len(y), nonneg=True)
        cons = [cp.multiply(signs, (X0 / s[:, None]) @ w + b) >= 1 - xi]
        prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + C * cp.sum(xi)), cons)
        prob.solve(solver="CLARABEL")
        return np.asarray(w.value), float(b.value), float(prob.value)

    def objective(w: np.ndarray, b: float, s: np.ndarray) -> float:
        margins = signs * ((X0 / s[:, None]) @ w + b)
        return 0.5 * w @ w + C * np.maximum(0.0, 1 - margins).sum()

    s = np.ones(len(y))
    for n_qp in (1, 2, 3):
        clf = GeomSVC(kernel="linear", C=C, max_iter=n_qp, tol=0.0).fit(Xm, y)
        assert clf.n_iter_ == n_qp
        np.testing.assert_allclose(clf.scalings_, s, rtol=1e-3)  # solver tolerances
        w_ref, _, opt = solve(s)
        w = _w_of(clf)
        assert objective(w, clf.intercept_[0], s) == pytest.approx(opt, rel=1e-3)
        np.testing.assert_allclose(w, w_ref, atol=2e-2 * np.linalg.norm(w_ref))
        # The paper's update, from the cvxpy solution.
        s = np.sqrt(valid @ w_ref**2) / np.linalg.norm(w_ref)
    # Rows missing features have s_i < 1 in the linear case (a projection).
    partial = ~valid.all(axis=1)
    assert (clf.scalings_[partial] < 1.0).all()
    np.testing.assert_allclose(clf.scalings_[~partial], 1.0)


def test_rows_missing_everything_keep_scaling_one(rng):
    # No valid feature, no subspace: s = 1 in every QP, and such a row scores
    # like the row of zeros in the plain SVM, w . phi(0) + b. (The formula
    # would give ||w^(i)|| = |sum_j beta_j| = 0 after the first QP.)
    _, Xm, y = _toy(rng, n=30, d=3)
    Xm[:4] = np.nan
    clf = GeomSVC(C=1.0, gamma=0.5, max_iter=4, tol=0.0).fit(Xm, y)
    assert clf.n_iter_ == 4
    for s in clf.scaling_history_:
        np.testing.assert_array_equal(s[:4], 1.0)
    sup = clf.support_
    X0 = np.nan_to_num(Xm[sup], nan=0.0)
    w_phi0 = np.exp(-0.5 * (X0**2).sum(axis=1)) @ (
        clf.dual_coef_[0] / clf.scalings_[sup]
    )
    scores = clf.decision_function(np.full((2, 3), np.nan))
    np.testing.assert_allclose(scores, w_phi0 + clf.intercept_[0], rtol=1e-10)


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_rows_valid_only_on_a_zero_column_are_rows_missing_everything(rng, kernel):
    # Ionosphere's second attribute is 0 in every row. A row whose only valid
    # feature is such a column has ||w^(i)|| = 0 exactly (its projections of
    # all support vectors coincide): no subspace, as if nothing were valid.
    # It used to be floored at s = 1e-6, i.e. kernel entries scaled by 1e12,
    # and libsvm ran for over 10 minutes on such a QP (MNAR 70%, 187 rows).
    # Reference: the same rows with that entry marked missing.
    _, Xm, y = _toy(rng, n=40, d=3)
    Xm = np.column_stack([Xm, np.zeros(40)])
    Xm[:3, :3] = np.nan  # valid only on the zero column
    reference = Xm.copy()
    reference[:3, 3] = np.nan
    kw = dict(kernel=kernel, C=2.0, gamma=0.5, max_iter=4, tol=0.0)
    clf = GeomSVC(**kw).fit(Xm, y)
    ref = GeomSVC(**kw).fit(reference, y)
    for s in clf.scaling_history_:
        np.testing.assert_array_equal(s[:3], 1.0)
    np.testing.assert_allclose(clf.scalings_, ref.scalings_, rtol=1e-9)
    X_new = np.vstack([Xm[:5], [[np.nan, np.nan, np.nan, 0.0]]])
    X_ref = np.vstack([reference[:5], [[np.nan] * 4]])
    np.testing.assert_allclose(
        clf.decision_function(X_new), ref.decision_function(X_ref), rtol=1e-9
    )


def test_bad_input_is_explained(rng):
    _, Xm, y = _toy(rng, n=30)
    with pytest.raises(ValueError, match="Only binary classification"):
        GeomSVC().fit(Xm, np.arange(30) % 3)
    with pytest.raises(ValueError, match="2 classes"):
        GeomSVC().fit(Xm, np.zeros(30))
    bad = Xm.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        GeomSVC().fit(bad, y)
    empty = Xm.copy()
    empty[:, 1] = np.nan
    with pytest.warns(DroppedFeaturesWarning, match=r"dropped column 1 \(0-based\)"):
        assert GeomSVC().fit(empty, y).dropped_features_.tolist() == [1]
    with pytest.raises(ValueError):
        GeomSVC(kernel="poly").fit(Xm, y)
    with pytest.raises(ValueError):
        GeomSVC(max_iter=0).fit(Xm, y)
    fitted = GeomSVC().fit(Xm, y)
    with pytest.raises(ValueError, match="features"):
        fitted.predict(Xm[:, :2])


def test_geom_factory_refuses_regression():
    assert isinstance(geom_svm(C=2.0), GeomSVC)
    assert missingkernels.get_baseline("geom", gamma=0.5).gamma == 0.5
    with pytest.raises(ValueError, match="classifier"):
        geom_svm(task="regression")
    with pytest.raises(ValueError, match="task"):
        geom_svm(task="ranking")


# -- the runner -------------------------------------------------------------


class _CEstimator(ClassifierMixin, BaseEstimator):
    """A NaN-tolerant toy classifier with a C but no gamma."""

    def __init__(self, C: float = 1.0) -> None:
        self.C = C


def _c_estimator(task: str = "classification") -> _CEstimator:
    """Toy estimator baseline."""
    return _CEstimator()


def _pipe(task: str = "classification") -> Pipeline:
    """Toy pipeline baseline."""
    return Pipeline([("svm", SVC())])


class _Plugin:
    @hookimpl
    def missingkernels_register_baselines(self):  # type: ignore[no-untyped-def]
        return {"test_c_estimator": _c_estimator, "test_pipe": _pipe}


@pytest.fixture
def toy_plugin():
    name = missingkernels.register_plugin(_Plugin(), name="test-peers")
    yield name
    missingkernels.unregister_plugin(name)


def test_baselines_that_are_not_pipelines_are_estimators(toy_plugin):
    spec = resolve_method("geom", C_grid=[1.0, 2.0], gamma_grid=[0.5])
    assert (spec.kind, spec.scale) == ("estimator", True)
    assert spec.grid == {"C": [1.0, 2.0], "gamma": [0.5]}
    assert isinstance(spec.make("classification", 0), GeomSVC)
    other = resolve_method("test_c_estimator", C_grid=[3.0], gamma_grid=[0.5])
    assert (other.kind, other.grid) == ("estimator", {"C": [3.0]})
    pipe = resolve_method("test_pipe", C_grid=[3.0], gamma_grid=[0.5])
    assert (pipe.kind, pipe.grid) == ("pipeline", {"C": [3.0], "gamma": [0.5]})
    assert resolve_method("mean").kind == "pipeline"


def test_runner_cell_with_geom():
    pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] - X[:, 2] > 0).astype(int)
    res = run_comparison(
        {"toy": ComparisonData(X, y, "classification")},
        ["geom", "mean"],
        mechanisms=["mcar"],
        rates=[0.2],
        n_draws=1,
        outer_folds=2,
        inner_folds=2,
        C_grid=[0.5, 8.0],
        gamma_grid=[0.1, 1.0],
        random_state=1,
    )
    geom = res[(res.method == "geom") & (res.metric == "accuracy")]
    assert len(geom) == 2
    assert (geom.error == "").all(), geom.error.unique()
    assert (geom.score > 0.7).all()
    for params in geom.params:
        assert set(json.loads(params)) == {"C", "gamma"}


def test_geom_lives_in_estimators_and_is_still_importable_from_experiments():
    import missingkernels.estimators as est
    import missingkernels.experiments as exp

    assert "GeomSVC" in est.__all__ and "GeomSVC" in exp.__all__
    assert exp.GeomSVC is est.GeomSVC
    assert est.GeomSVC.__module__ == "missingkernels.estimators._geom"


def test_pattern_tree_groups_like_np_unique():
    from missingkernels.estimators._geom import _pattern_tree
    from missingkernels.estimators._geom_compiled import pattern_program

    rng = np.random.default_rng(7)
    X = rng.normal(size=(300, 9))
    X[rng.random(X.shape) < 0.35] = np.nan
    tree = _pattern_tree(X)
    valid = ~np.isnan(X)[:, tree.order]
    patterns, which = np.unique(valid, axis=0, return_inverse=True)
    assert tree.n_patterns == patterns.shape[0]
    np.testing.assert_array_equal(tree.which, which.ravel())
    np.testing.assert_array_equal(tree.program, pattern_program(patterns))

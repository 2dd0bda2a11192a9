"""SOCPSVC: the robust SOCP SVM in its kernel and linear forms."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from _helpers import load_shared_csv
from scipy import stats
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from missingkernels.estimators import SOCPSVC, MissingKernelSVC, cone_weight

cvxpy = pytest.importorskip("cvxpy", reason="cvxpy (the socp extra) is not installed")
pytestmark = pytest.mark.socp


def _data(rng, n=60, d=3, rate=0.25):
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.3 * rng.normal(size=n) > 0, 1, 0)
    Xm = X.copy()
    Xm[rng.random(X.shape) < rate] = np.nan
    return Xm, y


def test_cone_weight_bounds():
    assert cone_weight(0.5, "gaussian") == 0.0
    assert cone_weight(0.9, "gaussian") == pytest.approx(stats.norm.ppf(0.9))
    assert cone_weight(0.8, "chebyshev") == pytest.approx(2.0)
    with pytest.raises(ValueError, match=r"kappa must be in \[0, 1\)"):
        cone_weight(1.0, "gaussian")


def test_kappa_half_gaussian_is_the_plain_svm_on_the_expected_kernel(rng):
    Xm, y = _data(rng)
    socp = SOCPSVC(C=2.0, kappa=0.5, gamma=0.4, solver="ECOS").fit(Xm[:45], y[:45])
    K = socp.kernel_(Xm[:45])
    svc = SVC(kernel="precomputed", C=2.0, tol=1e-8).fit(K, y[:45])
    K_new = socp.kernel_(Xm[45:], Xm[:45])
    ref = svc.decision_function(K_new)
    ours = socp.decision_function(Xm[45:])
    np.testing.assert_allclose(ours, ref, atol=2e-4 * np.abs(ref).max())
    np.testing.assert_array_equal(socp.predict(Xm[45:]), svc.predict(K_new))
    # The same holds through MissingKernelSVC on the same kernel.
    mk = MissingKernelSVC(
        kernel="expected_rbf", gamma=0.4, C=2.0, tol=1e-8, standardize=False
    )
    np.testing.assert_array_equal(
        mk.fit(Xm[:45], y[:45]).predict(Xm[45:]), socp.predict(Xm[45:])
    )


def test_cone_constraints_hold_at_the_solution(rng):
    Xm, y = _data(rng)
    socp = SOCPSVC(C=1.0, kappa=0.8, bound="chebyshev", gamma=0.4).fit(Xm, y)
    K = socp.kernel_(Xm)
    V = socp.kernel_.variance(Xm)
    s = np.where(y == socp.classes_[1], 1.0, -1.0)
    margin = s * (K @ socp.coef_ + socp.intercept_)
    spread = np.sqrt((np.clip(V, 0, None) * socp.coef_**2).sum(axis=1))
    xi = np.maximum(0, 1 + socp.tau_ * spread - margin)
    # The objective at the solution is no worse than at the plain-SVM point with
    # the cone weight ignored would suggest: the robust rows carry their margin.
    assert socp.tau_ == pytest.approx(2.0)
    assert np.all(xi >= 0) and np.isfinite(xi).all()
    robust = spread > 1e-9
    assert robust.any()


def test_linear_form_kappa_half_matches_linear_svm_on_conditional_means(rng):
    Xm, y = _data(rng, n=50)
    socp = SOCPSVC(form="linear", C=1.0, kappa=0.5).fit(Xm, y)
    means = socp.density_.conditionals(Xm).means
    svc = SVC(kernel="linear", C=1.0, tol=1e-8).fit(means, y)
    np.testing.assert_allclose(socp.coef_, svc.coef_.ravel(), atol=1e-4)
    robust = SOCPSVC(form="linear", C=1.0, kappa=0.9).fit(Xm, y)
    assert robust.predict(Xm).shape == (50,)


def test_linear_form_equals_the_per_row_cone_program(rng):
    # Reference: the program written row by row, ||A_i^(1/2) w_J|| through the
    # Cholesky factor (not the symmetric root the estimator uses).
    Xm, y = _data(rng, n=70, d=4, rate=0.3)
    Xm[0] = np.nan  # a fully missing row
    model = SOCPSVC(form="linear", C=0.7, kappa=0.85, solver="CLARABEL").fit(Xm, y)
    cond = model.density_.conditionals(Xm)
    signs = np.where(y == model.classes_[1], 1.0, -1.0)
    w, b = cvxpy.Variable(4), cvxpy.Variable()
    xi = cvxpy.Variable(70, nonneg=True)
    cons = []
    for i in range(70):
        p = cond.pattern_index[i]
        J = np.flatnonzero(cond.patterns[p])
        margin = signs[i] * (cond.means[i] @ w + b)
        if J.size:
            L = np.linalg.cholesky(cond.covariances[p] + 1e-12 * np.eye(J.size))
            cons.append(margin - 1 + xi[i] >= model.tau_ * cvxpy.norm(L.T @ w[J]))
        else:
            cons.append(margin >= 1 - xi[i])
    objective = cvxpy.Minimize(0.5 * cvxpy.sum_squares(w) + 0.7 * cvxpy.sum(xi))
    cvxpy.Problem(objective, cons).solve(solver="CLARABEL")
    np.testing.assert_allclose(model.coef_, w.value, atol=1e-5)
    assert model.intercept_ == pytest.approx(float(b.value), abs=1e-5)


def test_missing_cvxpy_says_which_extra(monkeypatch, rng):
    Xm, y = _data(rng, n=20)
    monkeypatch.setitem(sys.modules, "cvxpy", None)
    with pytest.raises(ImportError, match=r"missingkernels\[socp\]"):
        SOCPSVC().fit(Xm, y)


def test_bad_input(rng):
    Xm, y = _data(rng, n=30)
    with pytest.raises(ValueError, match="Only binary classification"):
        SOCPSVC().fit(Xm, np.arange(30) % 3)
    with pytest.raises(ValueError, match="non-convex"):
        SOCPSVC(kappa=0.3).fit(Xm, y)
    with pytest.raises(ValueError, match="needs a Gaussian density"):
        SOCPSVC(form="linear", density="mice").fit(Xm, y)


@pytest.mark.slow
def test_statlog_heart_20pct_mcar_kernel_form(shared_data_dir, capsys):
    from sklearn.preprocessing import StandardScaler

    from missingkernels.experiments import simulate_missing

    X, y = load_shared_csv(shared_data_dir, "statlog_heart")
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(y))
    train, test = perm[:216], perm[216:]
    scaler = StandardScaler().fit(X[train])
    Xs = scaler.transform(X)
    Xm = simulate_missing(Xs, "mcar", 0.2, random_state=0)
    if isinstance(Xm, tuple):
        Xm = Xm[0]
    gamma = 1.0 / X.shape[1]
    socp = SOCPSVC(C=1.0, kappa=0.7, gamma=gamma).fit(Xm[train], y[train])
    svc = MissingKernelSVC(kernel="expected_rbf", gamma=gamma, C=1.0)
    svc.fit(Xm[train], y[train])
    acc_socp = np.mean(socp.predict(Xm[test]) == y[test])
    acc_svc = np.mean(svc.predict(Xm[test]) == y[test])
    with capsys.disabled():
        print(
            f"\nstatlog_heart 20% MCAR n_train=216: SOCPSVC({socp.solver_}) "
            f"accuracy {acc_socp:.3f}, expected-kernel SVC {acc_svc:.3f}"
        )
    # Both well above the majority rate (150/270 = 0.56).
    assert acc_socp > 0.7 and acc_svc > 0.7


@parametrize_with_checks(
    [SOCPSVC(), SOCPSVC(form="linear", kappa=0.8)],
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_kernel_form_scores_new_rows_in_chunks(rng):
    import sklearn

    Xm, y = _data(rng, n=70)
    model = SOCPSVC(C=1.0, kappa=0.8, gamma=0.4).fit(Xm[:40], y[:40])
    whole = model.decision_function(Xm[40:])
    with sklearn.config_context(working_memory=4 * 8 * 40 / 2**20):  # 4 rows
        chunked = model.decision_function(Xm[40:])
    np.testing.assert_allclose(chunked, whole, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        whole, model.kernel_(Xm[40:], Xm[:40]) @ model.coef_ + model.intercept_
    )

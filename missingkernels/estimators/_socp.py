"""The robust second-order cone program (SOCP) SVM for missing features."""

from __future__ import annotations

from numbers import Real
from typing import Any, ClassVar

import numpy as np
from scipy import linalg, stats
from sklearn.base import BaseEstimator

from .._config import format_bytes, max_gram_memory
from .._numerics import psd_factor
from .._optional import import_optional
from .._registry import new_density
from .._sklearn_compat import Interval, StrOptions, _fit_context
from .._validation import (
    drop_sparse_features,
    dropped_features,
    subset_feature_names,
    validate_missing_data,
    validate_missing_data_xy,
)
from ..conditionals import GaussianConditionals
from ..kernels._expected_kernel import _representation_class
from ._base import BinaryClassifierMixin, KernelParamsMixin, row_chunks


def _import_cvxpy() -> Any:
    return import_optional("cvxpy", "socp", "SOCPSVC.fit")


def cone_weight(kappa: float, bound: str) -> float:
    """Cone weight tau for a probability ``kappa`` of classifying a row right.

    Parameters
    ----------
    kappa : float in [0, 1)
        Required probability that a training row lies on its side of the margin.
    bound : {"gaussian", "chebyshev"}
        ``"gaussian"``: ``tau = Phi^-1(kappa)`` (exact for Gaussian kernel
        values; 0 at ``kappa = 0.5``, negative below); ``"chebyshev"``:
        ``tau = sqrt(kappa / (1 - kappa))`` (the one-sided Chebyshev
        (Cantelli) bound, valid for any distribution).

    Returns
    -------
    tau : float

    References
    ----------
    .. [1] P. K. Shivaswamy, C. Bhattacharyya, A. J. Smola. "Second order cone
       programming approaches for handling missing and uncertain data", JMLR 7
       (2006), eq. (4) and sec. 3.

    Examples
    --------
    >>> from missingkernels.estimators import cone_weight
    >>> cone_weight(0.5, "gaussian")
    0.0
    >>> round(cone_weight(0.5, "chebyshev"), 6)
    1.0
    """
    if not 0.0 <= kappa < 1.0:
        raise ValueError(f"kappa must be in [0, 1), got {kappa!r}.")
    if bound == "gaussian":
        return float(stats.norm.ppf(kappa)) if kappa > 0 else -np.inf
    if bound == "chebyshev":
        return float(np.sqrt(kappa / (1.0 - kappa)))
    raise ValueError(f"bound must be 'gaussian' or 'chebyshev', got {bound!r}.")


# Bytes per n^2 of the kernel form's problem through cvxpy and SCS, from
# benchmarks/bench_socp.py's peak memory (about 0.5 KB; rounded up).
_SOCP_BYTES_PER_ENTRY = 600


def _check_problem_memory(n: int) -> None:
    """ValueError before the kernel form's problem outgrows the memory limit."""
    needed = _SOCP_BYTES_PER_ENTRY * n * n
    limit, source = max_gram_memory()
    if needed > limit:
        raise ValueError(
            f"SOCPSVC(form='kernel') on {n} rows builds {n} second-order cones "
            f"of dimension {n + 1}: about {format_bytes(needed)} through cvxpy "
            f"and the solver, above the limit of {format_bytes(limit)} "
            f"({source}). Use form='linear' (memory linear in the rows), "
            "MissingKernelSVC (kappa=0.5 is the SVM on the expected kernel), or "
            "a subsample; raise the limit with "
            "missingkernels.set_config(max_gram_memory=...) if the machine has "
            "the memory."
        )


class SOCPSVC(KernelParamsMixin, BinaryClassifierMixin, BaseEstimator):
    """Robust SOCP support vector classifier for rows with missing entries.

    Each training row must lie on its side of the margin with probability at
    least ``kappa`` under the uncertainty of its missing entries, which turns
    the SVM into a second-order cone program (Shivaswamy et al., 2006).

    ``form="kernel"`` (Anderson & Gupta, 2011, sec. 2.3): with the expected
    kernel ``K`` and the variances ``V[i, j] = Var k(X_i, X_j)``, solve::

        min  1/2 c^T K c + C sum_i xi_i
        s.t. y_i (c^T K[:, i] + b) >= 1 - xi_i + tau ||sqrt(V[i]) * c||_2,
             xi_i >= 0,

    and predict with ``sign(sum_j c_j K(x, x_j) + b)``. ``form="linear"``
    (Shivaswamy et al., sec. 4): with the conditional mean ``mu_i`` and
    covariance ``A_i`` of each row (from a Gaussian density), solve::

        min  1/2 ||w||^2 + C sum_i xi_i
        s.t. y_i (w^T mu_i + b) >= 1 - xi_i + tau ||A_i^(1/2) w||_2,

    one cone of dimension ``|missing_i| + 1`` per row; predict with
    ``sign(w^T mu(x) + b)``. ``tau`` comes from ``kappa`` by ``bound``.

    Parameters
    ----------
    C : float, default=1.0
        Penalty of the slack variables.
    kappa : float in [0, 1), default=0.5
        Required probability of a correct side for each training row. With
        ``bound="gaussian"``, ``kappa=0.5`` gives ``tau=0``: the plain C-SVM on
        the expected kernel.
    bound : {"gaussian", "chebyshev"}, default="gaussian"
        How ``kappa`` maps to the cone weight (see :func:`cone_weight`).
    form : {"kernel", "linear"}, default="kernel"
        Kernelised (expected kernel + diagonal variances) or linear
        (per-row conditional covariances).
    kernel : str, default="expected_rbf"
        Registry kernel with a ``variance`` method (``"expected_rbf"`` or
        ``"expected_linear"``); used only by ``form="kernel"``.
    density : str, density estimator or None, default=None
        Registry name, unfitted density object or None for the kernel's
        default; ``form="linear"`` needs a Gaussian density (``"gaussian_em"``
        when None).
    gamma : float or "scale", default="scale"
        RBF width of the kernel form.
    metric : {"euclidean", "mahalanobis"}, default="euclidean"
        Scalar product of the RBF kernel.
    kernel_params : dict, default=None
        Other kernel parameters.
    solver : {"auto", "ECOS", "SCS", "CLARABEL"}, default="auto"
        The cvxpy solver. ``"auto"``: SCS for the kernel form, CLARABEL for
        the linear form.
    solver_params : dict, default=None
        Passed to ``cvxpy.Problem.solve``.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    coef_ : ndarray of shape (n_samples,) or (n_features,)
        ``c`` (kernel form, one weight per training row) or ``w`` (linear form).
    intercept_ : float
    tau_ : float
        The cone weight used.
    solver_ : str
        The solver that was run.
    kernel_ : object
        The fitted kernel (kernel form).
    dropped_features_ : ndarray of int
        0-based indices of the features observed in fewer than
        ``missingkernels.MIN_OBSERVED`` (2) training rows, dropped by the
        kernel (kernel form) or before the density (linear form, where their
        entries of ``coef_`` are 0); named in a ``DroppedFeaturesWarning``.
        New rows' values in them are ignored.
    density_ : object
        The fitted density.
    X_fit_ : ndarray of shape (n_samples, n_features)
        The training rows, NaN where missing (kernel form only). The kernel
        form keeps every one: its decision function
        ``sum_j c_j K(x, x_j) + b`` has a weight ``c_j`` on each training
        row (the SOCP's solution is not sparse, unlike an SVM's dual), so
        a pickled model holds the training table. The linear form keeps no
        training row: ``w``, ``b`` and the density's parameters.
    shape_fit_ : tuple of int
        The shape of the training table, ``(n_samples, n_features)``.
    n_features_in_ : int

    Notes
    -----
    Binary classification only (wrap in
    :class:`sklearn.multiclass.OneVsRestClassifier` for more classes). The
    kernel form has ``n`` cones of dimension ``n + 1``, passed to cvxpy as one
    vectorised cone constraint (a loop of per-row cones makes cvxpy's
    compilation dominate the fit). ``benchmarks/bench_socp.py`` compares the
    solvers' fit times. Rows with no missing entry have zero variance and get
    the plain hinge constraint.

    Sizes. The kernel form's problem holds about ``3 n^2`` numbers (the Gram
    matrix, its square-root factor and the ``n x n`` kernel standard
    deviations of the cones), which cvxpy and the solver copy several times:
    memory grows like ``n^2`` and the solve time faster, so it serves up to a
    few thousand rows. Before building the problem, the fit estimates its
    memory and refuses, with advice, above the package's Gram memory limit
    (:func:`missingkernels.set_config`). The cones need the full matrix of
    standard deviations: a low-rank factor of the kernel does not shrink
    them, and the RBF Gram is numerically of full rank anyway. The linear
    form's memory grows like ``n d + P d^2`` (``P`` missing patterns): use it,
    or :class:`~missingkernels.MissingKernelSVC`, for larger data.

    References
    ----------
    .. [1] P. K. Shivaswamy, C. Bhattacharyya, A. J. Smola. "Second order cone
       programming approaches for handling missing and uncertain data", JMLR 7
       (2006) 1283-1314.
    .. [2] H. S. Anderson, M. R. Gupta. "Expected kernel for missing features
       in support vector machines", IEEE Statistical Signal Processing
       Workshop (2011), sec. 2.3.

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.estimators import SOCPSVC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 3))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> X[rng.random(X.shape) < 0.2] = np.nan
    >>> clf = SOCPSVC(C=1.0, kappa=0.7).fit(X, y)  # doctest: +SKIP
    >>> clf.predict(X[:3]).shape  # doctest: +SKIP
    (3,)
    """

    _parameter_constraints: ClassVar[dict] = {
        **KernelParamsMixin._kernel_parameter_constraints,
        "C": [Interval(Real, 0.0, None, closed="neither")],
        "kappa": [Interval(Real, 0.0, 1.0, closed="left")],
        "bound": [StrOptions({"gaussian", "chebyshev"})],
        "form": [StrOptions({"kernel", "linear"})],
        "solver": [StrOptions({"auto", "ECOS", "SCS", "CLARABEL"})],
        "solver_params": [dict, None],
    }

    def __init__(
        self,
        *,
        C: float = 1.0,
        kappa: float = 0.5,
        bound: str = "gaussian",
        form: str = "kernel",
        kernel: str = "expected_rbf",
        density: Any = None,
        gamma: Any = "scale",
        metric: str = "euclidean",
        kernel_params: dict | None = None,
        solver: str = "auto",
        solver_params: dict | None = None,
    ) -> None:
        self.C = C
        self.kappa = kappa
        self.bound = bound
        self.form = form
        self.kernel = kernel
        self.density = density
        self.gamma = gamma
        self.metric = metric
        self.kernel_params = kernel_params
        self.solver = solver
        self.solver_params = solver_params

    @property
    def density_(self) -> Any:
        """The density fitted on the training rows."""
        if self.form == "kernel":
            return self.kernel_.density_
        return self._density

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X: Any, y: Any) -> SOCPSVC:
        """Solve the SOCP on the training rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows, NaN where missing.
        y : array-like of shape (n_samples,)
            Two classes.

        Returns
        -------
        self : SOCPSVC
        """
        X, y = validate_missing_data_xy(
            self, X, y, task="classification", require_observed_columns=False
        )
        signs = self._binary_signs(y)
        self.tau_ = cone_weight(float(self.kappa), self.bound)
        if self.tau_ < 0:
            raise ValueError(
                f"kappa={self.kappa} with bound='gaussian' gives a negative cone "
                "weight, which makes the problem non-convex; use kappa >= 0.5 "
                "(kappa=0.5 is the plain SVM on the expected kernel)."
            )
        cp = _import_cvxpy()
        self.shape_fit_ = X.shape
        if self.form == "kernel":
            # Its decision function reads every training row (see X_fit_).
            self.X_fit_ = X
            self._fit_kernel_form(cp, X, signs)
        else:
            self.__dict__.pop("X_fit_", None)  # of an earlier kernel-form fit
            self._fit_linear_form(cp, X, signs)
        return self

    def __setstate__(self, state: dict) -> None:
        # The linear form of a model pickled when both forms kept X_fit_:
        # drop the training rows, which it never reads.
        state = dict(state)
        if state.get("form") == "linear":
            rows = state.pop("X_fit_", None)
            if rows is not None:
                state.setdefault("shape_fit_", rows.shape)
        super().__setstate__(state)

    def _solve(self, cp: Any, problem: Any) -> None:
        solver = self.solver
        if solver == "auto":
            solver = "CLARABEL" if self.form == "linear" else "SCS"
        params = dict(self.solver_params or {})
        try:
            problem.solve(solver=solver, **params)
        except cp.error.SolverError as exc:
            raise RuntimeError(
                f"SOCPSVC: the {solver} solver failed ({exc}). Try another "
                "solver (solver='SCS' or 'CLARABEL') or a smaller C."
            ) from exc
        if problem.status not in ("optimal", "optimal_inaccurate"):
            raise RuntimeError(
                f"SOCPSVC: the {solver} solver ended with status "
                f"{problem.status!r}; try another solver or a smaller C."
            )
        self.solver_ = solver

    def _fit_kernel_form(self, cp: Any, X: np.ndarray, signs: np.ndarray) -> None:
        _check_problem_memory(X.shape[0])
        self.kernel_ = self._make_kernel().fit(X)
        self.dropped_features_ = dropped_features(self.kernel_)
        if not hasattr(self.kernel_, "variance"):
            raise ValueError(
                f"form='kernel' needs a kernel with a variance; {self.kernel!r} "
                "has none. Use kernel='expected_rbf' or 'expected_linear'."
            )
        K = np.asarray(self.kernel_(X), dtype=np.float64)
        V = np.clip(np.asarray(self.kernel_.variance(X), dtype=np.float64), 0, None)
        n = K.shape[0]
        # 1/2 c^T K c = 1/2 ||R c||^2 with K = R^T R from the eigen-decomposition
        # (K is PSD up to rounding; tiny negative eigenvalues are dropped).
        w, U = linalg.eigh(0.5 * (K + K.T))
        keep = w > w.max() * 1e-12
        R = np.sqrt(w[keep])[:, None] * U[:, keep].T
        c = cp.Variable(n)
        b = cp.Variable()
        xi = cp.Variable(n, nonneg=True)
        margins = cp.multiply(signs, K @ c + b)
        constraints = []
        sd = np.sqrt(V)
        uncertain = np.flatnonzero(sd.max(axis=1) > 0)
        if self.tau_ == 0:
            uncertain = uncertain[:0]
        plain = np.setdiff1d(np.arange(n), uncertain)
        if plain.size:
            constraints.append(margins[plain] >= 1 - xi[plain])
        if uncertain.size:
            # Row i: margin_i - 1 + xi_i >= tau ||sd_i * c||, a second-order
            # cone; all rows in one vectorised constraint (a Python loop of
            # per-row cones made cvxpy's compilation 3-4x the solve time).
            rows = np.ones((uncertain.size, 1)) @ cp.reshape(c, (1, n), order="C")
            spread = cp.multiply(sd[uncertain], rows)
            slack = (margins[uncertain] - 1 + xi[uncertain]) / self.tau_
            constraints.append(cp.SOC(slack, spread, axis=1))
        objective = cp.Minimize(0.5 * cp.sum_squares(R @ c) + self.C * cp.sum(xi))
        self._solve(cp, cp.Problem(objective, constraints))
        self.coef_ = np.asarray(c.value, dtype=np.float64)
        self.intercept_ = float(b.value)

    def _fit_linear_form(self, cp: Any, X: np.ndarray, signs: np.ndarray) -> None:
        density = self.density if self.density is not None else "gaussian_em"
        self._density = new_density(density)
        declared = _representation_class(self._density)
        # The cones need one conditional covariance per missing pattern.
        if declared is None or not issubclass(declared, GaussianConditionals):
            raise ValueError(
                "form='linear' needs a Gaussian density (conditional covariances); "
                f"got {type(self._density).__name__}. Use density='gaussian_em'."
            )
        d_in = X.shape[1]
        X, self._kept_features = drop_sparse_features(self, X)
        subset_feature_names(self, self._density, self._kept_features)
        self._density.fit(X)
        cond = self._density.conditionals(X)
        n, d = X.shape
        w = cp.Variable(d)
        b = cp.Variable()
        xi = cp.Variable(n, nonneg=True)
        margins = cp.multiply(signs, cond.means @ w + b)
        # Row i's spread ||A_p^(1/2) w_J|| depends only on its pattern p: one
        # epigraph variable per pattern, and one vectorised cone per number of
        # missing entries (per-row cones made cvxpy's compilation dominate).
        n_missing = cond.patterns.sum(axis=1)
        uncertain = n_missing[cond.pattern_index] > 0
        if self.tau_ == 0:
            uncertain[:] = False
        constraints = []
        if uncertain.any():
            spread = cp.Variable(len(cond.patterns), nonneg=True)
            for k in np.unique(n_missing[cond.pattern_index[uncertain]]):
                group = np.flatnonzero(n_missing == k)
                # F_p^T with F_p F_p^T = A_p on the missing block J_p, placed in
                # the J_p columns: ||F_p^T w_J|| = ||A_p^(1/2) w_J||.
                factors = psd_factor(np.stack([cond.covariances[p] for p in group]))
                roots = np.zeros((group.size, k, d))
                for g, p in enumerate(group):
                    J = np.flatnonzero(cond.patterns[p])
                    roots[g][:, J] = factors[g].T
                stacked = cp.reshape(
                    roots.reshape(-1, d) @ w, (group.size, k), order="C"
                )
                constraints.append(cp.SOC(spread[group], stacked, axis=1))
            rows = np.flatnonzero(uncertain)
            constraints.append(
                margins[rows] - 1 + xi[rows]
                >= self.tau_ * spread[cond.pattern_index[rows]]
            )
        idx = np.flatnonzero(~uncertain)
        if idx.size:
            constraints.append(margins[idx] >= 1 - xi[idx])
        objective = cp.Minimize(0.5 * cp.sum_squares(w) + self.C * cp.sum(xi))
        self._solve(cp, cp.Problem(objective, constraints))
        self.coef_ = np.zeros(d_in)
        self.coef_[self._kept_columns()] = np.asarray(w.value, dtype=np.float64)
        self.intercept_ = float(b.value)

    def _kept_columns(self) -> Any:
        kept = getattr(self, "_kept_features", None)
        return slice(None) if kept is None else kept

    def decision_function(self, X: Any) -> np.ndarray:
        """Signed score; positive means ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with NaN where missing.

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        X = validate_missing_data(self, X, reset=False)
        if self.form == "kernel":
            # In row chunks: K(X, X_fit_) has a column per training row.
            scores = np.empty(X.shape[0])
            for rows in row_chunks(X.shape[0], self.X_fit_.shape[0]):
                K = np.asarray(self.kernel_(X[rows], self.X_fit_), dtype=np.float64)
                scores[rows] = K @ self.coef_ + self.intercept_
            return scores
        kept = self._kept_columns()
        means = self._density.conditionals(np.ascontiguousarray(X[:, kept])).means
        return means @ self.coef_[kept] + self.intercept_

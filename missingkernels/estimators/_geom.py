"""Peer methods of the genRBF paper's Table 2 that classify incomplete rows directly.

``geom`` -- Chechik, Heitz, Elidan, Abbeel, Koller, "Max-margin classification
of data with absent features", JMLR 9 (2008) 1-21 (NIPS 2006: "Max-margin
classification of incomplete data") -- is implemented here as
:class:`GeomSVC`: the iterative algorithm of the non-separable case with the
kernel form over the features valid in each instance.

``karma`` -- Hazan, Livni, Mansour, "Classification with low rank and missing
data", ICML 2015 -- is **not** implemented. The only copy of that paper
reachable while this module was written holds its title page, abstract and
introduction, not the method section. The definition of their kernel over the
observed entries (how the degree parameter ``gamma`` and the regularisation
``lambda`` enter it, its normalisation) and the way the genRBF authors combined
it with an RBF kernel (their sec. 5.1 tunes C, the RBF width and
``gamma_karma in {1, 2}``) could therefore not be checked against the text. A
kernel rebuilt from memory would be a guess labelled as the paper's method,
so it is left out rather than registered under the paper's name.

What :class:`GeomSVC` follows. The stored copies of both versions of the geom
paper reachable here also hold only the abstract and introduction, so the
formulas below are the paper's as recalled, checked against what those pages
state (each instance's margin in its own subspace; the non-separable case a
non-convex objective optimised iteratively with a QP per step) and against the
documentation of an independent implementation (Shark's
``MissingFeatureSvmTrainer``: weights ``s_i`` in the quadratic term of a
standard C-SVM, initialised to 1 and updated from the instance norms). No
equation or section numbers are cited, as none could be checked.

* Instance margin. Row ``i`` has valid (observed) features ``F_i``;
  ``w^(i)`` is ``w`` restricted to ``F_i``. The margin of row ``i`` is measured
  in its own subspace, ``y_i (w^(i) . x_i + b) / ||w^(i)||``, not with
  ``||w||``.
* Non-separable case. With ``s_i = ||w^(i)|| / ||w||`` the soft-margin problem
  is ``min 1/2 ||w||^2 + C sum_i xi_i`` subject to
  ``y_i (w . x_i / s_i + b) >= 1 - xi_i``, ``xi_i >= 0``. It is not convex
  because ``s`` depends on ``w``. For fixed ``s`` it is the standard SVM QP on
  the rescaled rows ``x_i / s_i``; its dual has the Gram matrix
  ``K_jk / (s_j s_k)`` and the usual constraint ``sum_i alpha_i y_i = 0``, so
  libsvm solves it exactly (``SVC(kernel="precomputed")``).
* Iterative algorithm. Start from ``s_i = 1``; solve the QP; set
  ``s_i = ||w^(i)|| / ||w||`` from its solution; repeat. The objective is not
  convex and convergence is not guaranteed; Shark's documentation reports 2
  to 5 iterations as enough. The bias is not rescaled by ``s_i`` (the QP is
  the standard one on ``x_i / s_i``).
* Kernels. With ``w = sum_j alpha_j y_j phi(x_j) / s_j``,
  ``||w||^2 = sum_jk alpha_j alpha_k y_j y_k K(x_j, x_k) / (s_j s_k)`` and
  ``||w^(i)||^2`` is the same sum with every inner product taken over the
  features valid in instance ``i`` only. An absent entry contributes nothing
  to ``w . x`` in the paper's linear formulation, i.e. it counts as zero; the
  nonlinear kernel is applied to the rows so represented, and "over the
  features valid in instance i" means on the rows projected onto ``F_i``:
  ``K_i(x_j, x_k) = K(P_i x_j, P_i x_k)``, for the RBF kernel
  ``exp(-gamma sum_{f in F_i} (x_jf - x_kf)^2)`` with absent entries zero.
  For the linear kernel this is exactly ``||w^(i)||``. The other reading --
  the RBF over the features valid in *both* rows compared -- was rejected: it
  is not positive semi-definite (on 60 x 3 Gaussian rows with 20% MCAR its
  Gram matrix had an eigenvalue of -4.2 and gave ``||w||^2 < 0``), so
  ``s_i`` would be undefined. Here every ``K_i`` is a kernel, so every norm
  is real. Use on standardised features (as the comparison runner does):
  zero is then the training mean.
* A new row ``x`` is classified like a training row, by the sign of
  ``w . x / s(x) + b`` with ``s(x) = ||w^(x)|| / ||w||``.
* A row with no valid feature has no subspace and no instance margin. Its
  ``s`` is kept at 1, so it enters as the row of zeros (the training mean
  after standardisation) of the plain SVM. The formula would give
  ``||w^(i)|| = |sum_j beta_j|``, which is 0 after the first QP (its equality
  constraint): flooring ``s_i`` scaled that row's kernel entries by up to
  ``10^12``, and libsvm's solve of that QP took orders of magnitude longer
  than the others (banknote, 7 such rows of 1372 under 30% MAR).
* The same holds, and ``s`` is kept at 1, for a row whose valid features all
  take one value over the support vectors (ionosphere's second attribute is
  0 in every row): its projections of them coincide, so the formula gives
  the same ``|sum_j beta_j|`` as for a row with nothing valid. At 70% MNAR a
  few ionosphere rows are valid on that attribute only; floored, they made
  libsvm run for over 10 minutes on 187 rows. A row whose ``s`` comes out
  below ``1e-6`` (no weight of ``w`` in its subspace, up to rounding) keeps
  ``s = 1`` too, and each libsvm solve stops after LIBSVM's own cap of
  ``10^7`` iterations with a ``ConvergenceWarning``, rather than hang.
"""

from __future__ import annotations

import functools
from numbers import Integral, Real
from typing import Any, ClassVar, NamedTuple

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC

from .._numerics import scale_gamma
from .._sklearn_compat import Interval, StrOptions, _fit_context
from .._validation import (
    drop_sparse_features,
    validate_missing_data,
    validate_missing_data_xy,
)
from ..conditionals import group_patterns
from ._base import BinaryClassifierMixin, KernelParamsMixin, removed_rows_error
from ._svm_base import _SVM_CONSTRAINTS

#: A row whose scaling s_i comes out below this has no weight of w in its
#: subspace (0 up to rounding): like a row with no valid feature, it keeps
#: s_i = 1 (flooring it scaled its kernel entries by up to 1 / s_i^2).
_MIN_SCALING = 1e-6

#: Iteration cap of each libsvm solve, upstream LIBSVM's own (sklearn's SVC
#: has none): an ill-conditioned QP then ends with a ConvergenceWarning
#: instead of hanging.
_LIBSVM_MAX_ITER = 10_000_000


@functools.cache
def _geom_loops() -> Any:
    """The compiled loop (:mod:`._geom_compiled`): numba loads on the first
    fit, not when the package is imported."""
    from . import _geom_compiled

    return _geom_compiled


class _PatternTree(NamedTuple):
    """The missingness patterns of some rows, laid out for the compiled loop."""

    order: np.ndarray  # feature order of the tree
    which: np.ndarray  # pattern of each row
    n_patterns: int
    program: np.ndarray  # :func:`._geom_compiled.pattern_program`


def _pattern_tree(X: np.ndarray) -> _PatternTree:
    # ||w^(i)|| depends on row i only through its pattern F_i. Features on
    # which the rows mostly agree come first: the prefix tree of the sorted
    # patterns then shares more partial products.
    missing = np.isnan(X)
    order = np.argsort(-np.abs((~missing).mean(axis=0) - 0.5), kind="stable")
    # Complementing reverses the lexicographic order: the valid-feature
    # patterns, sorted as the program needs them, are the missing ones
    # complemented, last first.
    missing_patterns, index = group_patterns(missing[:, order])
    n_patterns = missing_patterns.shape[0]
    patterns = ~missing_patterns[::-1]
    program = _geom_loops().pattern_program(patterns)
    return _PatternTree(order, n_patterns - 1 - index, n_patterns, program)


class GeomSVC(BinaryClassifierMixin, BaseEstimator):
    """Geometric-margin SVM of Chechik et al. for rows with absent features.

    Binary classifier. Every training row keeps its margin in the subspace of
    its own valid (non-NaN) features: the SVM QP is solved on rows rescaled by
    ``1 / s_i`` with ``s_i = ||w^(i)|| / ||w||``, and ``s`` is updated from the
    solution, alternately, up to ``max_iter`` QPs (see the module docstring
    for the formulas). Each QP is :class:`sklearn.svm.SVC` with
    ``kernel="precomputed"`` on ``K_jk / (s_j s_k)``; absent entries count as
    zero (as in the paper's linear formulation) and ``||w^(i)||`` applies the
    kernel to the rows projected onto the features valid in row ``i``.

    Parameters
    ----------
    C : float, default=1.0
        Penalty of the slack variables.
    kernel : {"rbf", "linear"}, default="rbf"
        ``exp(-gamma ||x - y||^2)`` or ``x . y``, absent entries set to zero
        (for ``||w^(i)||``: on the rows projected onto the instance's valid
        features).
    gamma : float or "scale", default="scale"
        RBF width. ``"scale"`` uses ``1 / (n_features * v)`` with ``v`` the
        variance of the observed training entries. Ignored by the linear
        kernel.
    max_iter : int, default=5
        Most QPs solved (1: the plain SVM with ``s_i = 1``).
    tol : float, default=1e-3
        Stop once no scaling changes by more than ``tol`` between QPs.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    svm_ : sklearn.svm.SVC
        The last QP (on the rescaled Gram matrix).
    scalings_ : ndarray of shape (n_samples,)
        The ``s_i`` of the last QP (1 for complete rows).
    scaling_history_ : list of ndarray
        ``s`` of every QP solved, in order (the first is all ones).
    n_iter_ : int
        QPs solved.
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors among the training rows.
    dual_coef_ : ndarray of shape (1, n_SV)
        ``y_j alpha_j`` of the last QP (as in :class:`sklearn.svm.SVC`).
    intercept_ : ndarray of shape (1,)
    gamma_ : float
        The RBF width used.
    weight_norm_ : float
        ``||w||`` of the last QP.
    support_vectors_ : ndarray of shape (n_SV, n_features - len(dropped_features_))
        The training rows that are support vectors, NaN where missing,
        without the dropped features: the only training rows the fitted
        model keeps (``w`` and ``||w^(i)||`` are sums over them;
        ``scalings_`` has a number per training row, a norm that depends on
        the row's missing pattern, not its values).
    shape_fit_ : tuple of int
        The shape of the training table, ``(n_samples, n_features)``.
    dropped_features_ : ndarray of int
        0-based indices of the features observed in fewer than
        ``missingkernels.MIN_OBSERVED`` (2) training rows, dropped at fit
        (named in a ``DroppedFeaturesWarning``); new rows' values in them
        are ignored.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined only when X has feature names that are all strings.

    Notes
    -----
    Cost per QP: the libsvm solve plus ``||w^(i)||`` for every missingness
    pattern (it depends on row ``i`` only through ``F_i``). For the RBF kernel
    the projected kernel is a product of one factor per valid feature, so
    ``n_SV^2 / 2`` exponentials per feature suffice, and the sorted patterns
    share their partial products in a prefix tree (compiled with numba; see
    ``benchmarks/bench_geom.py``, which measures it against one exponential
    per pattern and pair, with identical scores). The linear kernel needs
    ``O(n_features)`` per pattern.
    ``decision_function`` computes ``s(x)`` for the patterns of the new rows
    the same way. On complete rows every ``s_i`` is 1 and the model is the
    RBF (or linear) :class:`~sklearn.svm.SVC`.

    References
    ----------
    .. [1] G. Chechik, G. Heitz, G. Elidan, P. Abbeel, D. Koller. "Max-margin
       classification of data with absent features", Journal of Machine
       Learning Research 9 (2008) 1-21: the instance margin, the
       non-separable objective with ``s_i = ||w^(i)|| / ||w||``, its iterative
       optimisation and the kernel form.
    .. [2] G. Chechik, G. Heitz, G. Elidan, P. Abbeel, D. Koller. "Max-margin
       classification of incomplete data", NIPS 19 (2006) 233-240.
    .. [3] M. Śmieja, Ł. Struski, J. Tabor, M. Marzec. "Generalized RBF
       kernel for incomplete data", Knowledge-Based Systems 173 (2019),
       sec. 5.1, peer "geom".

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.estimators import GeomSVC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3))
    >>> y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> X[rng.random(X.shape) < 0.2] = np.nan
    >>> clf = GeomSVC(C=4.0, gamma=0.3).fit(X, y)
    >>> clf.predict(X[:4]).shape
    (4,)
    >>> complete = ~np.isnan(X).any(axis=1)
    >>> bool(np.allclose(clf.scalings_[complete], 1.0))
    True
    >>> len(clf.scaling_history_) == clf.n_iter_
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        "C": _SVM_CONSTRAINTS["C"],
        "kernel": [StrOptions({"rbf", "linear"})],
        "gamma": KernelParamsMixin._kernel_parameter_constraints["gamma"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0.0, None, closed="left")],
    }

    def __init__(
        self,
        *,
        C: float = 1.0,
        kernel: str = "rbf",
        gamma: Any = "scale",
        max_iter: int = 5,
        tol: float = 1e-3,
    ) -> None:
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.max_iter = max_iter
        self.tol = tol

    # -- kernel pieces -------------------------------------------------------

    def _cross_kernel(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """``K(a, b)`` for all row pairs, absent entries set to zero."""
        A0, B0 = np.nan_to_num(A, nan=0.0), np.nan_to_num(B, nan=0.0)
        if self.kernel == "linear":
            return A0 @ B0.T
        return rbf_kernel(A0, B0, gamma=self.gamma_)

    def _instance_norms(
        self, X: np.ndarray, beta: np.ndarray, tree: _PatternTree | None = None
    ) -> np.ndarray:
        """``||w^(i)||`` for every row of ``X``, ``w = sum_j beta_j phi(x_j)``.

        ``beta`` is indexed like the support vectors ``support_vectors_``;
        every inner product is taken over the features valid in row ``i``.
        ``tree``: the patterns of ``X`` (:func:`_pattern_tree`), when known.
        """
        S0 = np.nan_to_num(self.support_vectors_, nan=0.0)
        if self.kernel == "linear":
            w = beta @ S0
            return np.sqrt(~np.isnan(X) @ (w * w))
        if tree is None:
            tree = _pattern_tree(X)
        # K(P_i x_j, P_i x_k) is 1 on the diagonal and symmetric.
        pairs = _geom_loops().pattern_forms(
            np.ascontiguousarray(S0[:, tree.order].T),
            np.ascontiguousarray(beta, dtype=np.float64),
            tree.program,
            float(self.gamma_),
            tree.n_patterns,
        )
        out = 2.0 * pairs + beta @ beta
        return np.sqrt(np.maximum(out, 0.0))[tree.which]

    def _scalings(self, X: np.ndarray, tree: _PatternTree | None = None) -> np.ndarray:
        beta = self.dual_coef_[0] / self.scalings_[self.support_]
        s = self._instance_norms(X, beta, tree) / self.weight_norm_
        # No subspace: no valid feature, or none on which the support vectors
        # differ (the formula then gives |sum_j beta_j| for the RBF kernel, as
        # for a row with nothing valid), or none that carries weight of w.
        S0 = np.nan_to_num(self.support_vectors_, nan=0.0)
        varies = np.ptp(S0, axis=0) > 0.0
        no_subspace = ~(~np.isnan(X) & varies).any(axis=1)
        s[no_subspace | (s < _MIN_SCALING)] = 1.0
        return s

    # -- fit / predict -------------------------------------------------------

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any) -> GeomSVC:
        """Alternate the SVM QP on rescaled rows and the update of ``s``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows; NaN marks a missing (absent) entry.
        y : array-like of shape (n_samples,)
            Two classes.

        Returns
        -------
        self : GeomSVC
        """
        X, y = validate_missing_data_xy(
            self, X, y, task="classification", require_observed_columns=False
        )
        self._binary_signs(y)
        self.shape_fit_ = X.shape
        X, self._kept_features = drop_sparse_features(self, X)
        if isinstance(self.gamma, str):  # "scale"
            self.gamma_ = scale_gamma(X)
        else:
            self.gamma_ = float(self.gamma)
        K = self._cross_kernel(X, X)
        tree = _pattern_tree(X) if self.kernel == "rbf" else None
        s = np.ones(X.shape[0])
        self.scaling_history_ = []
        for it in range(1, self.max_iter + 1):
            self.scaling_history_.append(s)
            self.svm_ = SVC(
                kernel="precomputed",
                C=self.C,
                max_iter=max(_LIBSVM_MAX_ITER, 100 * X.shape[0]),
            ).fit(K / np.outer(s, s), y)
            self.scalings_ = s
            self.support_ = self.svm_.support_
            # The model keeps these rows only, not the training table.
            self.support_vectors_ = X[self.support_]
            self.dual_coef_ = self.svm_.dual_coef_
            self.intercept_ = self.svm_.intercept_
            self.n_iter_ = it
            sup = self.support_
            beta = self.dual_coef_[0] / s[sup]
            self.weight_norm_ = float(
                np.sqrt(max(beta @ K[np.ix_(sup, sup)] @ beta, 0.0))
            )
            if it == self.max_iter or self.weight_norm_ <= 0.0:
                break
            s_new = self._scalings(X, tree)
            if np.max(np.abs(s_new - s)) <= self.tol:
                break
            s = s_new
        return self

    @property
    def X_fit_(self) -> Any:
        """Removed: the model keeps its support vectors, not every training
        row (AttributeError saying what replaced it)."""
        raise removed_rows_error(self)

    def __setstate__(self, state: dict) -> None:
        # A model pickled when it kept every training row (X_fit_): keep the
        # support vectors (the same numbers), drop the rest.
        state = dict(state)
        rows = state.pop("X_fit_", None)
        if rows is not None:
            n_features = state.get("n_features_in_", rows.shape[1])
            state.setdefault("shape_fit_", (rows.shape[0], n_features))
            state.setdefault("support_vectors_", rows[state["support_"]])
        super().__setstate__(state)

    def decision_function(self, X: Any) -> np.ndarray:
        """``w . x / s(x) + b``; positive means ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with NaN where missing.

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        X = validate_missing_data(self, X, reset=False)
        kept = getattr(self, "_kept_features", None)
        if kept is not None:
            X = np.ascontiguousarray(X[:, kept])
        sup = self.support_
        K = self._cross_kernel(X, self.support_vectors_) / self.scalings_[sup]
        if self.weight_norm_ > 0.0:
            s_x = self._scalings(X)
        else:
            s_x = np.ones(X.shape[0])
        return (K @ self.dual_coef_[0]) / s_x + self.intercept_[0]

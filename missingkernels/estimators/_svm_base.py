"""What the support vector machines on expected kernels share (SVC and SVR)."""

from __future__ import annotations

import time
import warnings
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator

from .._config import format_bytes, gram_memory, max_gram_memory
from .._dask_blocks import is_dask_collection
from .._fit_cache import fit_kernel_gram
from .._registry import get_kernel
from .._sklearn_compat import Interval, StrOptions
from .._validation import (
    check_sample_weight,
    dropped_features,
    validate_missing_data,
    validate_missing_data_xy,
    warn_unscaled,
)
from ._base import (
    KernelParamsMixin,
    cross_gram_on_support,
    fit_density_report,
    forget_training_rows,
    pass_feature_names,
    progress,
    removed_rows_error,
    report,
    row_chunks,
    training_digest,
    with_settings,
)
from ._features import feature_memory
from ._out_of_core import blocks_memory, blocks_why
from ._scaling import (
    apply_standardization,
    fit_standardization,
)

# What SVC and SVR share: the kernel's, table's, density's and SVM's parameters.
_SVM_CONSTRAINTS: dict = {
    **KernelParamsMixin._kernel_parameter_constraints,
    **KernelParamsMixin._table_parameter_constraints,
    **KernelParamsMixin._density_parameter_constraints,
    "C": [Interval(Real, 0.0, None, closed="neither")],
    "tol": [Interval(Real, 0.0, None, closed="neither")],
    "max_iter": [Interval(Integral, -1, None, closed="left")],
    "shrinking": ["boolean"],
    "route": [StrOptions({"auto", "exact", "features"})],
    "n_kernel_features": [Interval(Integral, 1, None, closed="left")],
    "n_components": [
        Interval(Integral, 1, None, closed="left"),
        StrOptions({"deprecated"}),
    ],
    "random_state": ["random_state"],
    "cache_size": [Interval(Real, 0, None, closed="neither")],
    "standardize": ["boolean"],
    "verbose": ["verbose"],
}


class _BaseMissingKernelSVM(KernelParamsMixin, BaseEstimator):
    _task: ClassVar[str] = ""

    route: str
    n_kernel_features: int
    n_components: Any
    random_state: Any
    standardize: bool
    verbose: Any
    features_: Any
    x_center_: np.ndarray | None
    x_scale_: np.ndarray | None

    def _choose_route(self, n: int, d: int) -> tuple[str, int | None, str]:
        """The route for ``n`` training rows of ``d`` columns, the number of
        kernel features (None on the exact route) and why, for the verbose
        output.

        ``"auto"`` takes the exact route while its Gram fits the memory limit,
        else the features route if its features fit; if neither does, one
        error says what each needs (the features of wide rows may need more
        than the Gram refused).
        """
        if self.route == "exact":
            return "exact", None, "route='exact' as set"
        if self.route == "features":
            m = self._n_kernel_features()
            why = "route='features' as set"
            if self._fits_features_in_blocks(n, d, m):
                why += f"; {m} features of {n} rows exceed the memory limit"
                why += ": " + blocks_why(n, m)
            return "features", m, why
        limit, source = max_gram_memory()
        within = f"the limit of {format_bytes(limit)} ({source})"
        gram = gram_memory(n, n)
        if gram <= limit:
            why = f"the {n} x {n} Gram matrix needs about {format_bytes(gram)}"
            return "exact", None, f"{why}, within {within}"
        m = self._n_kernel_features()
        features = feature_memory(n, d, m)
        if features > limit and self._fits_features_in_blocks(n, d, m):
            return "features", m, self._in_blocks_why(n, d, m, gram, within)
        if features <= limit:
            why = (
                f"the {n} x {n} Gram matrix would need about {format_bytes(gram)}, "
                f"above {within}; {m} kernel features need about "
                f"{format_bytes(features)} (an approximate kernel: random "
                "Fourier features, or Nystroem landmarks)"
            )
            return "features", m, why
        fits = limit // feature_memory(n, d, 1)
        lower = (
            f"lower n_kernel_features (at most {fits} fit; the error of random "
            "features falls like 1/sqrt(n_kernel_features)), "
            if fits >= 1
            else ""
        )
        raise ValueError(
            f"{type(self).__name__}(route='auto'): neither route fits {within}. "
            f"The exact route's {n} x {n} Gram matrix needs about "
            f"{format_bytes(gram)} (the matrix and one working copy); the "
            f"features route's n_kernel_features={m} features of {n} rows of "
            f"{d} columns need about {format_bytes(features)}. Fit on a random "
            f"subsample, {lower}or, if the machine has the memory, raise the "
            "limit with missingkernels.set_config(max_gram_memory=...) (to at "
            f"least {format_bytes(min(gram, features))})."
        )

    def _calibrates(self) -> bool:
        """Whether the fit scores held-out rows (then it needs the rows in
        memory, and no route runs in blocks)."""
        return False

    def _fits_features_in_blocks(self, n: int, d: int, m: int) -> bool:
        """Whether the features route fits ``n`` rows in memory blockwise
        (its features above the memory limit, never all held at once, if
        the blocks fit)."""
        limit = max_gram_memory()[0]
        return (
            not self._calibrates()
            and feature_memory(n, d, m) > limit
            and blocks_memory(n, m) <= limit
        )

    def _in_blocks_why(self, n: int, d: int, m: int, gram: int, within: str) -> str:
        return (
            f"the {n} x {n} Gram matrix would need about {format_bytes(gram)} "
            f"and {m} kernel features of every row about "
            f"{format_bytes(feature_memory(n, d, m))}, above {within}; "
            + blocks_why(n, m)
        )

    def _one_width(self) -> bool:
        """Whether the kernel's numeric columns share one width ``gamma``
        (its base kernel's ``one_width``, as a plugin kernel may declare):
        the case for the scale warning."""
        base = getattr(get_kernel(self._kernel_name()), "_base_kernel_class", None)
        return bool(getattr(base, "one_width", False))

    def _n_kernel_features(self) -> int:
        """``n_kernel_features``, or the deprecated ``n_components`` if set."""
        if isinstance(self.n_components, str):
            return int(self.n_kernel_features)
        warnings.warn(
            f"{type(self).__name__}: n_components was renamed n_kernel_features "
            "(the number of kernel features of the 'features' route, not the "
            "density's components: those are density_params={'n_components': "
            "k}, or density__n_components in a grid); n_components will be "
            "removed in 0.3. Its value is used for n_kernel_features.",
            FutureWarning,
            stacklevel=4,
        )
        return int(self.n_components)

    def _make_linear(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _fits_blocks(self, X: Any) -> bool:
        """Whether ``fit`` takes ``X`` out of core (the features route on a
        dask collection); otherwise a dask collection is read into memory."""
        return (
            self.route == "features"
            and not self._calibrates()
            and is_dask_collection(X)
        )

    @with_settings
    def _fit_svm(self, X: Any, y: Any, sample_weight: Any = None) -> Any:
        if self._fits_blocks(X):
            from ._out_of_core import fit_svm_blocks

            return fit_svm_blocks(self, X, y, sample_weight)
        # The kernel drops the features too sparse to learn from.
        X, y = validate_missing_data_xy(
            self, X, y, task=self._task, require_observed_columns=False,
            encode=self._encode,
        )  # fmt: skip
        sample_weight = check_sample_weight(self, sample_weight, X.shape[0])
        nominal = getattr(self, "is_nominal_", None)
        if self._standardizes():
            self.x_center_, self.x_scale_ = fit_standardization(X, nominal)
        else:
            self.x_center_ = self.x_scale_ = None
            if self._one_width():
                warn_unscaled(self, X, nominal)
        # A new array in either case: the fitted model never keeps (and so
        # never sees later edits of) the caller's array.
        X = apply_standardization(X, self.x_center_, self.x_scale_)
        y = self._fit_target(y)
        self.route_, m, why = self._choose_route(*X.shape)
        report(self, f"route '{self.route_}': {why}")
        if self.route_ == "features":
            assert m is not None
            # An earlier exact fit's support vectors are rows of another table.
            for name in ("support_", "support_vectors_", "_support_diagonal"):
                self.__dict__.pop(name, None)
            return self._fit_features(X, y, sample_weight, m)
        self.features_ = None
        started = time.perf_counter()
        # The kernel and its training Gram depend on the rows and the kernel's
        # parameters, not on C: a grid search over C reuses them (fit cache).
        self.kernel_, K = fit_kernel_gram(self._make_kernel(), X)
        fit_density_report(self, self.kernel_, started)
        report(
            self,
            f"kernel {self.kernel_name_} and its {len(K)} x {len(K)} training "
            f"Gram matrix in {time.perf_counter() - started:.2f} s",
        )
        self.dropped_features_ = dropped_features(self.kernel_)
        started = time.perf_counter()
        self.svm_ = self._make_svm().fit(K, y, sample_weight=sample_weight)
        report(
            self,
            f"{type(self.svm_).__name__} fitted in "
            f"{time.perf_counter() - started:.2f} s: "
            f"{int(np.sum(self.svm_.n_iter_))} iterations, "
            f"{len(self.svm_.support_)} support vectors",
        )
        # Only the support vectors are needed to score rows: the model keeps
        # them, not the training table (a pickle must not give it back).
        self.support_ = self.svm_.support_
        self.support_vectors_ = X[self.support_]
        self.shape_fit_ = X.shape
        # k(x_i, x_i) as trained (the kernel's diagonal convention), for
        # scoring the training rows themselves exactly as the SVM saw them;
        # a digest recognises them.
        self._support_diagonal = K[self.support_, self.support_].copy()
        self._fit_digest = training_digest(X)
        forget_training_rows(self.kernel_)
        self.dual_coef_ = self.svm_.dual_coef_
        self.intercept_ = self.svm_.intercept_
        self.n_iter_ = self.svm_.n_iter_
        return self

    def _make_features(self, m: int) -> Any:
        """The unfitted expected kernel features of the features route: this
        estimator's kernel, density and parameters, ``m`` features."""
        from ._features import ExpectedKernelFeatures

        nominal = getattr(self, "is_nominal_", None)
        features = ExpectedKernelFeatures(
            kernel=self._kernel_name(),
            density=self.density,
            density_params=self.density_params,
            # The rows are coded already: say which columns are nominal.
            nominal_features=None if nominal is None else nominal,
            handle_unknown=self.handle_unknown,
            gamma=self.gamma,
            metric=self.metric,
            kernel_params=self.kernel_params,
            n_components=m,
            random_state=self.random_state,
            verbose=self.verbose,
        )
        # Its memory refusals speak of this estimator's parameter.
        features._size_owner = type(self).__name__
        features._size_param = "n_kernel_features"
        pass_feature_names(self, features)
        return features

    def _fit_features(
        self, X: np.ndarray, y: np.ndarray, sample_weight: Any, m: int
    ) -> Any:
        """The route without a Gram matrix: expected kernel features, then a
        linear SVM on them (its hinge loss and C as the kernel SVM's); above
        the memory limit, in blocks of rows (the squared hinge)."""
        n, d = X.shape
        if self._fits_features_in_blocks(n, d, m):
            from ._out_of_core import fit_svm_in_blocks

            return fit_svm_in_blocks(self, X, y, sample_weight)
        self.features_ = self._make_features(m)
        Z = self.features_.fit_transform(X)
        self.kernel_ = self.features_.kernel_
        self.dropped_features_ = self.features_.dropped_features_
        started = time.perf_counter()
        self.svm_ = self._make_linear().fit(Z, y, sample_weight=sample_weight)
        report(
            self,
            f"{type(self.svm_).__name__} on {Z.shape[1]} features fitted in "
            f"{time.perf_counter() - started:.2f} s: {self.svm_.n_iter_} iterations",
        )
        self.intercept_ = np.atleast_1d(self.svm_.intercept_)
        self.n_iter_ = self.svm_.n_iter_
        self.shape_fit_ = X.shape
        return self

    def _make_svm(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _fit_target(self, y: np.ndarray) -> np.ndarray:
        """The target the SVM is fitted on (the regressor standardises it)."""
        return y

    @property
    def X_fit_(self) -> Any:
        """Removed: the model keeps its support vectors, not every training
        row (AttributeError saying what replaced it)."""
        raise removed_rows_error(self)

    def __setstate__(self, state: dict) -> None:
        # A model pickled when it kept every training row (X_fit_): keep what
        # its predictions read (the same numbers), drop the rows.
        state = dict(state)
        rows = state.pop("X_fit_", None)
        if rows is not None:
            state.setdefault("shape_fit_", rows.shape)
            if state.get("route_") == "exact":
                state.setdefault("support_vectors_", rows[state["support_"]])
                state.setdefault("_fit_digest", training_digest(rows))
        super().__setstate__(state)  # type: ignore[misc]
        if rows is not None:
            forget_training_rows(getattr(self, "kernel_", None))
            features = getattr(self, "features_", None)
            forget_training_rows(getattr(features, "kernel_", None))

    @with_settings
    def _svm_on_new_rows(self, X: Any, method: str) -> np.ndarray:
        """``svm_.<method>`` on ``K(X, X_train)``, in row chunks.

        The Gram handed to libsvm has a column per training row (only the
        support columns are computed, from ``support_vectors_``), so the rows
        are taken in chunks of at most scikit-learn's ``working_memory``:
        predicting a large set never allocates ``n_new x n_train`` at once.
        """
        X = self._standardized_rows(X)
        return self._score_standardized(X, (method,), method)[0]

    def _standardized_rows(self, X: Any) -> np.ndarray:
        """New rows validated, coded and standardised as the training rows."""
        X = validate_missing_data(self, X, reset=False, encode=self._encode)
        if self.x_center_ is not None:
            X = apply_standardization(X, self.x_center_, self.x_scale_)
        return X

    def _score_standardized(
        self, X: np.ndarray, methods: tuple[str, ...], label: str
    ) -> list[np.ndarray]:
        """``svm_.<method>`` for each of ``methods`` on rows already
        standardised, from one kernel evaluation per chunk of rows (``label``
        names the work in the verbose progress lines)."""
        applies = [getattr(self.svm_, method) for method in methods]
        if self.route_ == "features":
            Z = self.features_.transform(X)
            return [np.asarray(apply(Z)) for apply in applies]
        # Scoring the training rows (an array of the same values): each
        # support vector meets itself as in training, not as an independent
        # copy of its row.
        n_train = self.shape_fit_[0]
        training = X.shape == tuple(self.shape_fit_) and (
            training_digest(X) == self._fit_digest
        )
        parts: list[list[np.ndarray]] = [[] for _ in methods]
        chunks = list(row_chunks(X.shape[0], n_train))
        with progress(self, X.shape[0], len(chunks), label) as advance:
            for rows in chunks:
                K = cross_gram_on_support(
                    self.kernel_, X[rows], self.support_vectors_, self.support_, n_train
                )
                if training:
                    own = (self.support_ >= rows.start) & (self.support_ < rows.stop)
                    sv = self.support_[own]
                    K[sv - rows.start, sv] = self._support_diagonal[own]
                for part, apply in zip(parts, applies, strict=True):
                    part.append(apply(K))
                advance(K.shape[0])
        return [np.concatenate(part) for part in parts]

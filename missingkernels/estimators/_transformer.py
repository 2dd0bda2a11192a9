"""The expected kernel as a scikit-learn transformer."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)

from .._dask_blocks import is_dask_collection, rowwise_on_dask
from .._sklearn_compat import _fit_context
from .._validation import dropped_features, validate_missing_data
from ._base import KernelParamsMixin, with_settings
from ._scaling import apply_standardization, fit_standardization


class MissingKernelTransformer(
    ClassNamePrefixFeaturesOutMixin, KernelParamsMixin, TransformerMixin, BaseEstimator
):
    """Map rows with NaN to their kernel values against the training rows.

    ``fit(X)`` fits the kernel (and its density) on the training rows;
    ``transform(X_new)`` returns the cross Gram ``K(X_new, X_train)`` and
    ``fit_transform(X)`` the training Gram ``K(X)`` (with the kernel's diagonal
    convention). Any estimator taking ``kernel="precomputed"`` (``SVC``,
    ``KernelRidge``, ``KernelPCA``, ``SpectralClustering`` with
    ``affinity="precomputed"``) can then follow it in a ``Pipeline``.

    Parameters
    ----------
    kernel : str, default="auto"
        A registry kernel name; ``"auto"``: ``"mixed_rbf"`` when the table has
        nominal columns, else ``"genrbf"``.
    density : str, density estimator or None, default=None
        Registry name, unfitted density object or None for the kernel's default.
    density_params : dict, default=None
        Parameters of the density given by name (or of the kernel's
        default); also settable as ``density__<param>`` (see
        :class:`MissingKernelSVC`).
    nominal_features : "from_dtype", None, array-like or bool mask, default="from_dtype"
        The nominal columns of X (see :class:`MissingKernelSVC`).
    handle_unknown : {"missing", "error"}, default="missing"
        Unseen categories in new rows (see :class:`MissingKernelSVC`).
    gamma : float or "scale", default="scale"
        RBF width; ignored by kernels without one.
    metric : {"euclidean", "mahalanobis"}, default="euclidean"
        Scalar product of the RBF kernels; ignored by other kernels.
    kernel_params : dict, default=None
        Other parameters of the kernel.
    standardize : bool, default=True
        Standardise the numeric columns on the observed entries of the
        training rows before the kernel (missing entries stay missing,
        nominal columns unchanged; see :class:`MissingKernelSVC`). ``gamma``
        is then a width in standard deviations. False: the columns as given.
    random_state : int, RandomState instance or None, default=None
        Seeds a density built by name (``density`` a registry name, or the
        kernel's default) that has a ``random_state`` of its own, unless
        ``density_params`` sets it: the same rows then give the same matrix
        (see :class:`MissingKernelSVC`). A density object keeps its own.

    Attributes
    ----------
    kernel_ : object
        The fitted kernel; ``kernel_.density_`` is the fitted density.
    dropped_features_ : ndarray of int
        0-based indices of the features observed in fewer than
        ``missingkernels.MIN_OBSERVED`` (2) training rows, which the kernel
        dropped (named in a ``DroppedFeaturesWarning``;
        ``feature_names_in_[dropped_features_]`` names them). New rows'
        values in them are ignored.
    X_fit_ : ndarray of shape (n_samples, n_features)
        The training rows (the columns of every transformed matrix): a copy,
        standardised when ``standardize=True``. Kept whole, as
        :class:`sklearn.decomposition.KernelPCA` keeps its ``X_fit_``:
        ``transform`` is ``K(X, X_fit_)``, a column per training row, and the
        estimator that reads the matrix may use any of them. A pickled
        transformer therefore holds the training table (and the kernel its
        training rows' conditionals, which ``transform`` reuses); use
        :class:`MissingKernelSVC` or :class:`MissingKernelSVR`, which keep
        only their support vectors, to ship a model without it.
    x_center_, x_scale_ : ndarray of shape (n_features,) or None
        The training mean and standard deviation of each column's observed
        entries (0 and 1 for nominal columns); None when
        ``standardize=False``.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    References
    ----------
    .. [1] M. Śmieja, Ł. Struski, J. Tabor, M. Marzec. "Generalized RBF
       kernel for incomplete data", Knowledge-Based Systems 173 (2019).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.kernel_ridge import KernelRidge
    >>> from sklearn.pipeline import make_pipeline
    >>> from missingkernels.estimators import MissingKernelTransformer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3))
    >>> y = X[:, 0] ** 2
    >>> X[rng.random(X.shape) < 0.2] = np.nan
    >>> model = make_pipeline(MissingKernelTransformer(gamma=0.5),
    ...                       KernelRidge(kernel="precomputed", alpha=0.1))
    >>> model.fit(X[:40], y[:40]).predict(X[40:]).shape
    (20,)
    """

    x_center_: np.ndarray | None
    x_scale_: np.ndarray | None

    _parameter_constraints: ClassVar[dict] = {
        **KernelParamsMixin._kernel_parameter_constraints,
        **KernelParamsMixin._table_parameter_constraints,
        **KernelParamsMixin._density_parameter_constraints,
        "standardize": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        kernel: str = "auto",
        density: Any = None,
        density_params: dict | None = None,
        nominal_features: Any = "from_dtype",
        handle_unknown: str = "missing",
        gamma: Any = "scale",
        metric: str = "euclidean",
        kernel_params: dict | None = None,
        standardize: bool = True,
        random_state: Any = None,
    ) -> None:
        self.kernel = kernel
        self.density = density
        self.density_params = density_params
        self.nominal_features = nominal_features
        self.handle_unknown = handle_unknown
        self.gamma = gamma
        self.metric = metric
        self.kernel_params = kernel_params
        self.standardize = standardize
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=False)
    @with_settings
    def fit(self, X: Any, y: Any = None) -> MissingKernelTransformer:
        """Fit the kernel's density on the training rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows, NaN where missing; a dask Array or DataFrame is
            read into memory (the transformer keeps its training rows: its
            output has one column per training row).
        y : None
            Ignored.

        Returns
        -------
        self : MissingKernelTransformer
        """
        if is_dask_collection(X):
            X = X.compute()
        X = validate_missing_data(
            self, X, reset=True, min_samples=2, require_observed_columns=False,
            encode=self._encode,
        )  # fmt: skip
        if self._standardizes():
            nominal = getattr(self, "is_nominal_", None)
            self.x_center_, self.x_scale_ = fit_standardization(X, nominal)
        else:
            self.x_center_ = self.x_scale_ = None
        # A new array either way: never a reference to the caller's rows.
        X = apply_standardization(X, self.x_center_, self.x_scale_)
        self.kernel_ = self._make_kernel().fit(X)
        self.dropped_features_ = dropped_features(self.kernel_)
        self.X_fit_ = X
        self._n_features_out = X.shape[0]
        return self

    @with_settings
    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> np.ndarray:
        """Fit, then return the training Gram matrix ``K(X)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows, NaN where missing.
        y : None
            Ignored.

        Returns
        -------
        K : ndarray of shape (n_samples, n_samples)
        """
        self.fit(X, y)
        return np.asarray(self.kernel_(self.X_fit_), dtype=np.float64)

    @rowwise_on_dask
    @with_settings
    def transform(self, X: Any) -> np.ndarray:
        """Return the cross Gram matrix ``K(X, X_train)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with NaN where missing; or a dask Array or DataFrame of
            numeric columns, read block of rows by block of rows.

        Returns
        -------
        K : ndarray of shape (n_samples, n_train_samples), or dask Array
        """
        X = validate_missing_data(self, X, reset=False, encode=self._encode)
        if self.x_center_ is not None:
            X = apply_standardization(X, self.x_center_, self.x_scale_)
        return np.asarray(self.kernel_(X, self.X_fit_), dtype=np.float64)

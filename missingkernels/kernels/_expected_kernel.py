"""The machinery shared by every expected kernel: density, validation, calls."""

from __future__ import annotations

from typing import Any, ClassVar, cast

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._config import check_gram_memory
from .._dask_blocks import is_dask_collection
from .._fit_cache import fit_density, rows_digest
from .._registry import list_densities, list_representations, new_density
from .._sklearn_compat import HasMethods, StrOptions, available_if
from .._validation import (
    MIN_OBSERVED,
    Encoder,
    drop_sparse_features,
    subset_feature_names,
    validate_missing_data,
)
from ._base_kernel import BaseKernel
from ._expectation_table import DrawOptions, expected, supported


def _representation_class(density: Any) -> type | None:
    """The conditionals class a density declares (a registered tag or a class)."""
    tag = getattr(density, "representation", None)
    if isinstance(tag, type):
        return tag
    entry = list_representations().get(tag) if isinstance(tag, str) else None
    return None if entry is None else cast(type, entry.factory)


def _density_domain(density: Any) -> str | None:
    """What a density's draws are (``"numeric"``, ``"nominal"``), if it says."""
    domain = getattr(density, "domain", None)
    return domain if isinstance(domain, str) else None


def _fitted_elsewhere(density: Any) -> bool:
    """Whether a density parameter was fitted before the kernel's fit
    (``sklearn.frozen.FrozenEstimator``), on all the columns."""
    from sklearn.frozen import FrozenEstimator

    return isinstance(density, FrozenEstimator)


def _has_variance(kernel: BaseExpectedKernel) -> bool:
    return kernel._base_kernel_class.has_variance


class BaseExpectedKernel(BaseEstimator):
    """Base class of the expected kernels: a base kernel averaged over a density.

    ``K(x, y) = E[k(X, Y)]`` with ``X``, ``Y`` independent draws of the
    missing entries of ``x`` and ``y`` from the conditionals of a density
    fitted on the training rows (``docs/theory.rst``, "Expected kernels").
    A subclass is a preset: a base kernel class (class attribute
    ``_base_kernel_class``, built from the preset's parameters of the same
    names), whether it is normalised (``_normalised``), and a default density.
    The expectation comes from the expectation table: the closed-form cell
    for the base kernel and the density's representation, or the average
    over pairs of draws (:func:`make_expected_kernel`).

    ``fit(X)`` fits the density on rows with NaN; ``k(X)`` is the Gram of the
    rows of X with themselves, whose diagonal follows ``diagonal``; ``k(X, Y)``
    the cross Gram, in which every pair is two independent rows (even when a
    row of X equals a row of Y). ``k(X)`` may be called on any rows, not only
    the training rows; it differs from ``k(X, X)`` only on the diagonal.

    Notes
    -----
    ``k(X)`` on the training rows is the training Gram of an SVM; ``k(X)`` on
    other rows is the Gram of those rows under the same fitted density (it is
    never refitted). The RBF kernels run compiled loops (numba); the first
    call in a fresh installation compiles them, later calls and processes
    load them from numba's on-disk cache.

    References
    ----------
    .. [1] H. S. Anderson and M. R. Gupta, "Expected kernel for missing
       features in support vector machines", IEEE Statistical Signal
       Processing Workshop, 2011, eq. (1).

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels import get_kernel
    >>> from missingkernels.kernels import BaseExpectedKernel
    >>> X = np.array([[0.0, 1.0], [1.0, np.nan], [2.0, 2.5], [0.5, 0.0]])
    >>> k = get_kernel("expected_rbf", gamma=0.5).fit(X)
    >>> isinstance(k, BaseExpectedKernel)
    True
    >>> K, K_cross = k(X), k(X, X)
    >>> bool(np.allclose(K - np.diag(np.diag(K)), K_cross - np.diag(np.diag(K_cross))))
    True
    >>> float(K[1, 1]), bool(K_cross[1, 1] < 1.0)
    (1.0, True)
    """

    #: The base kernel class; the preset's parameters of the same names build it.
    _base_kernel_class: ClassVar[type[BaseKernel]]
    #: Whether the kernel is divided by the self-similarities (genRBF).
    _normalised: ClassVar[bool] = False
    #: The coding of a mixed-type table's nominal columns, applied before the
    #: validation (``staticmethod(encode_table)`` for the kernels that take
    #: tables); None for numeric input only.
    _encode: ClassVar[Encoder | None] = None

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "density": [str, HasMethods(["fit", "conditionals"])],
        "diagonal": [StrOptions({"same_draw", "independent"})],
    }

    density: Any
    diagonal: str

    # -- fitting ---------------------------------------------------------------
    def _make_base_kernel(self) -> BaseKernel:
        cls = self._base_kernel_class
        names = cls._get_param_names()
        return cls(**{name: getattr(self, name) for name in names})

    def _density_label(self) -> str:
        if isinstance(self.density, str):
            return repr(self.density)
        return type(self.density).__name__

    def _check_supported(
        self, base: BaseKernel, conditionals: type | None, density: Any
    ) -> None:
        domain = _density_domain(density)
        if conditionals is None or supported(base, conditionals, domain) is not None:
            return
        names = []
        for name, entry in list_densities().items():
            cls = _representation_class(entry.factory)
            if cls is not None and supported(base, cls, _density_domain(entry.factory)):
                names.append(name)
        tags = {e.factory: n for n, e in list_representations().items()}
        shown = tags.get(conditionals, conditionals.__name__)
        values = getattr(conditionals, "domain", None) or domain
        what = f" of {values} values" if values else ""
        raise ValueError(
            f"{type(self).__name__} ({type(base).kernel_name()} base kernel) "
            f"cannot use the density {self._density_label()}, whose conditionals "
            f"are {shown!r}{what}: the kernel takes "
            f"{' or '.join(base.domains)} values, and the expectation table has "
            "no closed form for this pair. Compatible densities: "
            f"{', '.join(repr(n) for n in names) or '(none registered)'}."
        )

    def _draw_options(self) -> DrawOptions:
        """The draws of the fallback: the preset's ``n_draws``/``random_state``."""
        defaults = DrawOptions()
        return DrawOptions(
            n_draws=getattr(self, "n_draws", defaults.n_draws),
            random_state=getattr(self, "random_state", defaults.random_state),
        )

    def fit(self, X: Any, y: Any = None) -> BaseExpectedKernel:
        """Fit the density on the training rows, then the base kernel.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows, NaN where an entry is missing.
        y : None
            Ignored; present for scikit-learn compatibility.

        Returns
        -------
        self : object
            The fitted kernel; ``density_`` is the fitted density and
            ``base_kernel_`` the fitted base kernel, both on the training
            columns except ``dropped_features_``.

        Notes
        -----
        A feature observed in fewer than
        :data:`~missingkernels._validation.MIN_OBSERVED` (2) training rows
        carries no information about its distribution: it is dropped, listed
        in ``dropped_features_`` (0-based indices; ``feature_names_in_``
        names them) and named in one
        :class:`~missingkernels.DroppedFeaturesWarning`. The kernel is then
        the kernel of the table without these columns; their values in new
        rows are ignored. A density fitted on its own (``get_density(...)
        .fit(X)``) refuses such columns with an error instead; a density
        fitted before (``sklearn.frozen.FrozenEstimator``) keeps every
        column it was fitted on, and so does the kernel.
        """
        self._validate_params()
        if is_dask_collection(X) and self._base_kernel_class.fits_blocks():
            return self._fit_blocks(X)
        # (a base kernel without an out-of-core fit reads the rows in memory)
        X = validate_missing_data(
            self, X, reset=True, min_samples=2, require_observed_columns=False,
            encode=self._encode,
        )  # fmt: skip
        # Features observed in fewer than MIN_OBSERVED training rows carry no
        # information: the density and base kernel never see them, nor their
        # values in new rows (dropped_features_, one warning naming them).
        if _fitted_elsewhere(self.density):
            # Fitted on every column (e.g. out of core): the kernel uses them.
            self.dropped_features_ = np.zeros(0, dtype=np.intp)
            self._kept_features = None
        else:
            X, self._kept_features = drop_sparse_features(self, X)
        base = self._make_base_kernel()
        density = new_density(self.density)
        # Messages of the density and base kernel name the columns as this
        # kernel does (the names of a DataFrame, or those of an SVM above).
        subset_feature_names(self, density, self._kept_features)
        subset_feature_names(self, base, self._kept_features)
        density = self._pass_nominal(density)
        self._check_supported(base, _representation_class(density), density)
        # The same rows and density parameters give the same fit: a copy of
        # an earlier one when the fit cache holds it (e.g. at every gamma
        # and C of a grid search). y is passed explicitly:
        # sklearn.frozen.FrozenEstimator (a density fitted elsewhere, e.g.
        # out of core on dask) requires it.
        density = fit_density(density, X)
        self.density_ = density
        train = self._check_conditionals(base, density.conditionals(X))
        base.fit(X, train, density)
        self.base_kernel_ = base
        for name, value in base.fitted_attributes().items():
            setattr(self, name, value)
        # k(X_train) and k(X, X_train) reuse the training conditionals.
        self._train_cache = (rows_digest(X), train)
        self._second_cache: tuple[tuple[Any, ...], Any] | None = None
        return self

    def _fit_blocks(self, X: Any) -> BaseExpectedKernel:
        """:meth:`fit` on the row blocks of a dask collection, out of core.

        The rows are checked in one pass (:func:`summarise_columns`), the
        density is fitted on the blocks (the EM densities reduce per-block
        sufficient statistics; other densities read the rows into memory, as
        their own ``fit`` does), then the base kernel
        (:meth:`BaseKernel.fit_blocks`). No training rows are kept.
        """
        from .._dask_blocks import as_row_blocks, summarise_columns
        from .._validation import warn_dropped_features

        name = type(self).__name__
        X = as_row_blocks(self, X, reset=True, purpose=f"{name}.fit")
        summary = summarise_columns(
            self, X, min_samples=2, require_observed_columns=False
        )
        dropped = np.flatnonzero(summary.counts < MIN_OBSERVED)
        if _fitted_elsewhere(self.density):
            dropped = dropped[:0]  # fitted on every column: the kernel uses them
        self.dropped_features_ = dropped
        self._kept_features = None
        if dropped.size:
            shape = (summary.n_rows, X.shape[1])
            warn_dropped_features(self, dropped, summary.counts[dropped], shape)
            self._kept_features = np.setdiff1d(np.arange(X.shape[1]), dropped)
            X = X[:, self._kept_features]
        base = self._make_base_kernel()
        density = new_density(self.density)
        subset_feature_names(self, density, self._kept_features)
        subset_feature_names(self, base, self._kept_features)
        density = self._pass_nominal(density)
        self._check_supported(base, _representation_class(density), density)
        if not _fitted_elsewhere(self.density):
            # The EM densities reduce per-block sums; others read the rows.
            density.fit(X)
        self.density_ = density
        base.fit_blocks(X, density)
        self.base_kernel_ = base
        for key, value in base.fitted_attributes().items():
            setattr(self, key, value)
        # No training rows are kept: k(X_train) computes their conditionals.
        self.__dict__.pop("_train_cache", None)
        self.__dict__.pop("_second_cache", None)
        return self

    def _pass_nominal(self, density: Any) -> Any:
        """Tell the density which of its columns are nominal (category codes),
        or refuse a density that would model them as numbers."""
        nominal = getattr(self, "is_nominal_", None)
        if nominal is None or not np.any(nominal):
            return density
        kept = getattr(self, "_kept_features", None)
        nominal = np.asarray(nominal, dtype=bool)
        nominal = nominal if kept is None else nominal[kept]
        if getattr(type(density), "_encode", None) is not None:
            # A density that takes tables has nominal_features.
            if isinstance(density.get_params(deep=False)["nominal_features"], str):
                density.set_params(nominal_features=nominal)  # was "from_dtype"
            return density
        domain = getattr(_representation_class(density), "domain", None)
        domain = domain or _density_domain(density)
        if domain == "nominal" and nominal.all():
            return density  # category codes for a categorical density
        from .._validation import describe_features

        cols = np.flatnonzero(self.is_nominal_)
        raise ValueError(
            f"{type(self).__name__}: {describe_features(self, cols)} "
            f"{'is' if len(cols) == 1 else 'are'} nominal, but the density "
            f"{self._density_label()} models numeric values (it would treat "
            "category codes as numbers). Use density='latent_class', which "
            "models numeric and nominal columns together."
        )

    def _kept_columns(self, X: np.ndarray) -> np.ndarray:
        """The columns of validated rows that the density and base kernel
        were fitted on (all but ``dropped_features_``)."""
        kept = getattr(self, "_kept_features", None)
        return X if kept is None else np.ascontiguousarray(X[:, kept])

    def _check_conditionals(self, base: BaseKernel, conditionals: Any) -> Any:
        from ..conditionals import BaseConditionals

        if not isinstance(conditionals, BaseConditionals):
            raise TypeError(
                "A density's conditionals(X) must return a representation of "
                "missingkernels.conditionals (a BaseConditionals subclass, e.g. "
                "GaussianConditionals, MixtureConditionals, SampleConditionals or "
                f"CategoricalConditionals); got {type(conditionals).__name__}."
            )
        self._check_supported(base, type(conditionals), self.density_)
        return conditionals

    # -- evaluation --------------------------------------------------------------
    def _conditionals(self, X: Any, *, keep: bool = False) -> Any:
        """Validated rows and their conditionals: the training rows' kept from
        fit; with ``keep``, the last second argument's kept too (the support
        vectors an SVM predicts against, chunk after chunk), so that the
        kernel's per-row work on them is done once."""
        X = validate_missing_data(
            self, X, reset=False, min_samples=0, encode=self._encode
        )
        X = self._kept_columns(X)
        fingerprint = rows_digest(X)
        for cache in (
            getattr(self, "_train_cache", None),
            getattr(self, "_second_cache", None),
        ):
            if cache is not None and cache[0] == fingerprint:
                return X, cache[1]
        conditionals = self._check_conditionals(
            self.base_kernel_, self.density_.conditionals(X)
        )
        if keep:
            self._second_cache = (fingerprint, conditionals)
        return X, conditionals

    def _evaluate(self, what: str, X: Any, Y: Any) -> np.ndarray:
        check_is_fitted(self, "density_")
        # Imported here: the RBF family's presets subclass this module's class.
        from .rbf.engine import serial_blas

        with serial_blas:
            return self._evaluate_serial_blas(what, X, Y)

    def _evaluate_serial_blas(self, what: str, X: Any, Y: Any) -> np.ndarray:
        same = Y is X
        X, cx = self._conditionals(X)
        if Y is None or same:
            # k(X, X) pairs independent rows, also on the diagonal.
            diagonal = self.diagonal if Y is None else "independent"
            cy, n_y = None, X.shape[0]
        else:
            diagonal = "independent"
            Y, cy = self._conditionals(Y, keep=True)
            n_y = Y.shape[0]
        if X.shape[0] == 0 or n_y == 0:
            return np.zeros((X.shape[0], n_y))
        check_gram_memory(type(self).__name__, X.shape[0], n_y)
        # Overflow is reported below as a ValueError, not as numpy warnings.
        with np.errstate(over="ignore", invalid="ignore"):
            K = expected(
                what,
                self.base_kernel_,
                cx,
                cy,
                diagonal,
                normalised=self._normalised,
                options=self._draw_options(),
            )
        K = np.asarray(K, dtype=np.float64)
        if not np.all(np.isfinite(K)):
            raise ValueError(
                f"{type(self).__name__}: the expected kernel has non-finite "
                "entries: a value, a squared distance or gamma is too large for "
                "float64. Rescale the features (e.g. with "
                "sklearn.preprocessing.StandardScaler) or lower gamma."
            )
        return K

    def __call__(self, X: Any, Y: Any = None) -> np.ndarray:
        """Return the Gram matrix of the expected kernel.

        Parameters
        ----------
        X : array-like of shape (n_samples_X, n_features)
            Rows with NaN where missing.
        Y : array-like of shape (n_samples_Y, n_features), optional
            Other rows. If None, the Gram of X with itself, whose diagonal
            follows ``diagonal``; otherwise every pair is two independent rows.

        Returns
        -------
        K : ndarray of shape (n_samples_X, n_samples_Y), dtype float64
        """
        return self._evaluate("gram", X, Y)

    @available_if(_has_variance)
    def variance(self, X: Any, Y: Any = None) -> np.ndarray:
        """Return the elementwise variance of the random kernel ``k(X_i, Y_j)``.

        Over the same draws as :meth:`__call__` (the same diagonal
        convention): with ``diagonal="same_draw"`` the diagonal of the
        variance of ``k(X)`` is the variance of ``k(X_i, X_i)``.

        Parameters
        ----------
        X : array-like of shape (n_samples_X, n_features)
        Y : array-like of shape (n_samples_Y, n_features), optional

        Returns
        -------
        V : ndarray of shape (n_samples_X, n_samples_Y), dtype float64
            Non-negative.
        """
        return self._evaluate("variance", X, Y)

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.requires_fit = True
        return tags


def make_expected_kernel(
    base_kernel: type[BaseKernel],
    name: str,
    *,
    default_density: str = "gaussian_em",
    normalised: bool = False,
    default_diagonal: str = "same_draw",
    n_draws: int = 100,
    doc: str | None = None,
) -> type[BaseExpectedKernel]:
    """Make the expected-kernel preset of a base kernel (a new class).

    The preset's parameters are the base kernel's (same names and defaults),
    then ``density``, ``diagonal``, ``n_draws`` and ``random_state`` (the
    draws used where the expectation table has no closed form for the
    density's representation). Register the class through the hook
    ``missingkernels_register_kernels`` to use it by name, e.g. in
    :class:`~missingkernels.MissingKernelSVC` (``kernel=<name>``, with
    ``gamma`` forwarded when the base kernel has one).

    Parameters
    ----------
    base_kernel : BaseKernel subclass
    name : str
        The class name, e.g. ``"ExpectedLaplacianKernel"``.
    default_density : str, default="gaussian_em"
    normalised : bool, default=False
        Divide by ``sqrt(E k(X, X') E k(Y, Y'))`` (as genRBF does for the RBF).
    default_diagonal : {"same_draw", "independent"}, default="same_draw"
    n_draws : int, default=100
        Default number of draws per row for the draws fallback.
    doc : str, optional
        The class docstring.

    Returns
    -------
    cls : type
        A :class:`BaseExpectedKernel` subclass.

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.kernels import Linear, make_expected_kernel
    >>> Mine = make_expected_kernel(Linear, "MyExpectedLinearKernel")
    >>> X = np.array([[0.0, 1.0], [1.0, np.nan], [2.0, 2.5], [0.5, 0.0]])
    >>> k = Mine().fit(X)
    >>> sorted(k.get_params())
    ['density', 'diagonal', 'n_draws', 'random_state']
    >>> k(X).shape
    (4, 4)
    """
    import inspect
    from numbers import Integral

    from .._sklearn_compat import Interval

    if not (isinstance(base_kernel, type) and issubclass(base_kernel, BaseKernel)):
        raise TypeError(
            "make_expected_kernel needs a subclass of "
            f"missingkernels.kernels.BaseKernel, got {base_kernel!r}."
        )
    base_params = [
        p
        for p in inspect.signature(base_kernel.__init__).parameters.values()
        # object.__init__ (a base kernel without parameters) takes *args, **kwargs.
        if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    own = {"density", "diagonal", "n_draws", "random_state"}
    clash = sorted(own & {p.name for p in base_params})
    if clash:
        raise ValueError(
            f"The base kernel {base_kernel.__name__} has parameters {clash}, "
            "which the expected kernel uses itself; rename them."
        )
    keyword = inspect.Parameter.KEYWORD_ONLY
    params = [p.replace(kind=keyword) for p in base_params] + [
        inspect.Parameter("density", keyword, default=default_density),
        inspect.Parameter("diagonal", keyword, default=default_diagonal),
        inspect.Parameter("n_draws", keyword, default=n_draws),
        inspect.Parameter("random_state", keyword, default=0),
    ]
    names = [p.name for p in params]
    defaults = {p.name: p.default for p in params}

    def __init__(self: Any, **kwargs: Any) -> None:
        unknown = sorted(set(kwargs) - set(names))
        if unknown:
            raise TypeError(
                f"{name}.__init__() got unexpected keyword arguments {unknown}; "
                f"its parameters are {names}."
            )
        for key in names:
            setattr(self, key, kwargs.get(key, defaults[key]))

    __init__.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY), *params]
    )
    constraints = {
        **BaseExpectedKernel._parameter_constraints,
        **getattr(base_kernel, "_parameter_constraints", {}),
        "n_draws": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }
    namespace = {
        "__init__": __init__,
        "__doc__": doc
        or (
            f"The expected {base_kernel.kernel_name()} kernel: the base kernel "
            "averaged over the conditionals of the missing entries."
        ),
        "__module__": getattr(base_kernel, "__module__", __name__),
        "_base_kernel_class": base_kernel,
        "_normalised": normalised,
        "_parameter_constraints": constraints,
    }
    return type(name, (BaseExpectedKernel,), namespace)

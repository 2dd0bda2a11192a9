"""The machinery shared by every expected kernel: density, validation, calls."""

from __future__ import annotations

import hashlib
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._available_if import available_if
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._registry import list_densities, new_density
from .._validation import validate_missing_data
from ._expectations import BaseKernelExpectation, representation_of


def _compatible_densities(representations: tuple[str, ...]) -> list[str]:
    """Registered densities whose representation is one of ``representations``."""
    return [
        name
        for name, entry in list_densities().items()
        if getattr(entry.factory, "representation", None) in representations
    ]


def _fingerprint(X: np.ndarray) -> tuple:
    """Shape and a digest of the bytes of validated rows (NaN included)."""
    data = np.ascontiguousarray(X)
    return data.shape, hashlib.blake2b(data.tobytes(), digest_size=16).digest()


def _has_variance(kernel: BaseExpectedKernel) -> bool:
    return kernel._expectation.has_variance


class BaseExpectedKernel(BaseEstimator):
    """Base class of the expected kernels: a base kernel averaged over a density.

    ``K(x, y) = E[k(X, Y)]`` with ``X``, ``Y`` independent draws of the
    missing entries of ``x`` and ``y`` from the conditionals of a density
    fitted on the training rows (DESIGN.md section 1). Subclasses choose the
    base kernel (class attribute ``_expectation``) and the default density.

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
    call in a fresh installation compiles them (about 20 s), later calls and
    processes load them from numba's on-disk cache.

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

    _expectation: ClassVar[BaseKernelExpectation]

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "density": [str, HasMethods(["fit", "conditionals"])],
        "diagonal": [StrOptions({"same_draw", "independent"})],
    }

    density: Any
    diagonal: str

    # -- fitting ---------------------------------------------------------------
    def _make_density(self) -> Any:
        expectation = self._expectation
        density = new_density(self.density)
        label = (
            repr(self.density)
            if isinstance(self.density, str)
            else type(self.density).__name__
        )
        representation = getattr(density, "representation", None)
        if (
            representation is not None
            and representation not in expectation.representations
        ):
            self._raise_incompatible(label, representation)
        return density

    def _raise_incompatible(self, label: str, representation: str) -> None:
        expectation = self._expectation
        names = _compatible_densities(expectation.representations)
        raise ValueError(
            f"{type(self).__name__} ({expectation.name} base kernel) cannot use "
            f"the density {label}, whose conditionals are {representation!r}: "
            "its expectation is defined for the representations "
            f"{', '.join(expectation.representations)}. Compatible densities: "
            f"{', '.join(repr(n) for n in names) or '(none registered)'}."
        )

    def _check_representation(self, conditionals: Any) -> Any:
        representation = representation_of(conditionals)
        if representation not in self._expectation.representations:
            label = (
                repr(self.density)
                if isinstance(self.density, str)
                else type(self.density).__name__
            )
            self._raise_incompatible(label, representation)
        return conditionals

    def fit(self, X: Any, y: Any = None) -> BaseExpectedKernel:
        """Fit the density on the training rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows, NaN where an entry is missing.
        y : None
            Ignored; present for scikit-learn compatibility.

        Returns
        -------
        self : object
            The fitted kernel; ``density_`` is the fitted density.
        """
        self._validate_params()
        X = validate_missing_data(self, X, reset=True, min_samples=2)
        density = self._make_density()
        density.fit(X)
        self.density_ = density
        train = self._check_representation(density.conditionals(X))
        self._expectation.fit(self, X, train)
        # k(X_train) and k(X, X_train) reuse the training conditionals.
        self._train_cache = (_fingerprint(X), train)
        return self

    # -- evaluation --------------------------------------------------------------
    def _conditionals(self, X: Any) -> Any:
        X = validate_missing_data(self, X, reset=False, min_samples=0)
        cache = getattr(self, "_train_cache", None)
        if cache is not None and cache[0] == _fingerprint(X):
            return X, cache[1]
        return X, self._check_representation(self.density_.conditionals(X))

    def _evaluate(self, what: str, X: Any, Y: Any) -> np.ndarray:
        check_is_fitted(self, "density_")
        same = Y is X
        X, cx = self._conditionals(X)
        if Y is None or same:
            # k(X, X) pairs independent rows, also on the diagonal.
            diagonal = self.diagonal if Y is None else "independent"
            cy, n_y = None, X.shape[0]
        else:
            diagonal = "independent"
            Y, cy = self._conditionals(Y)
            n_y = Y.shape[0]
        if X.shape[0] == 0 or n_y == 0:
            return np.zeros((X.shape[0], n_y))
        method = getattr(self._expectation, what)
        return np.asarray(method(self, cx, cy, diagonal), dtype=np.float64)

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

"""The base class of base kernels: classical kernels on complete rows, as
small parameter objects.

A base kernel holds its parameters (``gamma``, ``metric``, ...), fits its own
state on the training rows (``gamma_`` for ``gamma="scale"``, the metric
covariance) and evaluates ``k`` on complete rows (:meth:`BaseKernel.pairwise`).
Its expectations over each representation of conditionals are cells of the
expectation table (:mod:`._expectation_table`); any representation that can sample works
with it through the average over pairs of draws. Each built-in base kernel
lives in its family's home with its cells and presets (:mod:`.rbf`,
:mod:`._linear`, :mod:`._matching`, :mod:`._polynomial`, :mod:`._mixed`).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator

__all__ = ["BaseKernel"]


def mask_matching_factor(
    missing_a: np.ndarray, missing_b: np.ndarray, weight: float
) -> np.ndarray | None:
    """``(1 - u) + u / d sum_v 1[a_v missing = b_v missing]`` for all row
    pairs, None for ``u = 0``.

    Simple matching of the missingness masks: a kernel (positive
    semi-definite: an inner product of ``[m, 1 - m]`` plus a constant), 1 for
    two rows with the same mask, so a kernel times it is a kernel with the
    same diagonal.
    """
    u = float(weight)
    if u == 0:
        return None
    ma = np.asarray(missing_a, dtype=np.float64)
    mb = np.asarray(missing_b, dtype=np.float64)
    same = ma @ mb.T + (1.0 - ma) @ (1.0 - mb).T
    return (1.0 - u) + u * same / ma.shape[1]


class BaseKernel(BaseEstimator):
    """Base class of the base kernels ``k(x, y)`` on complete rows.

    Subclasses store their parameters in ``__init__`` (scikit-learn style),
    implement :meth:`pairwise` and, when they have fitted state, :meth:`fit`.
    ``has_variance`` says whether the random kernel's variance is offered
    (closed form where a cell gives it, else over draws).

    Examples
    --------
    A Laplacian kernel, usable with every density through draws:

    >>> import numpy as np
    >>> from missingkernels.kernels import BaseKernel, make_expected_kernel
    >>> class Laplacian(BaseKernel):
    ...     def __init__(self, gamma=1.0):
    ...         self.gamma = gamma
    ...     def pairwise(self, A, B):
    ...         return np.exp(-self.gamma * np.abs(A[:, None] - B[None]).sum(-1))
    >>> ExpectedLaplacian = make_expected_kernel(Laplacian, "ExpectedLaplacianKernel")
    >>> X = np.array([[0.0, 1.0], [1.0, np.nan], [2.0, 2.5], [0.5, 0.0]])
    >>> ExpectedLaplacian(gamma=0.5, n_draws=20).fit(X)(X).shape
    (4, 4)
    """

    #: Short name used in messages.
    name: ClassVar[str] = ""
    #: Whether the variance of ``k(X, Y)`` is offered.
    has_variance: ClassVar[bool] = True
    #: The domains of the rows it applies to (see
    #: :attr:`missingkernels.conditionals.BaseConditionals.domain`).
    domains: ClassVar[tuple[str, ...]] = ("numeric",)
    #: Whether numeric columns share one length scale (one ``gamma`` for all):
    #: columns on very different scales then make the kernel ignore some of
    #: them, and the estimators warn when they are not standardised.
    one_width: ClassVar[bool] = False

    def fit(self, X: np.ndarray, train: Any, density: Any = None) -> BaseKernel:
        """Fit the kernel's own state.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            The validated training rows, NaN where missing.
        train : BaseConditionals
            The conditionals of the training rows under the fitted density.
        density : density estimator, optional
            The fitted density.

        Returns
        -------
        self : object
        """
        return self

    @classmethod
    def fits_blocks(cls) -> bool:
        """Whether :meth:`fit_blocks` fits the kernel out of core: it has no
        fitted state, or its own ``fit_blocks``. Expected kernels over the
        others read a dask collection into memory."""
        return cls.fit is BaseKernel.fit or cls.fit_blocks is not BaseKernel.fit_blocks

    def fit_blocks(self, X: Any, density: Any) -> BaseKernel:
        """Fit the kernel's own state on the row blocks of a dask array.

        The out-of-core :meth:`fit`: the same state from sums over blocks of
        rows, never all the rows at once. Kernels without fitted state need
        nothing; the others say so.

        Parameters
        ----------
        X : dask Array of shape (n_samples, n_features)
            The validated training rows, NaN where missing.
        density : density estimator
            The density, fitted on the same rows.

        Returns
        -------
        self : object
        """
        if type(self).fit is BaseKernel.fit:
            return self
        raise NotImplementedError(
            f"The {type(self).kernel_name()} base kernel is not fitted out of core "
            "yet: load the rows in memory (X.compute()) or take an RBF kernel."
        )

    def pairwise(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """``k(a_i, b_j)`` for complete rows, shape ``(len(A), len(B))``."""
        raise NotImplementedError

    def missingness_factor(
        self, missing_a: np.ndarray, missing_b: np.ndarray
    ) -> np.ndarray | None:
        """A factor on the rows' missingness masks that multiplies ``k``, or
        None (the default) when the kernel has none.

        The masks are observed, so the factor multiplies every expectation
        of the kernel as it is. A kernel with a factor takes the masks in
        :meth:`pairwise` as ``missing_a`` and ``missing_b`` and applies it
        there too, so that the kernel averaged over draws is the one whose
        expectation the table gives.

        Parameters
        ----------
        missing_a, missing_b : ndarray of shape (n_a, n_features), (n_b, n_features)
            True where an entry of the row is missing.

        Returns
        -------
        factor : ndarray of shape (n_a, n_b) or None
        """
        return None

    def diagonal(self, A: np.ndarray) -> np.ndarray:
        """``k(a_i, a_i)`` for complete rows, shape ``(len(A),)``."""
        out = np.empty(len(A))
        for i in range(len(A)):
            out[i] = self.pairwise(A[i : i + 1], A[i : i + 1])[0, 0]
        return out

    def fitted_attributes(self) -> dict[str, Any]:
        """Fitted attributes the expected kernel exposes as its own."""
        return {}

    def feature_map(self, train: Any, n_components: int, random_state: Any) -> Any:
        """A map of complete rows whose inner products are (or average to) the
        kernel, for :class:`~missingkernels.ExpectedKernelFeatures`.

        Returns an object with ``transform(A)`` and ``n_components``, or None
        when the kernel has none (the features then use Nystroem; raise
        NotImplementedError instead to say why). The
        expectation table's cells average it over the conditionals.

        Parameters
        ----------
        train : BaseConditionals
            The conditionals of the training rows (e.g. for the categories).
        n_components : int
            The number of features wanted (random maps).
        random_state : int, RandomState instance or None
        """
        return None

    @classmethod
    def kernel_name(cls) -> str:
        """The short name used in messages: ``name``, else the class name."""
        return cls.name or cls.__name__


class MissingnessWeightMixin:
    """``missingness_weight`` for a base kernel: ``k`` times
    :func:`mask_matching_factor` of the rows' masks.

    The kernel implements ``_rows(A, B)``, ``k`` without the factor;
    :meth:`pairwise` takes the masks, so that the kernel averaged over draws
    is the one whose expectation the table's cells give (they apply the
    factor through :func:`~._expectation_table.times_missingness_factor`).
    """

    missingness_weight: float

    def _rows(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def pairwise(
        self,
        A: np.ndarray,
        B: np.ndarray,
        missing_a: np.ndarray | None = None,
        missing_b: np.ndarray | None = None,
    ) -> np.ndarray:
        """``k(a_i, b_j)`` for complete rows, times the factor on the rows'
        missingness masks ``missing_a``, ``missing_b`` (see
        :meth:`missingness_factor`; rows without a mask are taken as fully
        observed, whose factor with another such row is 1)."""
        K = self._rows(A, B)
        if missing_a is None and missing_b is None:
            return K
        ma = np.zeros(A.shape, bool) if missing_a is None else missing_a
        mb = np.zeros(B.shape, bool) if missing_b is None else missing_b
        factor = self.missingness_factor(np.asarray(ma, bool), np.asarray(mb, bool))
        if factor is not None:
            K *= factor
        return K

    def missingness_factor(
        self, missing_a: np.ndarray, missing_b: np.ndarray
    ) -> np.ndarray | None:
        """``(1 - u) + u / d sum_v 1[a_v missing = b_v missing]``, None for
        ``u = 0``.

        Simple matching of the masks (positive semi-definite, 1 for equal
        masks): the kernel times it is a kernel with the same diagonal,
        which can use informative missingness (e.g. large values going
        missing) that an average over the missing entries ignores.
        """
        return mask_matching_factor(missing_a, missing_b, self.missingness_weight)

"""The built-in expected kernels: presets of a base kernel, a default density
and a normalisation."""

from __future__ import annotations

from numbers import Real
from typing import Any, ClassVar

from .._sklearn_compat import Interval, StrOptions
from ._base import BaseExpectedKernel
from ._base_kernels import RBF, Linear, Presence, SimpleMatching

_RBF_CONSTRAINTS: dict[str, list[Any]] = {
    **BaseExpectedKernel._parameter_constraints,
    "gamma": [Interval(Real, 0.0, None, closed="neither"), StrOptions({"scale"})],
    "metric": [StrOptions({"euclidean", "mahalanobis"})],
}

_RBF_PARAMETERS = """gamma : float > 0 or "scale", default="scale"
        Width of the base kernel ``exp(-gamma ||x - y||^2)``. ``"scale"`` uses
        ``1 / (n_features * v)`` with ``v`` the variance of the observed
        training entries (as scikit-learn's ``"scale"``, over observed entries
        only); with ``metric="mahalanobis"`` the whitened rows have unit
        variance, so it is ``1 / n_features``. The value used is ``gamma_``.
    metric : {"euclidean", "mahalanobis"}, default="euclidean"
        ``"euclidean"``: the scikit-learn RBF on complete rows.
        ``"mahalanobis"``: ``||x - y||^2`` is replaced by
        ``(x - y)^T S^-1 (x - y)``, i.e. the kernel is taken after whitening
        every row and conditional covariance (the scalar product of the
        genRBF paper's Appendix D and of its authors' experiments). ``S`` is
        the covariance of the fitted Gaussian density; for a mixture or for
        draws, the covariance the density implies on the training rows
        (``mean_i E[X_i X_i^T] - m m^T``). It must be positive definite.
    density : str or density estimator, default="gaussian_em"
        A registry name (see :func:`missingkernels.list_densities`) or an
        unfitted density object (cloned at fit). Gaussian densities give the
        closed form; a mixture the weighted sum over component pairs; draws
        (``"mice"``, ``"iterative"``) the average over pairs of draws."""

_RBF_ATTRIBUTES = """density_ : density estimator
        The density fitted on the training rows (for ``"gaussian_em"``:
        ``density_.mean_``, ``density_.covariance_``).
    gamma_ : float
        The kernel width used.
    metric_covariance_ : ndarray of shape (n_features, n_features) or None
        ``S`` of the Mahalanobis metric; None for the Euclidean one.
    n_features_in_ : int
        Number of features seen during fit."""


class GenRBFKernel(BaseExpectedKernel):
    """genRBF: the normalised expected RBF kernel (Smieja et al.).

    ``K(x, y) = E k(X, Y) / sqrt(E k(X, X') E k(Y, Y'))`` where ``k`` is the
    RBF, ``X``, ``X'`` are independent draws of the missing entries of ``x``
    from the fitted density and ``Y`` likewise for ``y``. With a Gaussian
    density this is the closed form of the paper's eqs. (20)-(21)::

        E k(X, Y) = det(I + 2 gamma (A + B))^(-1/2)
                    exp(-1/2 (a - b)^T (A + B + I / (2 gamma))^-1 (a - b)),
        E k(X, X') = det(I + 4 gamma A)^(-1/2),

    computed exactly, grouped by missing pattern (one small factorisation per
    pair of patterns, never one per pair of rows) and in log space. Complete
    rows give ``exp(-gamma ||x - y||^2)``; the Gram matrix is positive
    semi-definite and has a unit diagonal.

    Parameters
    ----------
    {rbf_parameters}
    diagonal : {{"independent", "same_draw"}}, default="independent"
        The diagonal of ``k(X)``. ``"independent"`` (the paper): a row against
        an independent copy of itself, so ``K(x, x) = 1``. ``"same_draw"``:
        the same draw twice, ``1 / E k(X, X')``. ``k(X, Y)`` is not affected.

    Attributes
    ----------
    {rbf_attributes}

    See Also
    --------
    ExpectedRBFKernel : The same expectation without the normalisation.

    Notes
    -----
    ``__call__`` runs compiled loops (numba) on threads over disjoint output
    rows: ``MISSINGKERNELS_NUM_THREADS`` (else ``OMP_NUM_THREADS``, else all
    available cores) sets their number. Its memory is the output plus
    O(n d + P k^2) for P missing patterns of at most k missing features.
    Its cost is close to ``sklearn.metrics.pairwise.rbf_kernel`` on filled
    rows when rows share few missing patterns and grows with the number of
    distinct patterns; ``benchmarks/bench_kernels.py`` prints the ratio.

    References
    ----------
    .. [1] M. Smieja, L. Struski, J. Tabor and M. Marzec, "Generalized RBF
       kernel for incomplete data", Knowledge-Based Systems 173, 150-162,
       2019, eqs. (20)-(21) and Appendix D.
    .. [2] L. Struski, M. Smieja, B. Zielinski and J. Tabor, "Regression SVM
       for incomplete data".

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.kernels import GenRBFKernel
    >>> X = np.array([[0.0, 1.0], [1.0, np.nan], [2.0, 2.5], [0.5, 0.0]])
    >>> k = GenRBFKernel(gamma=0.5).fit(X)
    >>> K = k(X)
    >>> K.shape, bool(np.allclose(np.diag(K), 1.0))
    ((4, 4), True)
    >>> k(X[:2], X).shape
    (2, 4)
    """

    _base_kernel_class: ClassVar = RBF
    _normalised: ClassVar[bool] = True
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = _RBF_CONSTRAINTS

    def __init__(
        self,
        gamma: float | str = "scale",
        metric: str = "euclidean",
        density: Any = "gaussian_em",
        diagonal: str = "independent",
    ):
        self.gamma = gamma
        self.metric = metric
        self.density = density
        self.diagonal = diagonal


class ExpectedRBFKernel(BaseExpectedKernel):
    """Expected RBF kernel: the RBF averaged over the missing entries (Anderson).

    ``K(x, y) = E k(X, Y)`` with ``k(x, y) = exp(-gamma ||x - y||^2)`` and
    ``X``, ``Y`` independent draws of the missing entries from the fitted
    density (eq. (3) of Anderson & Gupta in scikit-learn's parametrisation)::

        E k(X, Y) = det(I + 2 gamma (A + B))^(-1/2)
                    exp(-1/2 (a - b)^T (A + B + I / (2 gamma))^-1 (a - b))

    for Gaussian conditionals ``N(a, A)``, ``N(b, B)``; computed exactly, by
    pairs of missing patterns and in log space. Complete rows give
    scikit-learn's ``rbf_kernel``. :meth:`variance` gives
    ``Var k = E_{{2 gamma}} k - (E_gamma k)^2`` (the RBF squared is the RBF at
    ``2 gamma``), used by the SOCP estimator.

    Parameters
    ----------
    {rbf_parameters}
    diagonal : {{"same_draw", "independent"}}, default="same_draw"
        The diagonal of ``k(X)``. ``"same_draw"`` (the paper): ``k(x, x) = 1``
        for every draw. ``"independent"``: against an independent copy,
        ``E k(X, X') = det(I + 4 gamma A)^(-1/2)``. ``k(X, Y)`` is not
        affected.

    Attributes
    ----------
    {rbf_attributes}

    See Also
    --------
    GenRBFKernel : The normalised version.

    References
    ----------
    .. [1] H. S. Anderson and M. R. Gupta, "Expected kernel for missing
       features in support vector machines", IEEE Statistical Signal
       Processing Workshop, 2011, eqs. (1), (3), (7).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics.pairwise import rbf_kernel
    >>> from missingkernels.kernels import ExpectedRBFKernel
    >>> X = np.array([[0.0, 1.0], [1.0, 3.0], [2.0, 2.5], [0.5, 0.0]])
    >>> k = ExpectedRBFKernel(gamma=0.3).fit(X)
    >>> bool(np.allclose(k(X), rbf_kernel(X, gamma=0.3)))
    True
    >>> X_missing = np.array([[0.0, np.nan], [1.0, 3.0]])
    >>> k.variance(X_missing, X).shape
    (2, 4)
    """

    _base_kernel_class: ClassVar = RBF
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = _RBF_CONSTRAINTS

    def __init__(
        self,
        gamma: float | str = "scale",
        metric: str = "euclidean",
        density: Any = "gaussian_em",
        diagonal: str = "same_draw",
    ):
        self.gamma = gamma
        self.metric = metric
        self.density = density
        self.diagonal = diagonal


class ExpectedLinearKernel(BaseExpectedKernel):
    """Expected linear kernel: ``E[X^T Y]`` over the missing entries (Anderson & Gupta).

    For independent rows ``E[X_i^T X_j] = m_i^T m_j`` (the conditional means,
    for any density); the same draw twice gives ``||m_i||^2 + tr C_i``
    (eq. (2)). :meth:`variance` gives eq. (6):
    ``tr(A_i A_j) + m_j^T A_i m_j + m_i^T A_j m_i`` for Gaussian conditionals,
    ``2 tr(A_i^2) + 4 m_i^T A_i m_i`` for the same draw.

    Parameters
    ----------
    density : str or density estimator, default="gaussian_em"
        A registry name or an unfitted density object (cloned at fit):
        Gaussian, mixture or draws.
    diagonal : {"same_draw", "independent"}, default="same_draw"
        The diagonal of ``k(X)``: ``E ||X_i||^2`` (the paper) or
        ``||m_i||^2`` (an independent copy). ``k(X, Y)`` is not affected.

    Attributes
    ----------
    density_ : density estimator
        The density fitted on the training rows.
    n_features_in_ : int
        Number of features seen during fit.

    References
    ----------
    .. [1] H. S. Anderson and M. R. Gupta, "Expected kernel for missing
       features in support vector machines", IEEE Statistical Signal
       Processing Workshop, 2011, eqs. (2) and (6).

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.kernels import ExpectedLinearKernel
    >>> X = np.array([[0.0, 1.0], [1.0, 3.0], [2.0, 2.5], [0.5, 0.0]])
    >>> k = ExpectedLinearKernel().fit(X)
    >>> bool(np.allclose(k(X), X @ X.T))
    True
    >>> bool(np.all(k.variance(X) == 0.0))
    True
    """

    _base_kernel_class: ClassVar = Linear

    def __init__(self, density: Any = "gaussian_em", diagonal: str = "same_draw"):
        self.density = density
        self.diagonal = diagonal


class BelancheK1Kernel(BaseExpectedKernel):
    """Belanche K1: the expected simple matching kernel for categorical features.

    ``K1(x, y) = 1/d sum_v E 1[X_v = Y_v]``: per feature, 1[a = b] when both
    entries are observed, ``P_v(a)`` when one is missing, ``sum_c P_v(c)^2``
    when both are (eq. (2)); ``P_v`` the training frequencies of the fitted
    categorical density. Works for more than two values per feature.

    Parameters
    ----------
    density : str or density estimator, default="categorical"
        A registry name or an unfitted density object: per-feature
        categorical, or draws (the average over pairs of draws).
    diagonal : {"independent", "same_draw"}, default="independent"
        The diagonal of ``k(X)``: an independent copy (the paper, ``sum_c
        P_v(c)^2`` for a missing entry) or the same draw (1). ``k(X, Y)`` is
        not affected.

    Attributes
    ----------
    density_ : density estimator
        The density fitted on the training rows.
    n_features_in_ : int
        Number of features seen during fit.

    References
    ----------
    .. [1] L. A. Belanche, V. Kobayashi and T. Aluja, "Handling missing values
       in kernel methods with application to microbiology data",
       Neurocomputing 141, 110-116, 2014, eq. (2).

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.kernels import BelancheK1Kernel
    >>> X = np.array([[1, 0], [1, np.nan], [0, 1], [1, 1]])
    >>> k = BelancheK1Kernel().fit(X)
    >>> k(X[:2]).round(3).tolist()
    [[1.0, 0.667], [0.667, 0.778]]
    """

    _base_kernel_class: ClassVar = SimpleMatching

    def __init__(self, density: Any = "categorical", diagonal: str = "independent"):
        self.density = density
        self.diagonal = diagonal


class BelancheK2Kernel(BaseExpectedKernel):
    """Belanche K2: the expected presence kernel for binary features.

    ``K2(x, y) = 1/d sum_v E[X_v Y_v]`` for features coded 0 (absent) / 1
    (present): only joint presences count. Per feature ``a b`` when both are
    observed, ``P_v(1) b`` when one is missing, ``P_v(1)^2`` when both are
    (eq. (3)).

    Parameters
    ----------
    density : str or density estimator, default="categorical"
        A registry name or an unfitted density object: per-feature
        categorical, or draws. Every value must be 0 or 1.
    diagonal : {"independent", "same_draw"}, default="independent"
        The diagonal of ``k(X)``: an independent copy (the paper, ``P_v(1)^2``
        for a missing entry) or the same draw (``P_v(1)``). ``k(X, Y)`` is not
        affected.

    Attributes
    ----------
    density_ : density estimator
        The density fitted on the training rows.
    n_features_in_ : int
        Number of features seen during fit.

    References
    ----------
    .. [1] L. A. Belanche, V. Kobayashi and T. Aluja, "Handling missing values
       in kernel methods with application to microbiology data",
       Neurocomputing 141, 110-116, 2014, eq. (3).

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels.kernels import BelancheK2Kernel
    >>> X = np.array([[1, 0], [1, np.nan], [0, 1], [1, 1]])
    >>> k = BelancheK2Kernel().fit(X)
    >>> k(X[:2]).round(3).tolist()
    [[0.5, 0.5], [0.5, 0.722]]
    """

    _base_kernel_class: ClassVar = Presence

    def __init__(self, density: Any = "categorical", diagonal: str = "independent"):
        self.density = density
        self.diagonal = diagonal


for _cls in (GenRBFKernel, ExpectedRBFKernel):
    assert _cls.__doc__ is not None
    _cls.__doc__ = _cls.__doc__.format(
        rbf_parameters=_RBF_PARAMETERS, rbf_attributes=_RBF_ATTRIBUTES
    )

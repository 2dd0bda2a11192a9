"""The method line-ups of the ``compare`` command and the vignettes.

Names of registered kernels and baselines (see
:func:`missingkernels.list_kernels` and :func:`missingkernels.list_baselines`),
in the order the results list them.
"""

from __future__ import annotations

__all__ = [
    "FULL_METHODS",
    "IMPUTATION_BASELINES",
    "PAPER_IMPUTATIONS",
    "QUICK_METHODS",
    "QUICK_MIXED_METHODS",
    "default_methods",
]

#: The imputation baselines of the genRBF paper: zero, mean, k-NN, iterative,
#: missForest and GMM imputation before an RBF SVM.
PAPER_IMPUTATIONS = ("zero", "mean", "knn", "iterative", "missforest", "gmm")
#: The paper's imputation baselines and the mean and k-NN imputations with
#: missingness indicators.
IMPUTATION_BASELINES = (*PAPER_IMPUTATIONS, "mean_indicator", "knn_indicator")
#: The quick line-up (``compare --quick``): three imputations and genRBF.
QUICK_METHODS = ("zero", "mean", "knn", "genrbf")
#: The quick line-up on a table with nominal columns: the mixed kernel (the
#: package's for such tables) and histogram gradient boosting (native missing
#: values and categories) join.
QUICK_MIXED_METHODS = ("zero", "mean", "knn", "mixed_rbf", "hgb")
#: The full line-up (``compare``): the imputation baselines, histogram
#: gradient boosting, genRBF and the expected RBF. genRBF is left out of it on
#: tables with nominal columns (:func:`default_methods`): over one-hot codes
#: its Gaussian EM meets a singular covariance (the 0/1 columns of a column
#: sum to 1) and runs to ``max_iter``.
FULL_METHODS = (*IMPUTATION_BASELINES, "hgb", "genrbf", "expected_rbf")


def default_methods(*, quick: bool = False, nominal: bool = False) -> list[str]:
    """The line-up ``compare`` runs when no methods are named.

    Parameters
    ----------
    quick : bool, default=False
        The quick line-up (:data:`QUICK_METHODS`) instead of the full one
        (:data:`FULL_METHODS`).
    nominal : bool, default=False
        The table has nominal columns: the quick line-up for such tables
        (:data:`QUICK_MIXED_METHODS`), or the full one with ``"mixed_rbf"``.

    Returns
    -------
    methods : list of str
        Registry names of kernels and baselines; some may need an optional
        dependency (a caller skips those not registered).

    Examples
    --------
    >>> from missingkernels.experiments import default_methods
    >>> default_methods(quick=True)
    ['zero', 'mean', 'knn', 'genrbf']
    >>> default_methods(nominal=True)[-1]
    'mixed_rbf'
    """
    if nominal:
        return list(QUICK_MIXED_METHODS if quick else (*FULL_METHODS, "mixed_rbf"))
    return list(QUICK_METHODS if quick else FULL_METHODS)

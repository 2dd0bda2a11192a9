"""Import optional dependencies with one error message everywhere.

The core (densities, kernels, SVMs) needs only the required dependencies.
Some features need more, grouped in the extras of ``pyproject.toml``; they are
imported inside the function that needs them, through :func:`import_optional`,
so that a missing one always says what needs it and which extra installs it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: The extras of ``pyproject.toml`` and the modules they provide.
EXTRAS: dict[str, tuple[str, ...]] = {
    "dask": ("dask", "distributed"),
    "experiments": ("joblib", "pandas", "scikit_posthocs", "statsmodels", "tqdm"),
    "plots": ("matplotlib",),
    "r": ("rpy2",),
    "socp": ("cvxpy",),
}

__all__ = ["EXTRAS", "import_optional", "missing_dependency_message"]


def missing_dependency_message(module: str, extra: str, purpose: str) -> str:
    """The message of the ``ImportError`` for a missing optional dependency.

    Parameters
    ----------
    module : str
        The module that could not be imported, e.g. ``"cvxpy"``.
    extra : str
        The extra of ``missingkernels`` that installs it, e.g. ``"socp"``.
    purpose : str
        What needs it, e.g. ``"SOCPSVC.fit"``.

    Returns
    -------
    message : str

    Examples
    --------
    >>> from missingkernels._optional import missing_dependency_message
    >>> print(missing_dependency_message("cvxpy", "socp", "SOCPSVC.fit"))
    SOCPSVC.fit needs cvxpy, which could not be imported.
    Install it with: pip install "missingkernels[socp]"
    """
    _check_extra(module, extra)
    return (
        f"{purpose} needs {module}, which could not be imported.\n"
        f'Install it with: pip install "missingkernels[{extra}]"'
    )


def import_optional(module: str, extra: str, purpose: str) -> ModuleType:
    """Import an optional dependency, or explain how to install it.

    Parameters
    ----------
    module : str
        Dotted module name, e.g. ``"cvxpy"`` or ``"matplotlib.pyplot"``.
    extra : str
        The extra of ``missingkernels`` that provides the module's top-level
        package (a key of :data:`EXTRAS`).
    purpose : str
        What needs the module, named so that a user finds it in their code,
        e.g. ``"SOCPSVC.fit"`` or ``"plot_critical_difference"``.

    Returns
    -------
    module : module
        The imported module.

    Raises
    ------
    ImportError
        If the module cannot be imported, with the message of
        :func:`missing_dependency_message` (the original error is chained as
        its ``__cause__``).
    ValueError
        If ``extra`` is not an extra providing ``module`` (a programming error).

    Examples
    --------
    >>> from missingkernels.utils import import_optional
    >>> import_optional("joblib", "experiments", "run_comparison").__name__
    'joblib'
    """
    message = missing_dependency_message(module, extra, purpose)
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(message) from exc


def _check_extra(module: str, extra: str) -> None:
    top = module.split(".")[0]
    if top not in EXTRAS.get(extra, ()):
        providers = sorted(name for name, mods in EXTRAS.items() if top in mods)
        raise ValueError(
            f"The extra {extra!r} does not provide {top!r} "
            f"(extras providing it: {providers or 'none'})."
        )

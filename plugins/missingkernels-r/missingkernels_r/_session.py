"""The bridge to R: lazy rpy2 import, dependency checks, calls and errors.

Nothing here imports rpy2 at module import time, so listing the registry never
starts R. Every call into R goes through :func:`call_r`, which

* uses rpy2 *local* converters only (``default_converter + numpy2ri``),
* runs a fixed R function (source text defined in this package, never built
  from user strings) with arguments passed as R values,
* captures R's console output (printed only when ``verbose``),
* turns R warnings into :class:`RWarning` and R errors into :class:`RError`
  carrying R's message.
"""

from __future__ import annotations

import sys
import threading
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np

from missingkernels.utils import import_optional

__all__ = [
    "RDependencyError",
    "RError",
    "RWarning",
    "call_r",
    "feature_names",
    "name_features",
    "require_r_package",
    "set_host_r",
    "to_r_matrix",
]

#: rpy2 versions known to work with the R of the supported platforms
#: (rpy2 >= 3.6 fails against R 4.2).
RPY2_REQUIREMENT = "rpy2>=3.5.13,<3.6"
PIP_HINT = (
    "pip install 'missingkernels[r]' (or pip install 'missingkernels-r', "
    f"which pulls in '{RPY2_REQUIREMENT}')"
)
R_HINT = (
    "Install R (Debian/Ubuntu: apt-get install r-base-core; otherwise see "
    "https://cran.r-project.org) and make sure `R RHOME` runs or R_HOME is set"
)

#: How to install each R package we use.
R_PACKAGE_HINTS = {
    "mice": (
        'apt-get install r-cran-mice (Debian/Ubuntu), or in R: install.packages("mice")'
    ),
    "Amelia": (
        "apt-get install r-cran-amelia (Debian/Ubuntu), or in R: "
        'install.packages("Amelia")'
    ),
    "norm": (
        'in R: install.packages("norm") (norm is not packaged by Debian; '
        "r_amelia or gaussian_em fit the same model without it)"
    ),
}

# R is single threaded and rpy2 is not thread safe: one call at a time.
_LOCK = threading.RLock()
_FUNCTIONS: dict[str, Any] = {}
_AVAILABLE: set[str] = set()
# The R session this Python runs in, when it runs inside R (see set_host_r).
_HOST_R: Any = None


def set_host_r(evaluator: Any) -> None:
    """Run the R code of this plugin in the R session that hosts Python.

    When Python is embedded in R (the R package ``missingkernels``, through
    reticulate), R is already running in the process: rpy2 would use it from
    C calls that release the GIL, and R's garbage collector then finalizes
    reticulate's Python objects without the GIL, which crashes the process.
    The R front end therefore installs its own evaluator, and every call
    into R goes to it instead of rpy2 (which is then never imported).

    Parameters
    ----------
    evaluator : callable or None
        ``evaluator(source, args, runner)``: evaluates the fixed R function
        text ``source`` and calls it with the named arguments ``args`` (a
        dict of numpy arrays, numbers, str, None and lists of str), through
        the fixed R function text ``runner`` when it is not None
        (``runner(f, args)``, see :func:`call_r`); returns the R value with
        named lists as dicts and atomic vectors as numpy arrays. ``None``
        goes back to rpy2.

    Examples
    --------
    >>> from missingkernels_r._session import set_host_r
    >>> set_host_r(None)  # the default: R through rpy2
    """
    global _HOST_R
    with _LOCK:
        _HOST_R = evaluator
        _AVAILABLE.clear()


class RDependencyError(ImportError):
    """Raised when R, rpy2 or an R package needed by a density is missing.

    The message says exactly what to install.
    """


class RError(RuntimeError):
    """Raised when R signals an error; the message carries R's own message."""


class RWarning(UserWarning):
    """An R warning raised during a call into R, re-issued in Python."""


def _version_tuple(version: str) -> tuple[int, ...]:
    parts = []
    for piece in version.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def _rpy2(what: str) -> Any:
    """Import rpy2 and start R, or explain what to install."""
    try:
        rpy2 = import_optional("rpy2", "r", what)
    except ImportError as exc:
        raise RDependencyError(str(exc)) from exc
    version = getattr(rpy2, "__version__", "0")
    if not (3, 5, 13) <= _version_tuple(version) < (3, 6):
        raise RDependencyError(
            f"{what} needs {RPY2_REQUIREMENT}; rpy2 {version} is installed "
            "(rpy2 3.6 does not work with R 4.2). Install a supported version "
            f"with: pip install '{RPY2_REQUIREMENT}'."
        )
    try:
        import rpy2.robjects as ro
        from rpy2.rinterface_lib import callbacks
        from rpy2.robjects import default_converter, numpy2ri
        from rpy2.robjects.conversion import localconverter
    except Exception as exc:
        raise RDependencyError(
            f"{what} needs R, but rpy2 could not start it "
            f"({type(exc).__name__}: {exc}). {R_HINT}."
        ) from exc
    return ro, default_converter, numpy2ri, localconverter, callbacks


# R helpers: fixed source text. User values only ever enter as arguments.
_RUNNER = """
function(f, args) {
  warns <- character(0)
  out <- withCallingHandlers(
    tryCatch(
      list(ok = TRUE, value = do.call(f, args)),
      error = function(e) list(ok = FALSE, message = conditionMessage(e))
    ),
    warning = function(w) {
      warns <<- c(warns, conditionMessage(w))
      invokeRestart("muffleWarning")
    }
  )
  out$warnings <- warns
  out
}
"""

_HAS_PACKAGE = """
function(package) isTRUE(suppressWarnings(suppressMessages(
  requireNamespace(package, quietly = TRUE)
)))
"""


def _function(key: str, source: str) -> Any:
    """Evaluate a fixed R function once per session and cache it."""
    if key not in _FUNCTIONS:
        ro = _rpy2("R")[0]
        _FUNCTIONS[key] = ro.r(source)
    return _FUNCTIONS[key]


@contextmanager
def _captured_console(verbose: bool) -> Iterator[list[str]]:
    """Capture what R writes to its console; echo it only when ``verbose``."""
    callbacks = _rpy2("R")[4]
    lines: list[str] = []

    def write_out(text: str) -> None:
        lines.append(text)
        if verbose:
            sys.stdout.write(text)

    def write_err(text: str) -> None:
        lines.append(text)
        if verbose:
            sys.stderr.write(text)

    with (
        callbacks.obj_in_module(callbacks, "consolewrite_print", write_out),
        callbacks.obj_in_module(callbacks, "consolewrite_warnerror", write_err),
    ):
        yield lines


def require_r_package(package: str, what: str) -> None:
    """Check that R, rpy2 and the R package ``package`` can be used.

    Parameters
    ----------
    package : str
        The R package, e.g. ``"mice"``.
    what : str
        Who needs it (used in the message), e.g. ``"RMiceDensity"``.

    Raises
    ------
    RDependencyError
        If rpy2 or R is missing, or ``requireNamespace(package)`` is FALSE in R.
    """
    if package in _AVAILABLE:
        return
    if _HOST_R is not None:
        with _LOCK:
            ok = bool(np.asarray(_HOST_R(_HAS_PACKAGE, {"package": package}, None)))
    else:
        _, default_converter, numpy2ri, localconverter, _ = _rpy2(what)
        with _LOCK, _captured_console(verbose=False):
            has_package = _function("has_package", _HAS_PACKAGE)
            with localconverter(default_converter + numpy2ri.converter):
                ok = bool(np.asarray(has_package(package)).reshape(-1)[0])
    if not ok:
        hint = R_PACKAGE_HINTS.get(package, f'in R: install.packages("{package}")')
        raise RDependencyError(
            f"{what} needs the R package {package!r}, which R cannot load "
            f"(requireNamespace({package!r}) is FALSE). Install it: {hint}."
        )
    _AVAILABLE.add(package)


def to_r_matrix(X: np.ndarray) -> np.ndarray:
    """Return X as a C-contiguous float64 array ready for numpy2ri.

    The R side turns every NaN into ``NA_real_`` (see the R helpers), so that
    R functions which distinguish ``NaN`` from ``NA`` treat both as missing.
    """
    return np.ascontiguousarray(X, dtype=np.float64)


def feature_names(d: int) -> np.ndarray:
    """Column names given to R: ``f0, f1, ...`` by 0-based feature index.

    Passed as data (never pasted into R source), so they are always valid R
    names; :func:`name_features` turns them back into the labels of the
    package's messages.
    """
    return np.array([f"f{j}" for j in range(d)])


def name_features(text: str, estimator: Any) -> str:
    """``text`` from R with each column name ``f<j>`` of :func:`feature_names`
    replaced by the package's label of column ``j`` (its name, or ``column j
    (0-based)``; see :func:`missingkernels.utils.describe_features`)."""
    import re

    from missingkernels.utils import describe_features

    return re.sub(
        r"\bf(\d+)\b", lambda m: describe_features(estimator, int(m.group(1))), text
    )


def call_r(
    key: str,
    source: str,
    args: Mapping[str, Any],
    *,
    what: str,
    verbose: bool = False,
    estimator: Any = None,
) -> dict[str, Any]:
    """Call a fixed R function and return its (named list) value as a dict.

    Parameters
    ----------
    key : str
        Cache key of the R function.
    source : str
        R source of a function returning a named list; fixed text only.
    args : mapping
        Argument name -> value (numpy arrays, numbers, str, None for NULL,
        lists of str become character vectors).
    what : str
        Who calls (used in error messages).
    verbose : bool, default=False
        Echo R's console output.
    estimator : object, optional
        The density whose columns ``x`` holds, named in R by
        :func:`feature_names`: R's warnings and errors then name them as the
        package does (:func:`name_features`).

    Returns
    -------
    value : dict
        The R list converted with numpy2ri: numeric vectors and arrays become
        ndarrays, character vectors ndarrays of str, nested lists dicts.

    Raises
    ------
    RError
        If the R function signals an error; carries R's message.
    """
    console: list[str] = []
    if _HOST_R is not None:  # Python inside R: that R session evaluates
        with _LOCK:
            try:
                result = _HOST_R(source, dict(args), _RUNNER)
            except Exception as exc:  # an error outside the R tryCatch
                raise RError(f"{what}: R failed: {exc}") from None
    else:
        result = _call_rpy2(key, source, args, what, verbose, console)

    def named(text: Any) -> str:
        return str(text) if estimator is None else name_features(str(text), estimator)

    for message in np.atleast_1d(result.get("warnings", [])):
        warnings.warn(f"{what}: R warning: {named(message)}", RWarning, stacklevel=4)
    if not bool(np.asarray(result["ok"]).reshape(-1)[0]):
        message = named(np.asarray(result["message"]).reshape(-1)[0])
        tail = "".join(console).strip()
        detail = f"\nR console output:\n{tail[-2000:]}" if tail else ""
        raise RError(f"{what}: R error: {message}{detail}")
    value = result.get("value")
    return value if isinstance(value, dict) else {"value": value}


def _call_rpy2(
    key: str,
    source: str,
    args: Mapping[str, Any],
    what: str,
    verbose: bool,
    console: list[str],
) -> dict[str, Any]:
    """:func:`call_r` through rpy2; R's console output is added to ``console``."""
    ro, default_converter, numpy2ri, localconverter, _ = _rpy2(what)
    with _LOCK, _captured_console(verbose) as lines:
        runner = _function("runner", _RUNNER)
        function = _function(key, source)
        with localconverter(default_converter + numpy2ri.converter):
            r_args = ro.r["list"](**{k: _r_value(ro, v) for k, v in args.items()})
            try:
                out = runner(function, r_args)
            except Exception as exc:  # an error outside the R tryCatch
                raise RError(f"{what}: R failed: {exc}") from None
            result = _to_python(out)
    console.extend(lines)
    return result


def _r_value(ro: Any, value: Any) -> Any:
    if value is None:
        return ro.NULL
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return ro.StrVector(list(value))
    if isinstance(value, bool):
        return ro.BoolVector([value])
    if isinstance(value, (int, np.integer)):
        return ro.IntVector([int(value)])
    if isinstance(value, (float, np.floating)):
        return ro.FloatVector([float(value)])
    if isinstance(value, str):
        return ro.StrVector([value])
    if isinstance(value, np.ndarray) and value.dtype == bool:
        return ro.BoolVector(value.tolist())
    return value


def _to_python(obj: Any) -> Any:
    """Turn the numpy2ri conversion of an R value into plain Python.

    Named lists arrive as rpy2 ``OrdDict`` (-> dict), NULL as ``NULLType``
    (-> None); numpy2ri leaves logical vectors as rpy2 vectors (-> bool
    ndarray). Everything else is already an ndarray.
    """
    from rpy2.rinterface_lib.sexp import NULLType
    from rpy2.rlike.container import OrdDict
    from rpy2.robjects.vectors import BoolVector

    if isinstance(obj, OrdDict):
        return {str(k): _to_python(v) for k, v in obj.items()}
    if isinstance(obj, NULLType):
        return None
    if isinstance(obj, BoolVector):
        return np.asarray(obj).astype(bool)
    return obj

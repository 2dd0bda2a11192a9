"""How close each numeric assertion comes to its tolerance (a pytest plugin).

An assertion that passes at 90% of its tolerance on one machine fails on the
next, whose BLAS rounds differently. This plugin records, for every call of
``np.testing.assert_allclose``, ``pytest.approx`` (scalars) and
``_helpers.assert_rel``, the *margin*: the largest ``|actual - expected|``
over the tolerance it was allowed, per assertion site (file and line). Run
it under several OpenBLAS kernels and read the sites whose margin comes near
1 (CONTRIBUTING.md, "Reproduce another machine")::

    OPENBLAS_CORETYPE=Sandybridge MK_TOLERANCE_MARGINS=margins.tsv \\
        .venv/bin/python -m pytest -p _tolerance_margins tests

The file gets one line per site: the margin, the tightest relative tolerance
used there and the site, largest margin first. Without
``MK_TOLERANCE_MARGINS`` the plugin does nothing.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

ApproxScalar = type(pytest.approx(1.0))  # private class; found, not imported

_TESTS = str(Path(__file__).resolve().parent)
_OUT = os.environ.get("MK_TOLERANCE_MARGINS")
# site -> [largest margin, smallest rtol]
_SITES: dict[str, list[float]] = {}


def _site() -> str:
    """The innermost frame in a test file that is not this plugin."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(_TESTS) and not name.endswith("_tolerance_margins.py"):
            return f"{Path(name).name}:{frame.f_lineno}"
        frame = frame.f_back
    return "?"


def _record(margin: float, rtol: float) -> None:
    if not np.isfinite(margin):
        return
    entry = _SITES.setdefault(_site(), [0.0, np.inf])
    entry[0] = max(entry[0], margin)
    entry[1] = min(entry[1], rtol)


def _margin(actual, desired, rtol, atol) -> float:
    a = np.asarray(actual, dtype=float)
    e = np.asarray(desired, dtype=float)
    both = np.isfinite(a) & np.isfinite(e)
    if not both.any():
        return 0.0
    a, e = np.broadcast_arrays(a, e)
    err = np.abs(a[both] - e[both])
    allowed = atol + rtol * np.abs(e[both])
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(allowed > 0, err / allowed, np.where(err > 0, np.inf, 0))
    return float(ratio.max())


def pytest_configure(config):
    if not _OUT:
        return
    original = np.testing.assert_allclose

    def assert_allclose(actual, desired, rtol=1e-7, atol=0, *args, **kwargs):
        try:
            _record(_margin(actual, desired, rtol, atol), rtol)
        except (TypeError, ValueError):
            pass  # not numbers (objects, strings): the original says
        return original(actual, desired, rtol, atol, *args, **kwargs)

    np.testing.assert_allclose = assert_allclose
    original_eq = ApproxScalar.__eq__

    def approx_eq(self, actual):
        result = original_eq(self, actual)
        try:
            tolerance = float(self.tolerance)
            err = abs(float(actual) - float(self.expected))
            rel = self.rel if self.rel is not None else 1e-6
            _record(err / tolerance if tolerance > 0 else 0.0, float(rel))
        except (TypeError, ValueError, OverflowError):
            pass
        return result

    ApproxScalar.__eq__ = approx_eq  # type: ignore[method-assign]

    import _helpers

    original_rel = _helpers.assert_rel

    def assert_rel(actual, expected, rtol=1e-10):
        _record(_margin(actual, expected, rtol, 0.0), rtol)
        return original_rel(actual, expected, rtol)

    _helpers.assert_rel = assert_rel


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    if not _OUT:
        return
    rows = sorted(_SITES.items(), key=lambda kv: -kv[1][0])
    with open(_OUT, "w") as f:
        for site, (margin, rtol) in rows:
            f.write(f"{margin:.3g}\t{rtol:.0e}\t{site}\n")

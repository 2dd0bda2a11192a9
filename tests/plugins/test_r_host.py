"""The R plugin's host evaluator: with Python inside R (the R package, through
reticulate), the plugin's R code runs in that R session through an evaluator the
R front end installs, not through rpy2 (issue 34). The R side is tested by the R
package's tests (r_bridge/tests/testthat/test-r-densities.R); here, the seam.
"""

from __future__ import annotations

import numpy as np
import pytest

mkr = pytest.importorskip(
    "missingkernels_r",
    reason="the plugin is not installed: pip install -e plugins/missingkernels-r",
)
from missingkernels_r import _session  # noqa: E402


class _Recorder:
    """A host evaluator returning canned values and recording its calls."""

    def __init__(self, result):
        self.result = result
        self.calls = []

    def __call__(self, source, args, runner):
        self.calls.append((source, args, runner))
        return self.result


@pytest.fixture
def host():
    yield
    _session.set_host_r(None)


def test_require_r_package_asks_the_host(host):
    yes = _Recorder(np.array([True]))
    _session.set_host_r(yes)
    _session.require_r_package("somepackage", "this test")
    source, args, runner = yes.calls[0]
    assert args == {"package": "somepackage"}
    assert runner is None
    assert "requireNamespace(package" in source
    no = _Recorder(np.array([False]))
    _session.set_host_r(no)  # also forgets what the previous host had
    with pytest.raises(_session.RDependencyError, match="'otherpackage'"):
        _session.require_r_package("otherpackage", "this test")


def test_call_r_goes_through_the_runner_of_the_host(host):
    value = {"mu": np.array([1.0, 2.0])}
    rec = _Recorder({"ok": np.array([True]), "value": value, "warnings": np.array([])})
    _session.set_host_r(rec)
    out = _session.call_r("k", "function(x) list(mu = x)", {"x": 1.0}, what="t")
    assert out is value
    source, args, runner = rec.calls[0]
    assert source == "function(x) list(mu = x)"
    assert args == {"x": 1.0}
    assert runner == _session._RUNNER


def test_call_r_errors_and_warnings_from_the_host(host):
    failing = _Recorder(
        {
            "ok": np.array([False]),
            "message": np.array(["object 'f1' not found"]),
            "warnings": np.array(["f0 is constant"]),
        }
    )
    _session.set_host_r(failing)
    with pytest.warns(_session.RWarning, match="f0 is constant"):
        with pytest.raises(_session.RError, match="R error: object 'f1' not found"):
            _session.call_r("k", "function() 1", {}, what="t")

    def broken(source, args, runner):
        raise RuntimeError("the host went away")

    _session.set_host_r(broken)
    with pytest.raises(_session.RError, match="R failed: the host went away"):
        _session.call_r("k", "function() 1", {}, what="t")

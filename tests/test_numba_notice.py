"""The one-time notice that numba is compiling (missingkernels._numba_notice)."""

from __future__ import annotations

import importlib.util
import logging
import sys

import pytest

from missingkernels import _numba_notice

pytest.importorskip("numba")

SOURCE = """
from numba import njit

@njit(cache=True, inline="always")
def _helper(x):
    return x + 1.0

@njit(cache=True)
def entry(x):
    return _helper(x) * 2.0
"""


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_notice_once_before_compiling_and_none_once_cached(tmp_path, caplog):
    path = tmp_path / "mk_notice_loops.py"
    path.write_text(SOURCE)
    try:
        module = _load(path, "mk_notice_loops")
        assert _numba_notice.needs_compiling(module)
        with caplog.at_level(logging.WARNING, logger="missingkernels"):
            assert _numba_notice.notice_if_compiling(module, "the test loops", 3)
            assert not _numba_notice.notice_if_compiling(module, "the test loops")
        assert [r.getMessage() for r in caplog.records] == [
            "missingkernels: compiling the test loops with numba (first use after "
            "installing: about 3 s, once; the machine code is cached on disk for "
            "later runs)"
        ]
        assert module.entry(1.0) == 4.0  # compiles and writes the cache
        assert not _numba_notice.needs_compiling(module)
        # A new process (here: a fresh import of the module) loads the cache.
        fresh = _load(path, "mk_notice_loops")
        assert not _numba_notice.needs_compiling(fresh)
    finally:
        sys.modules.pop("mk_notice_loops", None)
        _numba_notice._noticed.discard("mk_notice_loops")


def test_the_package_loops_are_cached_after_a_gram():
    import numpy as np

    import missingkernels as mk
    from missingkernels.kernels.rbf.engine import _compiled

    X = np.array([[0.0, 1.0], [1.0, np.nan], [2.0, 2.5], [np.nan, 0.0]])
    mk.get_kernel("genrbf", gamma=0.5).fit(X)(X)
    assert not _numba_notice.needs_compiling(_compiled)


def test_no_notice_for_an_entry_point_never_run_when_others_are_cached(tmp_path):
    """A module whose main loop is cached but whose rarely used loop has never
    run needs no notice (it would show in every process); a cache left by
    other sources does."""
    path = tmp_path / "mk_notice_two.py"
    rare = "\n@njit(cache=True)\ndef rare(x):\n    return x - {}\n"
    path.write_text(SOURCE + rare.format(1.0))
    try:
        module = _load(path, "mk_notice_two")
        assert _numba_notice.needs_compiling(module)
        assert module.entry(1.0) == 4.0
        fresh = _load(path, "mk_notice_two")
        assert not _numba_notice.needs_compiling(fresh)
        # New sources: the kept index of entry is stale.
        path.write_text(SOURCE + rare.format(20.0))  # (other size and stamp)
        changed = _load(path, "mk_notice_two")
        assert _numba_notice.needs_compiling(changed)
    finally:
        sys.modules.pop("mk_notice_two", None)
        _numba_notice._noticed.discard("mk_notice_two")


TWO_LOOPS = """
from numba import njit

@njit(cache=True)
def common(x):
    return x + 1.0

@njit(cache=True)
def rare(x):
    return x * 3.0
"""


def test_a_loop_compiled_after_the_others_are_cached_is_announced(tmp_path, caplog):
    """The mixed kernel's case: the module's usual loops are cached, so no
    notice at first use; a loop first run later compiles for seconds and
    is announced then, once."""
    path = tmp_path / "mk_notice_two.py"
    path.write_text(TWO_LOOPS)
    try:
        module = _load(path, "mk_notice_two")
        assert module.common(1.0) == 2.0  # cached from now on
        fresh = _load(path, "mk_notice_two")
        with caplog.at_level(logging.WARNING, logger="missingkernels"):
            assert not _numba_notice.notice_if_compiling(fresh, "the two loops", 5)
            assert fresh.common(1.0) == 2.0  # loaded from the cache: silent
            assert caplog.records == []
            assert fresh.rare(1.0) == 3.0  # compiled now
            assert fresh.rare(2.0) == 6.0
        assert [r.getMessage() for r in caplog.records] == [
            "missingkernels: compiling the two loops with numba (first use after "
            "installing: about 5 s, once; the machine code is cached on disk for "
            "later runs)"
        ]
    finally:
        sys.modules.pop("mk_notice_two", None)
        _numba_notice._noticed.discard("mk_notice_two")
        _numba_notice._watched.pop("mk_notice_two", None)

"""Renamed private modules still load pickles that name their old paths (issue 50,
item 5): ``missingkernels._moved_modules`` serves each old name from its new
module."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest

import missingkernels
from missingkernels import MissingKernelSVC
from missingkernels._moved_modules import MOVED
from missingkernels.densities import FactorAnalysisDensity


def _global(module: str, name: str) -> bytes:
    """A protocol-0 pickle of the global ``module.name``."""
    return f"c{module}\n{name}\n.".encode()


def _renamed(payload: bytes, moves: dict[str, str]) -> bytes:
    """``payload`` (protocol 0) with every global of a new module named by its
    old path."""
    for old, new in moves.items():
        payload = payload.replace(f"c{new}\n".encode(), f"c{old}\n".encode())
    return payload


def _defined(module_name: str) -> list[object]:
    """The classes and functions ``module_name`` defines: what a pickle names
    by module path."""
    module = importlib.import_module(module_name)
    return [
        obj
        for _, obj in inspect.getmembers(
            module, lambda x: inspect.isclass(x) or inspect.isfunction(x)
        )
        if obj.__module__ == module_name
    ]


def _forget(name: str) -> None:
    """Undo the import of a test-only old name."""
    sys.modules.pop(name, None)
    parent, _, child = name.rpartition(".")
    if hasattr(sys.modules[parent], child):
        delattr(sys.modules[parent], child)


def test_the_finder_is_installed_once():
    from missingkernels._moved_modules import _MovedModuleFinder, install

    install()
    install()
    finders = [f for f in sys.meta_path if isinstance(f, _MovedModuleFinder)]
    assert len(finders) == 1


def test_an_old_name_is_served_by_the_new_module(monkeypatch):
    # A test-only move, so the mechanism is tested whatever MOVED holds.
    old, new = (
        "missingkernels.densities._old_name_for_a_test",
        ("missingkernels.densities._gaussian_em"),
    )
    monkeypatch.setitem(MOVED, old, new)
    try:
        module = importlib.import_module(old)
        assert module is importlib.import_module(new)
        assert sys.modules[old] is sys.modules[new]
        # the module keeps its own name and spec
        assert module.__name__ == new and module.__spec__.name == new
        cls = missingkernels.densities.GaussianEMDensity
        assert pickle.loads(_global(old, "GaussianEMDensity")) is cls
        estimator = pickle.loads(_renamed(pickle.dumps(cls(), protocol=0), MOVED))
        assert type(estimator) is cls
    finally:
        _forget(old)


def test_names_not_in_the_table_are_not_found():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("missingkernels.densities._no_such_module")


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_a_moved_module_is_the_new_module(old, new):
    # no stub file is left at the old path
    old_path = Path(missingkernels.__file__).parent.joinpath(*old.split(".")[1:])
    assert not old_path.with_suffix(".py").exists() and not old_path.is_dir()
    origin = importlib.util.find_spec(new).origin
    module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert module.__spec__.name == new
    # one module object for the file: nothing was executed twice
    loaded = {id(m): m for m in list(sys.modules.values())}.values()
    assert [m for m in loaded if getattr(m, "__file__", None) == origin] == [module]


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_a_class_pickled_under_the_old_path_loads(old, new):
    defined = _defined(new)
    if not defined:
        pytest.skip(f"{new} defines no class or function for a pickle to name")
    for obj in defined:
        assert pickle.loads(_global(old, obj.__qualname__)) is obj


def test_a_fitted_estimator_pickled_under_old_paths_predicts_the_same():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    X[rng.random(X.shape) < 0.2] = np.nan
    svc = MissingKernelSVC(density=FactorAnalysisDensity(n_factors=1)).fit(X, y)
    payload = pickle.dumps(svc, protocol=0)
    old_payload = _renamed(payload, MOVED)
    # the fitted density is stored under its module's old path
    assert b"cmissingkernels.densities._factor\n" in old_payload
    assert b"cmissingkernels.densities._factor_analysis\n" not in old_payload
    loaded = pickle.loads(old_payload)
    assert type(loaded.density_) is FactorAnalysisDensity
    np.testing.assert_array_equal(loaded.decision_function(X), svc.decision_function(X))
    np.testing.assert_array_equal(loaded.predict(X), svc.predict(X))

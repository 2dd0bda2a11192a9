"""Renamed private modules still load pickles that name their old paths (issue 50,
item 5): ``missingkernels._moved_modules`` serves each old name from its new
module."""

from __future__ import annotations

import importlib
import inspect
import pickle
import sys

import pytest

import missingkernels
from missingkernels._moved_modules import MOVED


def _global(module: str, name: str) -> bytes:
    """A protocol-0 pickle of the global ``module.name``."""
    return f"c{module}\n{name}\n.".encode()


def _renamed(payload: bytes, moves: dict[str, str]) -> bytes:
    """``payload`` (protocol 0) with every global of a new module named by its
    old path."""
    for old, new in moves.items():
        payload = payload.replace(f"c{new}\n".encode(), f"c{old}\n".encode())
    return payload


def _classes(module_name: str) -> list[type]:
    module = importlib.import_module(module_name)
    return [
        obj
        for _, obj in inspect.getmembers(module, inspect.isclass)
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
    assert not importlib.util.find_spec(new).origin.endswith(
        old.rpartition(".")[2] + ".py"
    )
    module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert module.__spec__.name == new
    # one module object for the file: nothing was executed twice
    same_file = [m for m in list(sys.modules.values()) if getattr(m, "__file__", None)]
    assert [m for m in same_file if m.__file__ == module.__file__] == [module]


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_a_class_pickled_under_the_old_path_loads(old, new):
    classes = _classes(new)
    assert classes, f"{new} defines no class to check"
    for cls in classes:
        assert pickle.loads(_global(old, cls.__qualname__)) is cls

"""``missingkernels._sklearn_compat`` is the only importer of private sklearn paths."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from missingkernels import _sklearn_compat

REPO_ROOT = Path(__file__).resolve().parents[1]

#: Where the project's own Python sources live.
SOURCE_DIRS = ("missingkernels", "plugins", "tests", "benchmarks")

#: Files and folders allowed to import from private scikit-learn paths.
ALLOWED = ("missingkernels/_sklearn_compat.py",)

#: Where each re-exported name is defined in scikit-learn.
ORIGINS = {
    "HasMethods": "sklearn.utils._param_validation",
    "Interval": "sklearn.utils._param_validation",
    "InvalidParameterError": "sklearn.utils._param_validation",
    "StrOptions": "sklearn.utils._param_validation",
    "_check_feature_names": "sklearn.utils.validation",
    "_check_n_features": "sklearn.utils.validation",
    "_fit_context": "sklearn.base",
    "available_if": "sklearn.utils.metaestimators",
    "validate_params": "sklearn.utils._param_validation",
}


def _is_private(dotted: str) -> bool:
    parts = dotted.split(".")
    return parts[0] == "sklearn" and any(part.startswith("_") for part in parts[1:])


def private_sklearn_imports(source: str) -> list[str]:
    """The private scikit-learn imports of a module's source, as ``line: text``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] != "sklearn":
                continue
            names = [alias.name for alias in node.names]
            if _is_private(node.module) or any(n.startswith("_") for n in names):
                found.append(f"{node.lineno}: from {node.module} import {names}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _is_private(alias.name):
                    found.append(f"{node.lineno}: import {alias.name}")
    return found


def _source_files() -> list[Path]:
    files = []
    for folder in SOURCE_DIRS:
        for path in sorted((REPO_ROOT / folder).rglob("*.py")):
            relative = path.relative_to(REPO_ROOT).as_posix()
            if any(part.startswith(".") for part in path.parts):
                continue
            if not relative.startswith(ALLOWED):
                files.append(path)
    return files


def test_all_is_sorted_and_complete():
    assert _sklearn_compat.__all__ == sorted(_sklearn_compat.__all__)
    assert set(_sklearn_compat.__all__) == set(ORIGINS)


@pytest.mark.parametrize("name", sorted(ORIGINS))
def test_each_name_is_the_sklearn_object(name):
    expected = getattr(importlib.import_module(ORIGINS[name]), name)
    assert getattr(_sklearn_compat, name) is expected


@pytest.mark.parametrize(
    ("source", "flagged"),
    [
        ("from sklearn.utils._param_validation import Interval", 1),
        ("from sklearn.base import BaseEstimator, _fit_context", 1),
        ("import sklearn.utils._available_if", 1),
        ("def f():\n    from sklearn.utils._mask import _get_mask\n", 1),
        ("from sklearn.base import BaseEstimator", 0),
        ("from sklearn.utils.validation import check_is_fitted", 0),
        ("from ._param_validation import Interval", 0),
        ("from mypkg._private import _thing", 0),
    ],
)
def test_the_check_finds_private_imports(source, flagged):
    assert len(private_sklearn_imports(source)) == flagged


def test_only_the_compat_module_imports_private_sklearn_paths():
    files = _source_files()
    assert any(p.name == "_base.py" and p.parent.name == "estimators" for p in files)
    offenders = {
        path.relative_to(REPO_ROOT).as_posix(): found
        for path in files
        if (found := private_sklearn_imports(path.read_text(encoding="utf-8")))
    }
    assert not offenders, (
        f"import these names from missingkernels._sklearn_compat instead: {offenders}"
    )

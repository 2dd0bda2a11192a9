"""Plugins use public names only (issue 50, item 2).

Every module of the plugins shipped with the package (``plugins/``, the
example plugin of the tests, the plugin example of the gallery) is parsed,
and each import of ``missingkernels`` must name public modules and public
names: a plugin that needs a private name shows a seam the package lacks.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import missingkernels.utils as utils

ROOT = Path(__file__).resolve().parents[1]
PLUGIN_FILES = sorted(
    [
        *(ROOT / "plugins").rglob("*.py"),
        *(ROOT / "tests" / "plugin_example").rglob("*.py"),
        ROOT / "examples" / "plot_plugin_kernel.py",
    ]
)


def _private(dotted: str) -> bool:
    return any(
        part.startswith("_") and not part.startswith("__") for part in dotted.split(".")
    )


def private_imports(source: str) -> list[str]:
    """The imports of ``missingkernels`` private modules or names in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "missingkernels" and _private(
                    alias.name
                ):
                    found.append(alias.name)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] != "missingkernels":
                continue
            if _private(node.module):
                found.append(node.module)
            found += [
                f"{node.module}.{alias.name}"
                for alias in node.names
                if _private(alias.name)
            ]
    return found


def test_the_check_finds_private_imports():
    source = (
        "import missingkernels._numerics\n"
        "from missingkernels._validation import describe_features\n"
        "from missingkernels.kernels import _rbf\n"
        "from missingkernels.utils import row_keys\n"
        "import numpy._core\n"
        "def f():\n    from missingkernels.densities._base_em import x\n"
    )
    assert private_imports(source) == [
        "missingkernels._numerics",
        "missingkernels._validation",
        "missingkernels.kernels._rbf",
        "missingkernels.densities._base_em",
    ]


@pytest.mark.parametrize("path", PLUGIN_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_plugins_import_only_public_names(path):
    assert PLUGIN_FILES, "no plugin files found"
    bad = private_imports(path.read_text(encoding="utf-8"))
    assert not bad, (
        f"{path.relative_to(ROOT)} imports private names of missingkernels: {bad}. "
        "Use the public ones (missingkernels.utils and the subpackages' "
        "__all__), or make the name a public, documented part of the plugin API."
    )


def test_utils_exports_are_sorted_documented_and_have_examples():
    assert utils.__all__ == sorted(utils.__all__)
    for name in utils.__all__:
        obj = getattr(utils, name)
        if name == "Interval":  # scikit-learn's own, documented there
            continue
        doc = inspect.getdoc(obj) or ""
        assert "Examples" in doc and ">>>" in doc, name
        assert "Parameters" in doc, name


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: utils.row_keys([[1.0, 2.0]], [[False]]), "same shape"),
        (lambda: utils.row_keys([1.0, 2.0], [False, True]), "2-d"),
        (lambda: utils.RowStreams([[1, 2]], 0), "keys must be 1-d"),
        (lambda: utils.RowStreams([1, 2], -1), "seed must be an int >= 0"),
        (lambda: utils.RowStreams([1, 2], 1.5), "seed must be an int >= 0"),
        (lambda: utils.integer_seeds(0, -1), "size must be an int >= 0"),
        (lambda: utils.integer_seeds(0, 2.0), "size must be an int >= 0"),
        (lambda: utils.describe_features(None, [0.5]), "column indices"),
    ],
)
def test_public_helpers_validate_their_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()

"""No function in missingkernels is over 150 lines (issue 50, item 3).

A function's length is ``end_lineno - lineno + 1`` from :mod:`ast` less the
lines of its docstring: the rule is about jobs (a function of over 150 lines
of code does several), and a public function's numpydoc text is not a job
(``run_comparison``'s signature and docstring are 150 lines, its code 63).
Functions compiled by numba's ``njit`` (the kernels' inner loops) are exempt.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

MAX_LINES = 150
PACKAGE = Path(__file__).resolve().parent.parent / "missingkernels"


def _is_njit(decorator: ast.expr) -> bool:
    """Whether a decorator is ``njit``/``numba.njit``, bare or called."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    if isinstance(target, ast.Name):
        return target.id == "njit"
    return (
        isinstance(target, ast.Attribute)
        and target.attr == "njit"
        and isinstance(target.value, ast.Name)
        and target.value.id == "numba"
    )


def long_functions(source: str, path: str) -> list[str]:
    """``path::name (N lines)`` for each over-long function of ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        assert node.end_lineno is not None
        lines = node.end_lineno - node.lineno + 1
        first = node.body[0]
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            assert first.end_lineno is not None
            lines -= first.end_lineno - first.lineno + 1
        if lines > MAX_LINES and not any(map(_is_njit, node.decorator_list)):
            found.append(f"{path}::{node.name} ({lines} lines)")
    return found


def _function(name: str, lines: int, decorator: str = "", doc: int = 0) -> str:
    """The source of a function ``lines`` lines long (its def line counted),
    after a docstring of ``doc`` lines."""
    text = '    """Doc.\n' + "    more\n" * (doc - 2) + '    """\n' if doc else ""
    body = "".join(f"    x{i} = {i}\n" for i in range(lines - 1))
    head = f"@{decorator}\n" if decorator else ""
    return f"{head}def {name}():\n{text}{body}"


def test_checker_flags_151_lines_not_150_and_exempts_njit():
    source = "\n".join(
        [
            "import numba",
            "from numba import njit",
            _function("too_long", 151),
            _function("just_fits", 150),
            _function("compiled", 300, "njit"),
            _function("compiled_called", 300, "njit(cache=True)"),
            _function("compiled_dotted", 300, "numba.njit(cache=True)"),
            _function("other_decorator", 151, "functools.cache"),
            _function("documented", 150, doc=40),
            _function("documented_too_long", 151, doc=40),
            "class Holder:",
            textwrap.indent(_function("long_method", 160), "    "),
        ]
    )
    assert long_functions(source, "m.py") == [
        "m.py::too_long (151 lines)",
        "m.py::other_decorator (151 lines)",
        "m.py::documented_too_long (151 lines)",
        "m.py::long_method (160 lines)",
    ]


def test_no_function_over_150_lines():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).as_posix()
        found.extend(long_functions(path.read_text(encoding="utf-8"), rel))
    assert not found, (
        f"functions over {MAX_LINES} lines of code (split them by job, each part named "
        "for what it does):\n" + "\n".join(found)
    )

"""No import circle among the modules split out of the RBF kernel's loops,
the experiments' baselines and the command line (issue 36). Every import
statement counts, including those inside functions and under TYPE_CHECKING."""

from __future__ import annotations

import ast
from pathlib import Path

import missingkernels

ROOT = Path(missingkernels.__file__).parent

# Modules (dotted, below missingkernels) kept free of circles among themselves.
WATCHED = (
    "cli",
    "cli.__main__",
    "cli._compare",
    "cli._main",
    "experiments._baselines",
    "experiments._transformers",
    "kernels._compiled",
    "kernels._layouts",
    "kernels._linalg_compiled",
    "kernels._pairs_compiled",
    "kernels._rbf",
    "kernels._rows_compiled",
    "kernels._sides",
    "kernels._threads",
    "kernels._tiles_compiled",
)


def _imports(name: str) -> set[str]:
    """Modules of the package that ``name`` imports (dotted, below the root)."""
    path = ROOT.joinpath(*name.split("."))
    is_package = path.is_dir()
    source = path / "__init__.py" if is_package else path.with_suffix(".py")
    package = name.split(".") if is_package else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - node.level + 1]
            module = ".".join(base + ([node.module] if node.module else []))
            found.add(module)
            found.update(f"{module}.{a.name}".lstrip(".") for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            prefix = "missingkernels."
            if node.module.startswith(prefix):
                module = node.module[len(prefix) :]
                found.add(module)
                found.update(f"{module}.{a.name}" for a in node.names)
    return found


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` (depth-first search), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(v: str) -> list[str] | None:
        state[v] = 1
        stack.append(v)
        for w in sorted(graph[v]):
            if state.get(w) == 1:
                return [*stack[stack.index(w) :], w]
            if w not in state and (found := visit(w)):
                return found
        state[v] = 2
        stack.pop()
        return None

    for v in sorted(graph):
        if v not in state and (found := visit(v)):
            return found
    return None


def test_the_graph_reader_finds_a_circle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
    # a real import edge is seen: _rbf loads the compiled loops lazily.
    assert "kernels._compiled" in _imports("kernels._rbf")


def test_no_import_circle_among_the_split_modules():
    graph = {m: _imports(m) & set(WATCHED) for m in WATCHED}
    assert _cycle(graph) is None

"""One message for every missing optional dependency (``missingkernels._optional``)."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from missingkernels import SOCPSVC
from missingkernels._optional import (
    EXTRAS,
    import_optional,
    missing_dependency_message,
)
from missingkernels.datasets import load_csv
from missingkernels.experiments import plot_critical_difference, summary_table

REPO_ROOT = Path(__file__).resolve().parents[1]

#: Distribution names of the modules whose import name differs.
DISTRIBUTION = {"scikit_posthocs": "scikit-posthocs"}


def _requirement_names(requirements):
    return {re.split(r"[<>=!~\[; ]", req, maxsplit=1)[0] for req in requirements}


def test_message_names_purpose_module_and_extra():
    message = missing_dependency_message("cvxpy", "socp", "SOCPSVC.fit")
    assert message.startswith("SOCPSVC.fit needs cvxpy")
    assert message.endswith('pip install "missingkernels[socp]"')


def test_import_returns_the_module():
    assert import_optional("joblib", "experiments", "anything").__name__ == "joblib"
    pyplot = import_optional("matplotlib.pyplot", "plots", "anything")
    assert pyplot.__name__ == "matplotlib.pyplot"


def test_missing_module_raises_the_message_with_the_cause(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    with pytest.raises(ImportError) as info:
        import_optional("tqdm.auto", "experiments", "run_comparison(progress=True)")
    expected = missing_dependency_message(
        "tqdm.auto", "experiments", "run_comparison(progress=True)"
    )
    assert str(info.value) == expected
    assert isinstance(info.value.__cause__, ImportError)


@pytest.mark.parametrize(("module", "extra"), [("cvxpy", "plots"), ("cvxpy", "nope")])
def test_wrong_extra_is_a_programming_error(module, extra):
    with pytest.raises(ValueError, match=r"does not provide 'cvxpy'.*'socp'"):
        import_optional(module, extra, "anything")


def test_extras_match_pyproject():
    tomllib = pytest.importorskip("tomllib")
    with open(REPO_ROOT / "pyproject.toml", "rb") as f:
        declared = tomllib.load(f)["project"]["optional-dependencies"]
    for extra, modules in EXTRAS.items():
        assert extra in declared
        names = _requirement_names(declared[extra])
        for module in modules:
            assert DISTRIBUTION.get(module, module) in names, (extra, module)


def _import_optional_calls():
    """``(file:line, module, extra)`` of every literal ``import_optional`` call."""
    calls = []
    folders = [REPO_ROOT / "missingkernels", REPO_ROOT / "plugins"]
    for path in sorted(p for folder in folders for p in folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", None) == "import_optional"
                and len(node.args) >= 2
                and all(isinstance(a, ast.Constant) for a in node.args[:2])
            ):
                where = f"{path.relative_to(REPO_ROOT)}:{node.lineno}"
                calls.append((where, node.args[0].value, node.args[1].value))
    return calls


def test_every_call_site_names_an_extra_providing_its_module():
    calls = _import_optional_calls()
    modules = {module.split(".")[0] for _, module, _ in calls}
    assert {"cvxpy", "matplotlib", "pandas", "rpy2", "statsmodels"} <= modules
    for where, module, extra in calls:
        assert module.split(".")[0] in EXTRAS.get(extra, ()), where


def test_socp_without_cvxpy(monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    X[rng.random(X.shape) < 0.2] = np.nan
    y = (rng.random(20) < 0.5).astype(int)
    monkeypatch.setitem(sys.modules, "cvxpy", None)
    with pytest.raises(ImportError) as info:
        SOCPSVC().fit(X, y)
    assert str(info.value) == missing_dependency_message("cvxpy", "socp", "SOCPSVC.fit")


def test_critical_difference_plot_without_matplotlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError) as info:
        plot_critical_difference(None)  # type: ignore[arg-type]
    assert str(info.value) == missing_dependency_message(
        "matplotlib", "plots", "plot_critical_difference"
    )


def test_load_csv_without_pandas(monkeypatch, tmp_path):
    path = tmp_path / "toy.csv"
    path.write_text("x,target\n1.0,0\n,1\n")
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError) as info:
        load_csv(path)
    expected = missing_dependency_message("pandas", "experiments", "load_csv")
    assert str(info.value) == expected


def test_summary_table_without_pandas(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(
        ImportError, match=r'pip install "missingkernels\[experiments\]"'
    ):
        summary_table(None)

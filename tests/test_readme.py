"""The README's Python example runs as written (the R one: r_bridge's tests)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_block(heading: str, language: str) -> str:
    """The first fenced ``language`` block under the README's ``## heading``."""
    text = README.read_text(encoding="utf-8")
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(rf"^```{language}\n(.*?)^```$", section, re.S | re.M)
    assert match, f"no {language} block under '## {heading}'"
    return match.group(1)


def test_readme_python_example_runs(capsys):
    code = readme_block("Quick start in Python", "python")
    assert "MissingKernelSVC" in code and "cross_val_score" in code
    # the estimator standardises by default: the example needs no scaler
    assert "StandardScaler" not in code
    exec(compile(code, str(README), "exec"), {"__name__": "readme"})
    out = capsys.readouterr().out
    accuracy = float(re.search(r"accuracy (\d\.\d+)", out).group(1))
    assert accuracy > 0.9, out

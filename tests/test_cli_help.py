"""The command line's help, the datasets listing and missing-extra messages."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from missingkernels.cli import build_parser, main


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (action,) = [
        a for a in parser._actions if isinstance(a, argparse._SubParsersAction)
    ]
    return dict(action.choices)


def test_every_option_has_help_showing_its_default():
    parser = build_parser()
    for name, sub in _subparsers(parser).items():
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            label = f"{name} {'/'.join(action.option_strings) or action.dest}"
            assert action.help, f"{label} has no help"
            if action.option_strings:
                assert "default" in action.help, f"{label}: no default in its help"
        sub.format_help()  # renders (no stray % formatting)


def test_compare_help_ends_with_examples(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["compare", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    tail = out[out.index("examples:") :]
    assert "missingkernels compare sklearn_breast_cancer --quick" in tail
    assert out.rstrip().endswith("missingkernels list")
    assert "(default: missingkernels-compare)" in " ".join(out.split())


def test_datasets_lists_bundled_fetchable_and_present(tmp_path, capsys):
    (tmp_path / "australian.csv").write_text("a,target\n1,0\n")
    assert main(["datasets", "--data-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line}
    assert "bundled" in rows["sklearn_breast_cancer"]
    assert "present" in rows["australian"]
    assert "fetchable" in rows["ionosphere"] and "OpenML" in rows["ionosphere"]
    assert "absent" in rows["hepatitis"]
    assert f"data directory: {tmp_path} (--data-dir)" in out

    assert main(["datasets", "--task", "regression", "--data-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "sklearn_diabetes" in out and "ionosphere" not in out


def test_compare_without_the_experiments_extra_names_it():
    # A separate interpreter in which pandas cannot be imported.
    code = (
        "import sys; sys.modules['pandas'] = None\n"
        "from missingkernels.cli import main\n"
        "sys.exit(main(['compare', 'sklearn_breast_cancer', '--quick']))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert "compare needs the 'experiments' extra (pandas" in result.stderr
    assert 'pip install "missingkernels[experiments]"' in result.stderr

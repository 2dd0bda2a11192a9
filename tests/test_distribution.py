"""The wheel and the sdist as a user gets them: LICENSE, tests, metadata.

Builds both from the files git tracks (a fresh clone's view; files another
developer has not committed yet are left out), without build isolation (the
``dev`` extra provides hatchling, build and twine), then checks what they
contain and runs ``twine check --strict``. About two seconds.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# Top-level entries the sdist may hold; anything else is a stray file.
SDIST_TOP = {
    ".gitignore",  # hatchling always ships it
    "CHANGELOG.md",
    "CITATION.cff",
    "CONTRIBUTING.md",
    "LICENSE",
    "PKG-INFO",
    "README.md",
    "missingkernels",
    "pyproject.toml",
    "tests",
}


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    for module in ("build", "hatchling", "twine"):
        pytest.importorskip(module, reason=f"{module} comes with the dev extra")
    if not (REPO / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout (e.g. tests run from an unpacked sdist)")
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, check=True, capture_output=True
    ).stdout.split(b"\0")
    src = tmp_path_factory.mktemp("clone")
    for name in filter(None, files):
        path = REPO / name.decode()
        if path.is_file():  # tracked but deleted in the working tree: skip
            (src / name.decode()).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, src / name.decode())
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), "."],
        cwd=src,
        check=True,
        capture_output=True,
    )
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return {"wheel": wheel, "sdist": sdist}


def _sdist_names(sdist: Path) -> list[str]:
    with tarfile.open(sdist) as tar:
        # strip the "missingkernels-<version>/" prefix
        return [m.name.split("/", 1)[1] for m in tar.getmembers() if "/" in m.name]


def test_wheel_has_the_license_and_only_the_package(dists: dict[str, Path]) -> None:
    with zipfile.ZipFile(dists["wheel"]) as whl:
        names = whl.namelist()
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        text = whl.read(metadata).decode()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "License-Expression: BSD-3-Clause" in text
    assert "License-File: LICENSE" in text
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"missingkernels"}
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_sdist_has_license_tests_and_no_stray_files(dists: dict[str, Path]) -> None:
    names = _sdist_names(dists["sdist"])
    assert "LICENSE" in names
    assert {n.split("/")[0] for n in names} <= SDIST_TOP
    tests = [n for n in names if n.startswith("tests/test_") and n.endswith(".py")]
    assert "tests/conftest.py" in names and len(tests) > 10
    # Only the root's pyproject.toml and README.md, plus the example plugin
    # the registry tests build (a test fixture).
    allowed = {"pyproject.toml", "README.md", "tests/plugin_example/pyproject.toml"}
    stray = [
        n
        for n in names
        if Path(n).name in {"pyproject.toml", "README.md"} and n not in allowed
    ]
    assert not stray
    for prefix in ("vignettes/", "docs/", "r_bridge/", "plugins/", "benchmarks/"):
        assert not [n for n in names if n.startswith(prefix)]
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_twine_check_strict(dists: dict[str, Path]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, dists.values())],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr

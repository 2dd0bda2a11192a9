"""The static half of docs/browser_check.py (the browser half runs in CI's
documentation step, on the built site)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODULE = ROOT / "docs" / "browser_check.py"
if not MODULE.exists():  # the sdist has tests/ but not docs/
    pytest.skip("docs/ is not in this tree", allow_module_level=True)
_spec = importlib.util.spec_from_file_location("browser_check", MODULE)
assert _spec is not None and _spec.loader is not None
bc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bc)


def _site(tmp_path: Path, pages: dict[str, str]) -> Path:
    for name, body in pages.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(f"<html><head>{body}</head><body></body></html>")
    return tmp_path


def test_remote_scripts_stylesheets_and_images_fail_links_do_not(tmp_path):
    root = _site(
        tmp_path,
        {
            "index.html": '<a href="https://example.org/paper">a paper</a>'
            '<link rel="canonical" href="https://example.org/">'
            '<script src="_static/mathjax/MathJax.js"></script>',
            "theory.html": '<script defer src="https://cdn.jsdelivr.net/npm/mathjax@4/x.js">'
            "</script>",
            "r/vignette.html": '<link rel="stylesheet" href="//fonts.example.org/a">'
            '<img src="http://example.org/x.png">',
        },
    )
    problems = bc.static_checks(root)
    assert not [p for p in problems if p.startswith("index.html")]
    assert any(
        p.startswith("theory.html: names the CDN cdn.jsdelivr.net") for p in problems
    )
    assert any(
        p.startswith("theory.html: loads from another host: <script") for p in problems
    )
    r_page = [p for p in problems if p.startswith("r/vignette.html")]
    assert len(r_page) == 2  # the stylesheet and the image


def test_pages_to_open_skip_assets_and_the_r_vignette_and_sample_api_stubs(tmp_path):
    names = {
        "index.html": "",
        "_static/x.html": "",
        "r/missingkernels.html": "",
        **{f"generated/missingkernels.N{i:02d}.html": "" for i in range(10)},
        "generated/missingkernels.densities.GaussianEMDensity.html": "",
    }
    pages = bc.pages_to_open(_site(tmp_path, names))
    assert "index.html" in pages
    assert not [p for p in pages if p.startswith(("_static/", "r/"))]
    stubs = [p for p in pages if p.startswith("generated/")]
    assert "generated/missingkernels.densities.GaussianEMDensity.html" in stubs
    assert 2 <= len(stubs) < 11

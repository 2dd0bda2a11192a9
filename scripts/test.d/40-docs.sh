# The documentation site: sourced by scripts/test.sh (set -euo pipefail, cwd =
# repository root). Sphinx with warnings as errors (a broken reference, a
# public name without a docstring or missing from docs/api.rst fails), every
# gallery example run, the user guide's doctests, then the built pages opened
# in headless Chromium (docs/browser_check.py: formulas rendered by the
# site's own MathJax, images, layout, navigation; screenshots kept in
# docs/_build/screenshots/). The docs extra is installed into .venv by
# test.sh; MathJax and Chromium come from Debian. HTML in docs/_build/html
# (ignored by git).
mk_ensure_debs "/usr/share/javascript/mathjax/MathJax.js libjs-mathjax" \
    "/usr/lib/chromium/chromium chromium"
mk_log "documentation (docs/build.sh)"
MISSINGKERNELS_DATA_DIR="${MISSINGKERNELS_DATA_DIR:-$MK_ROOT/../shared/data}" \
    bash docs/build.sh .venv/bin/python
mk_log "documentation in headless Chromium (docs/browser_check.py)"
.venv/bin/python docs/browser_check.py docs/_build/html --screenshots docs/_build/screenshots

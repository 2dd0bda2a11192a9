# The documentation site: sourced by scripts/test.sh (set -euo pipefail, cwd =
# repository root). Sphinx with warnings as errors (a broken reference, a
# public name without a docstring or missing from docs/api.rst fails), every
# gallery example run, the user guide's doctests. The docs extra is installed
# into .venv by test.sh. HTML in docs/_build/html (ignored by git).
mk_log "documentation (docs/build.sh)"
MISSINGKERNELS_DATA_DIR="${MISSINGKERNELS_DATA_DIR:-$MK_ROOT/../shared/data}" \
    bash docs/build.sh .venv/bin/python

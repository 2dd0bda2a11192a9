#!/usr/bin/env bash
# Set up everything the test suites need (idempotent) and run them all:
# lint, type check, the Python suite (numpy 2), the R plugin tests.
set -euo pipefail
source "$(dirname "$0")/_setup.sh"
cd "$MK_ROOT"
start=$SECONDS

mk_ensure_r
PLUGIN_ARGS=""
for p in plugins/*/pyproject.toml; do
    if [ -e "$p" ]; then PLUGIN_ARGS="$PLUGIN_ARGS -e $(dirname "$p")"; fi
done
mk_ensure_venv .venv "-e .[dev,docs,experiments,plots,socp,r,dask] $PLUGIN_ARGS"
mk_log "setup done in $((SECONDS - start)) s"

mk_log "ruff + mypy"
.venv/bin/ruff check missingkernels tests benchmarks plugins examples docs/conf.py docs/browser_check.py docs/vignette_pages.py
.venv/bin/ruff format --check missingkernels tests benchmarks plugins examples docs/conf.py docs/browser_check.py docs/vignette_pages.py
.venv/bin/mypy missingkernels

mk_log "pytest (Python suite, $(.venv/bin/python -c 'import numpy; print("numpy", numpy.__version__)'))"
set +e
.venv/bin/python -m pytest -p no:cacheprovider "$@"
status=$?
set -e
if [ "$status" = 5 ]; then
    echo "error: pytest collected no tests" >&2
    exit 1
fi
[ "$status" = 0 ] || exit "$status"

# The R front end (r_bridge/) and anything else that needs its own environment
# register a step as scripts/test.d/NAME.sh, sourced here in name order.
for step in scripts/test.d/*.sh; do
    if [ -e "$step" ]; then
        mk_log "step $step"
        # shellcheck disable=SC1090
        source "$step"
    fi
done

mk_log "CLI smoke test"
.venv/bin/missingkernels list >/dev/null

mk_log "all tests passed in $((SECONDS - start)) s"

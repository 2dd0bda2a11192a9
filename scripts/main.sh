#!/usr/bin/env bash
# Set up the main environment (.venv, idempotent) and run the main job.
set -euo pipefail
source "$(dirname "$0")/_setup.sh"
cd "$MK_ROOT"
mk_ensure_venv .venv "-e .[experiments,plots]"
.venv/bin/missingkernels list "$@"

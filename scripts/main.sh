#!/usr/bin/env bash
# Set up the main environment (.venv, idempotent) and run the main job: a
# method comparison (nested CV; mean/zero/k-NN imputation vs genRBF with the
# embedded Gaussian EM density) on scikit-learn's breast-cancer data with 30%
# MAR missingness. Results, table and figures go to results/quick/.
# Extra arguments go to `missingkernels compare` (e.g. drop --quick via
# MK_MAIN_ARGS, or add --n-jobs 2).
set -euo pipefail
source "$(dirname "$0")/_setup.sh"
cd "$MK_ROOT"
mk_ensure_venv .venv "-e .[experiments,plots]"
.venv/bin/missingkernels compare sklearn_breast_cancer ${MK_MAIN_ARGS:---quick} \
    --output-dir results/quick "$@"

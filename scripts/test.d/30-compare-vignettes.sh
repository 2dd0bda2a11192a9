# The comparison machinery end to end: sourced by scripts/test.sh (set -euo
# pipefail, cwd = repository root). `missingkernels compare --quick` on a
# dataset shipped with scikit-learn, then every vignette in quick mode on the
# shared datasets (outputs under vignettes/results/*/quick/, ignored by git).

export MISSINGKERNELS_DATA_DIR="${MISSINGKERNELS_DATA_DIR:-$MK_ROOT/../shared/data}"
.venv/bin/ruff check vignettes
.venv/bin/ruff format --check vignettes

mk_cmp_out="$(mktemp -d)"
mk_log "missingkernels compare sklearn_breast_cancer --quick"
.venv/bin/missingkernels compare sklearn_breast_cancer --quick --no-progress \
    --output-dir "$mk_cmp_out"
rm -rf "$mk_cmp_out"

for mk_vignette in vignettes/[0-9]*.py; do
    mk_log "vignette $mk_vignette --quick"
    .venv/bin/python "$mk_vignette" --quick >/dev/null
done

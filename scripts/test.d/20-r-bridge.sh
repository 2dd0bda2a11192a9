# The R front end (r_bridge/): sourced by scripts/test.sh (set -euo pipefail,
# cwd = repository root, helpers from scripts/_setup.sh). Idempotent:
#   .venv-r   Python env with numpy<2 (reticulate 1.28 cannot convert numpy 2)
#             and the R plugin
#   .r-lib    R library with the installed r_bridge package
# then the Rd/NAMESPACE check (roxygen2), the testthat tests, the vignette
# (-> r_bridge/doc/missingkernels.html) and R CMD check --no-manual.

# with the R plugin (and rpy2), whose densities r_mice, r_amelia and r_norm
# the R tests fit from R (rpy2 then runs them in the calling R session)
mk_ensure_venv .venv-r "-e .[experiments,r] -e plugins/missingkernels-r numpy<2"

mk_rb_python="$MK_ROOT/.venv-r/bin/python"

# reticulate loads the interpreter's shared libpython, which Debian ships
# separately from python3 (libpython3.X).
if ! RETICULATE_PYTHON="$mk_rb_python" Rscript -e 'quit(status = !reticulate::py_available(TRUE))' >/dev/null 2>&1; then
    mk_log "reticulate cannot start $mk_rb_python: installing libpython3-dev"
    mk_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    mk_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libpython3-dev >/dev/null
    RETICULATE_PYTHON="$mk_rb_python" Rscript -e 'reticulate::py_config(); quit(status = !reticulate::py_available(TRUE))'
fi

mk_log "r_bridge man/ and NAMESPACE against the roxygen comments"
Rscript r_bridge/tools/roxygenize.R --check

# Reinstall the R package only when a file of it changed.
mk_rb_stamp="$(cd "$MK_ROOT" && find r_bridge -type f -not -path 'r_bridge/doc/*' -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)"
mkdir -p .r-lib
if [ "$(cat .r-lib/.mk-stamp 2>/dev/null)" = "$mk_rb_stamp" ] && [ -d .r-lib/missingkernels ]; then
    mk_log "r_bridge already installed in .r-lib"
else
    mk_log "R CMD INSTALL r_bridge -> .r-lib"
    if ! R CMD INSTALL --library=.r-lib r_bridge >.r-lib/install.log 2>&1; then
        cat .r-lib/install.log >&2
        echo "error: R CMD INSTALL r_bridge failed" >&2
        exit 1
    fi
    echo "$mk_rb_stamp" >.r-lib/.mk-stamp
fi

mk_log "r_bridge testthat tests (R $(Rscript -e 'cat(format(getRversion()))'), reticulate $(Rscript -e 'cat(format(packageVersion("reticulate")))'), $("$mk_rb_python" -c 'import numpy; print("numpy", numpy.__version__)'))"
# MISSINGKERNELS_REQUIRE_PYTHON=1: a test that cannot reach Python fails
# instead of skipping.
R_LIBS="$MK_ROOT/.r-lib" RETICULATE_PYTHON="$mk_rb_python" MISSINGKERNELS_REQUIRE_PYTHON=1 \
    Rscript r_bridge/tools/run-tests.R r_bridge/tests/testthat

mk_log "r_bridge vignette -> r_bridge/doc/missingkernels.html"
R_LIBS="$MK_ROOT/.r-lib" RETICULATE_PYTHON="$mk_rb_python" \
    Rscript r_bridge/tools/build-vignette.R

# R CMD check on the built tarball, in a scratch directory; Status must be OK
# (a NOTE or WARNING fails the step).
mk_log "R CMD build + R CMD check --no-manual r_bridge"
mk_rb_check="$(mktemp -d)"
mk_rb_status=0
(
    cd "$mk_rb_check"
    export R_LIBS="$MK_ROOT/.r-lib" RETICULATE_PYTHON="$mk_rb_python" MISSINGKERNELS_REQUIRE_PYTHON=1
    # parsnip (for which the package registers an engine when it is loaded) is
    # not packaged by Debian: DESCRIPTION lists it under Enhances, whose absence
    # is a NOTE without this switch
    export _R_CHECK_PACKAGE_DEPENDS_IGNORE_MISSING_ENHANCES_=true
    R CMD build "$MK_ROOT/r_bridge" >build.log 2>&1 || { cat build.log >&2; exit 1; }
    R CMD check --no-manual missingkernels_*.tar.gz >check.log 2>&1 || true
    if ! grep -q '^Status: OK' check.log; then
        cat check.log >&2
        for f in missingkernels.Rcheck/00install.out missingkernels.Rcheck/tests/testthat.Rout.fail; do
            if [ -e "$f" ]; then cat "$f" >&2; fi
        done
        echo "error: R CMD check r_bridge is not Status: OK" >&2
        exit 1
    fi
    mk_log "R CMD check: Status: OK"
) || mk_rb_status=$?
rm -rf "$mk_rb_check"
[ "$mk_rb_status" = 0 ] || exit "$mk_rb_status"

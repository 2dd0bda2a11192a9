# Shared, idempotent setup steps for scripts/main.sh and scripts/test.sh.
# Sourced, not executed. Every step checks before it installs, so a second
# run on a prepared machine takes seconds.

MK_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MK_PYTHON="${MK_PYTHON:-python3}"
MK_R_DEBS="r-base-core r-base-dev r-cran-mice r-cran-amelia r-cran-reticulate r-cran-testthat r-cran-mlbench r-cran-knitr r-cran-rmarkdown r-cran-roxygen2 r-cran-generics r-cran-tibble r-cran-ggplot2 r-cran-caret r-cran-e1071"
MK_R_PKGS='c("mice", "Amelia", "reticulate", "testthat", "mlbench", "knitr", "rmarkdown", "roxygen2", "generics", "tibble", "ggplot2", "caret", "e1071")'

mk_log() { printf '[setup %(%H:%M:%S)T] %s\n' -1 "$*"; }

mk_as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
        echo "error: '$*' needs root (run as root or install sudo)" >&2; return 1; fi
}

# R and the R packages, from Debian (CRAN is not reachable here).
mk_ensure_r() {
    if command -v Rscript >/dev/null 2>&1 &&
        Rscript -e "quit(status = !all(vapply($MK_R_PKGS, requireNamespace, TRUE, quietly = TRUE)))" >/dev/null 2>&1; then
        mk_log "R and R packages present ($(Rscript -e 'cat(R.version.string)' 2>/dev/null))"
        return 0
    fi
    mk_log "installing R from Debian packages"
    mk_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    # shellcheck disable=SC2086
    mk_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $MK_R_DEBS >/dev/null
    # apt and install.packages() can both "succeed" without the package: check.
    Rscript -e "ok <- vapply($MK_R_PKGS, requireNamespace, TRUE, quietly = TRUE); if (!all(ok)) { message('missing R packages: ', paste(names(ok)[!ok], collapse = ', ')); quit(status = 1) }"
}

# mk_ensure_venv DIR "PIP ARGS..." : create DIR and pip-install the args once;
# reinstall only when the args or a pyproject.toml change.
mk_ensure_venv() {
    local dir="$1" args="$2" stamp stamp_file
    stamp="$( (shopt -s nullglob; cat "$MK_ROOT"/pyproject.toml "$MK_ROOT"/plugins/*/pyproject.toml) | sha256sum | cut -c1-16)"
    # One stamp per argument set: main.sh and test.sh install different
    # extras into the same .venv and must not undo each other's stamp.
    stamp_file="$dir/.mk-stamp-$(echo "$args" | sha256sum | cut -c1-12)"
    if [ ! -x "$dir/bin/python" ]; then
        mk_log "creating $dir with $($MK_PYTHON --version)"
        "$MK_PYTHON" -m venv "$dir"
        "$dir/bin/python" -m pip install -q --disable-pip-version-check -U pip
    fi
    if [ "$(cat "$stamp_file" 2>/dev/null)" = "$stamp" ]; then
        mk_log "$dir up to date"
        return 0
    fi
    mk_log "installing into $dir: $args"
    # shellcheck disable=SC2086
    (cd "$MK_ROOT" && "$dir/bin/python" -m pip install -q --disable-pip-version-check $args)
    echo "$stamp" >"$stamp_file"
}

# mk_ensure_debs "CHECK-PATH PACKAGE" ... : apt-get install each Debian package
# whose CHECK-PATH is missing (one apt run for all of them); nothing when all
# are there. Used by the documentation step: Debian's libjs-mathjax (the site
# serves MathJax itself) and chromium (the browser check).
mk_ensure_debs() {
    local pair wanted=""
    for pair in "$@"; do
        if [ ! -e "${pair%% *}" ]; then wanted="$wanted ${pair#* }"; fi
    done
    if [ -z "$wanted" ]; then
        return 0
    fi
    mk_log "installing Debian packages:$wanted"
    mk_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    # shellcheck disable=SC2086
    mk_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $wanted >/dev/null
    for pair in "$@"; do
        if [ ! -e "${pair%% *}" ]; then
            echo "error: Debian package ${pair#* } installed but ${pair%% *} is missing" >&2
            return 1
        fi
    done
}

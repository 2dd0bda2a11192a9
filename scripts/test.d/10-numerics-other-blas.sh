# The numerically sensitive tests (marker `numerics`) once more under two
# other OpenBLAS kernels: sourced by scripts/test.sh (set -euo pipefail, cwd =
# repository root), after the whole suite ran under this CPU's own kernel.
#
# OpenBLAS picks its kernel from the CPU (Haswell on AVX2 machines, SkylakeX on
# AVX-512 ones, Zen 4/5 included), and each kernel sums in its own order, so a
# tolerance tuned to one CPU fails on another (a fresh clone did: 1.3e-10
# against 1e-10 under SkylakeX). OPENBLAS_CORETYPE forces a kernel; one that
# needs instructions the CPU lacks dies with "Illegal instruction", so SkylakeX
# runs only where the CPU has AVX-512 and Haswell only where it has AVX2.
# CONTRIBUTING.md ("Reproduce another machine") says how to do this by hand.

mk_blas_own="$(.venv/bin/python -c 'import numpy, threadpoolctl
print(next((i.get("architecture") or "?") for i in threadpoolctl.threadpool_info() if i["internal_api"] == "openblas"))')"
mk_blas_candidates="Sandybridge"
if grep -qw avx2 /proc/cpuinfo; then mk_blas_candidates="Haswell $mk_blas_candidates"; fi
if grep -qw avx512f /proc/cpuinfo; then mk_blas_candidates="SkylakeX $mk_blas_candidates"; fi
# Nehalem (SSE only) runs on every x86-64 CPU: the second kernel where the
# CPU offers only one other.
mk_blas_candidates="$mk_blas_candidates Nehalem"
mk_blas_others=""
for mk_kernel in $mk_blas_candidates; do
    if [ "$mk_kernel" != "$mk_blas_own" ] && [ "$(echo $mk_blas_others | wc -w)" -lt 2 ]; then
        mk_blas_others="$mk_blas_others $mk_kernel"
    fi
done
mk_log "numerics: this CPU's OpenBLAS kernel is $mk_blas_own; again under:$mk_blas_others"
for mk_kernel in $mk_blas_others; do
    mk_log "pytest -m numerics with OPENBLAS_CORETYPE=$mk_kernel"
    OPENBLAS_CORETYPE="$mk_kernel" .venv/bin/python -m pytest -p no:cacheprovider \
        -q -m numerics --durations=5 tests
done

"""Grams bit for bit as before (issue 50): the battery of ``_gram_battery.py``
recomputed and compared with the references stored from commit 0b25213.

Exact mode: where the floating-point environment is the reference's (the
fingerprint in ``tests/data/gram_battery.json``: BLAS libraries, their kernel
and version, the threads the battery pins, numpy/scipy/scikit-learn/numba
versions, the CPU numba compiles for), every array must be equal bit for bit
(values with NaN where NaN, and bytes). Elsewhere (another OpenBLAS kernel
through OPENBLAS_CORETYPE, another machine) the tolerance mode compares at
the bound of the rounding analysis below. Regenerate the references only
from a commit whose Grams are the reference: ``tests/make_gram_battery.py``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import _gram_battery as gb
import numpy as np
import pytest
from _helpers import UNIT_ROUNDOFF, conditioning_log_error

pytestmark = pytest.mark.numerics

DATA = Path(__file__).resolve().parent / "data"
NPZ = DATA / "gram_battery.npz"
SIDECAR = DATA / "gram_battery.json"

# -- tolerance mode: the rounding analysis -----------------------------------------
#
# Every quantity is a sum of O(d) exp/log terms built from the density's
# covariance S: the conditional covariances are Schur complements of S
# computed through Cholesky factors, with a normwise error of about
# d u kappa(S) ||S|| (Higham, Accuracy and Stability, Thm. 10.4, Sec. 13.3),
# and log E k moves by gamma per unit of covariance through the
# log-determinant and quadratic form of I + 2 gamma (A + B), a well
# conditioned matrix (eigenvalues >= 1, its Cholesky solve exact to d u).
# So one expected RBF, relative to its value, moves by at most
#     d u kappa(S) max(1, gamma ||S||)                  (_helpers' bound)
# between two BLAS kernels. On top of that, a constant C covers: the EM fit
# that produced S (each step factors S again; near convergence EM is a
# contraction of rate rho, so rounding accumulates to 1 / (1 - rho), ~10-30
# here), genRBF's three such terms (the Gram and two self-similarities), and
# the variances' cancellation E k^2 - (E k)^2 measured normwise (the largest
# variance is ~10x below the largest second moment). C = 1e3.
# Measured on this battery's covariances (d = 5, 6, 10): kappa(S) = 7 to 15
# for the EM, factor and mixture fits (gamma ||S|| <= 0.9; 8e5 at the wide
# gamma), 8.3e5 for the collinear table (ML fit) and 8.8e6 for the low-rank
# one: bounds (C included) 1.8e-12 to 4e-12 for the well-conditioned tables,
# 5.5e-7 (collinear) and 5e-6 (low rank); a case without a stored covariance
# (mixtures, latent classes) takes its table's largest. Under
# OPENBLAS_CORETYPE=Sandybridge and Nehalem against the Haswell references the
# largest error was 3.6% of its bound (a mixture variance on big_few, 1.4e-13);
# collinear 2.9e-9, low rank 1e-9. The bound is taken normwise:
# max |new - ref| <= rtol max |ref| per array.
SAFETY = 1e3
FLOOR = 1e-13  # the fixed quantities (no covariance), e.g. Belanche's kernels
# "fit": the factor density on big_few stops at tol=1e-5 after 430 EM steps
# still ~2e-4 from its limit (measured against tol=1e-12), so two rounding
# histories stop up to that far apart; against Haswell: 2.1e-4 (Sandybridge),
# 2.4e-4 (Nehalem).
FIT_RTOL = 2e-3


def _rounding_bound(S: np.ndarray, gamma: float) -> float:
    """``d u kappa(S) max(1, gamma ||S||)``: _helpers' bound, and at least the
    Cholesky solve's ``d u kappa(S)``."""
    S = np.asarray(S, dtype=float)
    floor = len(S) * UNIT_ROUNDOFF * float(np.linalg.cond(S))
    return max(conditioning_log_error(S, gamma), floor)


def rounding_tolerances(ref: dict[str, np.ndarray]) -> dict[str, float]:
    """Per case: SAFETY x the bound from its stored covariance (the density's,
    else the metric's) and gamma_, else the largest of its table's cases."""
    own: dict[str, float] = {}
    for key, S in ref.items():
        case, quantity = key.split("/", 1)
        if quantity in ("density_covariance_", "metric_covariance_"):
            g = ref.get(f"{case}/gamma_")
            gamma = float(np.max(g)) if g is not None else 1.0
            own[case] = max(own.get(case, 0.0), _rounding_bound(S, gamma))
    tables = gb.case_tables()
    per_table: dict[str, float] = {}
    for case, bound in own.items():
        per_table[tables[case]] = max(per_table.get(tables[case], 0.0), bound)
    return {
        case: max(FLOOR, SAFETY * own.get(case, per_table.get(table, 0.0)))
        for case, table in tables.items()
    }


# -- what changed on purpose since the reference -------------------------------------
#
# Two changes after 0b25213 move some bits, on purpose. First, the RBF family's
# cells were made one (rbf/_cells.py: the rules for the diagonal, the normalisation
# and the variance written once, each representation supplying its sums), and
# the factor cell, which had its own copies, now follows the shared rules.
# Two of its results move (all other Grams and variances, Gaussian/mixture/
# draws/mixed cells and every other family, stay bit for bit):
# - genRBF's Gram over factor conditionals is clipped at 1 in log space, as
#   the Gaussian cell's always was (|E k(X_i, Y_j)| <= sqrt(n_i n_j) by
#   Cauchy-Schwarz): the old cell let rounding exceed 1 (1 + 6 ulp measured).
#   Exactly: new == min(old, 1), bit for bit.
# - the factor cell's variance is E2 (1 - exp(2 log E1 - log E2)), the shared
#   form (no overflow when E2 / E1^2 is huge), instead of E1^2 (exp(log E2 -
#   2 log E1) - 1). Both are computed from the same logs (bit for bit the
#   old ones); each applies exp, expm1 and one product (numpy's exp and expm1
#   are within 1 ulp on this build, 4 ulp in the worst SIMD path), and the
#   rounded argument x = log E2 - 2 log E1 is the same number in both, up to
#   sign (fl(a - b) = -fl(b - a)), so they agree to (2 x 4 + 1) = 9 ulp of
#   each entry plus u |x| (|x| < 10 here): VARIANCE_ULPS = 16, normwise
#   (measured: 1.1 ulp).
VARIANCE_ULPS = 16
#
# Second, a change moves the expected Fourier features (issue 49): one compiled
# pass per row (rbf/engine/_fourier_compiled.py) instead of numpy's matmul,
# cos, sin and exp. Every Fourier map's features move (Gaussian, mixture,
# factor and draws: FOURIER_CASES; Nystroem's and the linear kernel's stay
# bit for bit). An entry is a cos(phase) sin(phase) exp(-q / 2) / sqrt(F)
# (a, the row's weight and genRBF's factor, is unchanged); with u the unit
# roundoff, P = max_f sum_j |x_j - c_j| |w_fj| over the rows and
# Q = max_f k sum_ab |C_ab| |w_fa| |w_fb| over the patterns (k missing):
# - the phase is a sum of d products, summed in another order than BLAS's:
#   each within d u P of the exact one (Higham, Thm. 3.1), so the entry moves
#   by at most 2 d u P times its amplitude;
# - the quadratic form q, k (k + 1) / 2 products summed in another order than
#   numpy's batched matmul and einsum: each within u Q, so exp(-q / 2) moves
#   by at most u Q (relative);
# - cos, sin (Taylor series after a reduction by pi / 2 in three parts) and
#   exp (by ln 2 in two parts): within 1 ulp measured, 4 ulp allowed, as
#   numpy's; 2 x 4 ulp between the two.
# - genRBF's factor exp(-log n_i / 2) over Gaussian conditionals: log n_i is
#   now -log det(I + 4 gamma C G_JJ) / 2 per pattern (an LU with pivoting of
#   a matrix with eigenvalues in [1, 1 + 4 gamma ||C G||]: within
#   k^2 u (1 + 4 gamma ||C|| ||G||) <= 115 u here, k <= 5, gamma ||S|| <= 0.9),
#   in place of the Gram's aligned row pairs (within the battery's
#   d u kappa(S) max(1, gamma ||S||) <= 75 u, kappa(S) <= 15, above): the
#   factor moves by half their sum, 95 u (measured against 40 digits on
#   20,000 rows of bench_scale: 2.5 u, and 49 u for the old value).
# So |new - old| <= u (2 d P + Q + 8) x the entry's amplitude, itself at most
# sqrt(2) max|ref| (cos^2 + sin^2 = 1 over the pair of entries), plus 95 u
# max|ref| for genRBF. Measured on the battery's tables (d = 5): P = 7.3 to
# 9.9, Q = 0 (draws) to 40: at most 150 u, normwise 210 u + 95 u:
# FOURIER_ULPS = 512 (measured: 1.8 u).
FOURIER_ULPS = 512
FOURIER_CASES = (
    "features_genrbf",
    "features_erbf_maha",
    "features_genrbf_mixture",
    "features_genrbf_factor",
    "features_genrbf_mice",
    "features_big",
)


def _changed_on_purpose(key: str) -> str | None:
    """How the arrays of ``key`` moved since the reference (above), or None."""
    case, quantity = key.split("/", 1)
    if case in FOURIER_CASES:
        return "fourier"
    if "factor" not in case or quantity.startswith("features"):
        return None
    if quantity.startswith("variance"):
        return "variance"
    grams = ("gram", "cross", "other", "pairs_diag")
    if case.startswith("genrbf") and quantity.split("#")[0] in grams:
        return "clipped"
    return None


def _compare_changed(kind: str, ref: np.ndarray, new: np.ndarray) -> str | None:
    if kind == "clipped":
        return gb.compare_exact(np.minimum(ref, 1.0), new)
    eps = np.finfo(np.float64).eps
    if kind == "fourier":
        return gb.compare_tolerance(ref, new, FOURIER_ULPS * eps)
    return gb.compare_tolerance(ref, new, VARIANCE_ULPS * eps)


# -- the comparison -------------------------------------------------------------------


def load_reference() -> tuple[dict[str, np.ndarray], dict]:
    with np.load(NPZ) as z:
        ref = {k: z[k] for k in z.files}
    return ref, json.loads(SIDECAR.read_text())


def compare(
    ref: dict[str, np.ndarray], new: dict[str, np.ndarray], exact: bool
) -> list[str]:
    """The failures (empty: all equal) of the stored-form arrays ``new``
    against ``ref``: bit for bit, or in the tolerance mode per class."""
    failures = []
    if set(ref) != set(new):
        missing, extra = sorted(set(ref) - set(new)), sorted(set(new) - set(ref))
        failures.append(f"keys differ: missing {missing[:5]}, new {extra[:5]}")
    rtols = None if exact else rounding_tolerances(ref)
    for key in sorted(set(ref) & set(new)):
        r, n = ref[key], new[key]
        changed = _changed_on_purpose(key)
        if exact and changed is not None:
            if key.endswith(gb.DIGEST_SUFFIX):
                continue  # the bits moved on purpose: the sample is compared
            why = _compare_changed(changed, r, n)
        elif exact:
            why = gb.compare_exact(r, n)
        elif key.endswith(gb.DIGEST_SUFFIX):
            continue  # the bits of a large array: exact mode only
        else:
            assert rtols is not None
            kind = gb.comparison_class(key)
            if kind == "draws":
                why = None if r.shape == n.shape else f"shape {r.shape} vs {n.shape}"
            else:
                rtol = FIT_RTOL if kind == "fit" else rtols[key.split("/")[0]]
                why = gb.compare_tolerance(r, n, rtol)
        if why is not None:
            failures.append(f"{key}: {why}")
    return failures


@pytest.mark.slow
def test_gram_battery():
    """Every array of the battery as stored from commit 0b25213: bit for bit
    in the reference's floating-point environment, else within the bound."""
    ref, sidecar = load_reference()
    recorded = sidecar["fingerprint"]
    differences = gb.fingerprint_differences(recorded, gb.fingerprint())
    exact = not differences
    start = time.perf_counter()
    new = gb.stored_form(gb.battery())
    seconds = time.perf_counter() - start
    failures = compare(ref, new, exact)
    if exact:
        mode = "EXACT mode (bit for bit: same BLAS kernel, versions and threads)"
    else:
        mode = (
            "TOLERANCE mode (floating-point environment differs from the "
            f"reference's: {'; '.join(differences)}; draws compared by shape only)"
        )
    import missingkernels

    print(
        f"{mode}; battery {seconds:.1f} s, {len(ref)} arrays; "
        f"missingkernels from {Path(missingkernels.__file__).parent}"
    )
    assert not failures, (
        f"{mode}: {len(failures)} of {len(ref)} arrays differ from "
        f"{sidecar['source']['commit'][:7]}'s (battery {seconds:.0f} s):\n  "
        + "\n  ".join(failures[:20])
    )


def test_comparison_catches_one_ulp():
    """The exact mode fails on an array moved by one ulp, on a digest, on a
    sign of zero; the tolerance mode accepts the ulp and rejects 1e-6."""
    ref, _ = load_reference()
    key = "genrbf_em/cross"
    # (the arrays changed on purpose differ from themselves as stored only
    # where genRBF's old factor Gram exceeded 1: see test_changed_on_purpose)
    unchanged = {k: v for k, v in ref.items() if _changed_on_purpose(k) is None}
    assert compare(unchanged, unchanged, exact=True) == []
    ref = unchanged
    moved = dict(ref)
    a = ref[key].copy()
    i = np.unravel_index(np.argmax(a < 1.0), a.shape)  # not a clipped 1.0
    a[i] = np.nextafter(a[i], np.inf)
    moved[key] = a
    failures = compare(ref, moved, exact=True)
    assert len(failures) == 1 and failures[0].startswith(key), failures
    assert compare(ref, moved, exact=False) == []
    moved[key] = ref[key] * (1.0 + 1e-6)
    assert compare(ref, moved, exact=False) != []

    digest = next(k for k in ref if k.endswith(gb.DIGEST_SUFFIX))
    flipped = dict(ref)
    flipped[digest] = ref[digest] ^ np.uint8(1)
    assert len(compare(ref, flipped, exact=True)) == 1
    assert compare(ref, flipped, exact=False) == []

    zero = np.array([0.0, 1.0])
    assert gb.compare_exact(zero, np.array([-0.0, 1.0])) is not None
    assert gb.compare_exact(np.array([np.nan]), np.array([np.nan])) is None


def test_changed_on_purpose():
    """The changes allowed since the reference are as narrow as said: a
    clipped Gram must equal min(old, 1) bit for bit (not the old array, not
    one ulp below 1), a variance must stay within VARIANCE_ULPS normwise, and
    they apply to the factor cases only; the Fourier maps' features within
    FOURIER_ULPS normwise, on their cases only."""
    ref, _ = load_reference()
    key = "genrbf_factor_maha/cross"
    assert _changed_on_purpose(key) == "clipped"
    assert (ref[key] > 1.0).any()  # the old cell's rounding above 1
    assert _compare_changed("clipped", ref[key], np.minimum(ref[key], 1.0)) is None
    assert _compare_changed("clipped", ref[key], ref[key]) is not None
    below = np.minimum(ref[key], np.nextafter(1.0, 0.0))
    assert _compare_changed("clipped", ref[key], below) is not None
    var = "erbf_factor/variance"
    assert _changed_on_purpose(var) == "variance"
    eps = np.finfo(np.float64).eps
    scale = np.abs(ref[var]).max()
    assert _compare_changed("variance", ref[var], ref[var] + eps * scale) is None
    moved = ref[var] + 2 * VARIANCE_ULPS * eps * scale
    assert _compare_changed("variance", ref[var], moved) is not None
    for unchanged in ("genrbf_em/cross", "erbf_em/variance", "genrbf_factor/features"):
        assert _changed_on_purpose(unchanged) is None
    # the Fourier maps' features: within FOURIER_ULPS normwise, their cases only
    feat = "features_genrbf/train"
    assert _changed_on_purpose(feat) == "fourier"
    scale = np.abs(ref[feat]).max()
    near = ref[feat] + 0.5 * FOURIER_ULPS * eps * scale
    assert _compare_changed("fourier", ref[feat], near) is None
    far = ref[feat] + 2 * FOURIER_ULPS * eps * scale
    assert _compare_changed("fourier", ref[feat], far) is not None
    for unchanged in ("features_nystroem/train", "features_linear/other"):
        assert _changed_on_purpose(unchanged) is None

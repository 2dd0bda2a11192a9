"""The rate sweeps' summaries (vignettes 8 and 9): mean rank per missing
rate (the genRBF paper's Figure 6), genRBF against the best imputation
pipeline and hgb by rate band, genRBF against the same density used to
impute (the kernel or the density?), and the answer sentences of their
reports."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

#: Rate bands of the sweeps' summaries (the genRBF paper's Figure 6 reads
#: low, middle and high rates apart).
BANDS = (("10-30%", 0.0, 0.35), ("40-50%", 0.35, 0.55), ("60%+", 0.55, 1.0))


def _ranked_blocks(results: Any, metric: str, blocks: Sequence[str]) -> Any:
    """Block scores (cells every method finished) and their ranks (1 best)."""
    from missingkernels.experiments import block_scores
    from missingkernels.experiments._report import common_cells

    scores = block_scores(common_cells(results), metric, blocks=blocks)
    return scores, scores.rank(axis=1, ascending=False)


def plot_rank_curves(results: Any, metric: str, blocks: Sequence[str], path: Path):  # type: ignore[no-untyped-def]
    """Mean rank per missing rate, one panel per mechanism (the genRBF
    paper's Figure 6); returns the table of mean ranks (rate x method) per
    mechanism as a dict."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from missingkernels.experiments._stats import CD_COLOURS

    _, ranks = _ranked_blocks(results, metric, blocks)
    by = ranks.groupby(level=["mechanism", "rate"]).mean()
    present = set(by.index.get_level_values("mechanism"))
    known = ["mcar", "mar", "mnar", "self_masking"]
    mechs = [m for m in known if m in present] + sorted(present - set(known))
    fig, axes = plt.subplots(
        1, len(mechs), figsize=(4.6 * len(mechs), 3.6), squeeze=False, sharey=True
    )
    tables = {}
    order = by.mean().sort_values().index
    for ax, mech in zip(axes.flat, mechs, strict=True):
        table = by.loc[mech][order]
        tables[mech] = table
        for i, method in enumerate(order):
            ax.plot(
                100 * table.index,
                table[method],
                marker="o",
                color=CD_COLOURS[i % len(CD_COLOURS)],
                label=method,
            )
        ax.set_title(mech.upper())
        ax.set_xlabel("missing entries (%)")
        ax.grid(alpha=0.3)
    axes.flat[0].set_ylabel(f"mean rank ({metric}; 1 = best)")
    axes.flat[0].invert_yaxis()
    axes.flat[-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return tables


def rank_tables(tables: Mapping[str, Any]) -> list[str]:
    """Markdown: mean rank per rate (columns) and method (rows), per mechanism."""
    lines: list[str] = []
    for mech, table in tables.items():
        rates = [f"{100 * r:g}%" for r in table.index]
        lines += [
            f"**{mech.upper()}**",
            "",
            "| method | " + " | ".join(rates) + " | all |",
            "|---|" + "---|" * (len(rates) + 1),
        ]
        for method in table.columns:
            cells = " | ".join(f"{v:.2f}" for v in table[method])
            lines.append(f"| {method} | {cells} | {table[method].mean():.2f} |")
        lines.append("")
    return lines


def band_table(
    results: Any,
    metric: str,
    ours: str,
    imputation: Sequence[str],
    blocks: Sequence[str],
    rival: str = "hgb",
) -> list[str]:
    """Markdown rows, per mechanism and rate band (:data:`BANDS`): the
    Friedman p over the band's blocks, the mean rank of ``ours``, of the best
    imputation pipeline (the one of ``imputation`` with the lowest mean rank
    in the band, picked after the fact) and of ``rival``; ``ours`` minus each
    (mean score difference over blocks, blocks where ours is higher / the
    same / lower); then, below the table (whose width stays that of a
    browser window), per band the pairs with ``ours`` that Holm leaves
    significant over all pairs of the band."""
    from missingkernels.experiments import friedman_nemenyi, pairwise_wilcoxon

    scores, ranks = _ranked_blocks(results, metric, blocks)
    lines = [
        f"| mech. | rates | blocks | Friedman p | {ours} rank | best imputation "
        f"| {rival} rank | {ours} - imputation | {ours} - {rival} |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    pairs = [
        "",
        f"Pairs with {ours} significant after Holm's correction (Wilcoxon "
        "signed-rank over the band's blocks):",
        "",
    ]
    for mech, band, sel in _bands(scores):
        s, r = scores[sel], ranks[sel]
        if ours not in s.columns:
            continue
        mean_rank = r.mean()
        have = [m for m in imputation if m in s.columns]
        imp = min(have, key=lambda m: mean_rank[m]) if have else None
        p = "-"
        if s.shape[0] >= 2 and s.shape[1] >= 3:
            p = f"{friedman_nemenyi(s).pvalue:.2g}"
        sig = "-"
        if s.shape[0] >= 2:
            pw = pairwise_wilcoxon(s).significant()
            pw = pw[(pw["method_a"] == ours) | (pw["method_b"] == ours)]
            sig = (
                ", ".join(
                    f"{row.method_a} {'>' if row.median_difference > 0 else '<'}"
                    f" {row.method_b}"
                    for row in pw.itertuples(index=False)
                )
                or "none"
            )

        rank = {m: f"{mean_rank[m]:.2f}" for m in s.columns}
        lines.append(
            f"| {mech} | {band} | {s.shape[0]} | {p} | {rank[ours]} | "
            + (f"{imp} ({rank[imp]})" if imp else "-")
            + f" | {rank.get(rival, '-')} | {_versus_blocks(s, ours, imp)} | "
            f"{_versus_blocks(s, ours, rival)} |"
        )
        pairs.append(f"- {mech} {band}: {sig}")
    return lines + pairs


def _versus_blocks(scores: Any, ours: str, other: str | None) -> str:
    """Mean of ours minus other over blocks, and the blocks where ours is
    higher / the same / lower."""
    if other is None or other not in scores.columns:
        return "-"
    d = scores[ours] - scores[other]
    higher, same = int((d > 0).sum()), int((d == 0).sum())
    return f"{d.mean():+.3f} ({higher}/{same}/{d.size - higher - same})"


def sweep_answer(
    results: Any,
    metric: str,
    ours: str,
    imputation: Sequence[str],
    blocks: Sequence[str],
    rival: str = "hgb",
    claim_parts: Callable[[Any, Any], Sequence[ClaimPart]] | None = None,
    claim_lineup: Sequence[str] = (),
    control: str | None = None,
) -> str:
    """Two to four sentences with the numbers: ``ours``'s mean rank over all
    blocks, per mechanism and rate band (:data:`BANDS`) whether it ranks
    ahead of the best imputation pipeline and of ``rival``, with ``control``
    how much it gains over the same density imputed
    (:func:`ablation_sentence`), and with ``claim_parts`` whether the
    paper's claim holds on ours (:func:`checked_claim`)."""
    from missingkernels.experiments import friedman_nemenyi

    scores, ranks = _ranked_blocks(results, metric, blocks)
    if scores.shape[0] < 2 or ours not in scores.columns:
        return f"Not enough finished blocks yet to rank {ours}."
    mean = ranks.mean().sort_values()
    place = list(mean.index).index(ours) + 1
    text = (
        f"Over {scores.shape[0]} blocks ({' x '.join(blocks)}), {ours} has mean "
        f"rank {mean[ours]:.2f}, {place} of {len(mean)} methods (best: "
        f"{mean.index[0]} {mean.iloc[0]:.2f}"
    )
    if scores.shape[1] >= 3:
        text += f"; Friedman p = {friedman_nemenyi(scores).pvalue:.2g}"
    text += ")."
    ahead_imp, ahead_rival, bands = [], [], 0
    for mech, band, sel in _bands(scores):
        bands += 1
        r = ranks[sel].mean()
        have = [m for m in imputation if m in r.index]
        label = f"{mech.upper()} {band}"
        if have and r[ours] < min(r[m] for m in have):
            ahead_imp.append(label)
        if rival in r.index and r[ours] < r[rival]:
            ahead_rival.append(label)
    text += (
        f" By mechanism and rate band, {ours} ranks ahead of the best imputation "
        f"pipeline of the band in {len(ahead_imp)} of {bands} bands"
        + (f" ({', '.join(ahead_imp)})" if ahead_imp else "")
        + f" and ahead of {rival} in {len(ahead_rival)} of {bands}"
        + (f" ({', '.join(ahead_rival)})" if ahead_rival else "")
        + "; the table below gives the ranks, differences and tests."
    )
    if control is not None:
        text += ablation_sentence(results, metric, ours, control, blocks)
    if claim_parts is not None:
        parts, _ = checked_claim(results, metric, blocks, claim_parts, claim_lineup)
        if parts:
            failed = [t.split(":")[0] for t, holds in parts if not holds]
            text += (
                f" The paper's claim, among its methods that we run, is "
                f"{_verdict_word(parts)} ({sum(h for _, h in parts)} of "
                f"{len(parts)} parts hold"
                + (f"; not: {'; '.join(failed)}" if failed else "")
                + ")."
            )
    return text


# -- the kernel or the density? ----------------------------------------------------


def ablation_rows(
    results: Any, metric: str, ours: str, control: str, blocks: Sequence[str]
) -> list[dict[str, Any]]:
    """``ours`` against ``control`` over all blocks, then per mechanism and
    rate band (:data:`BANDS`): blocks, mean difference of ``metric`` in
    points (100 x, ours minus control), blocks ours wins / ties / loses, the
    two-sided Wilcoxon signed-rank p (zero differences dropped) and, for the
    bands, that p adjusted by Holm's method over the bands. Only blocks
    where both methods (and every other method of the run) finished count.
    Empty when either method has no result."""
    from missingkernels.experiments import holm, pairwise_wilcoxon

    scores, _ = _ranked_blocks(results, metric, blocks)
    if ours not in scores.columns or control not in scores.columns:
        return []

    def row(label: str, band: str, s: Any) -> dict[str, Any]:
        pair = s[[ours, control]]
        test = pairwise_wilcoxon(pair).table.iloc[0]
        return {
            "mechanism": label,
            "band": band,
            "blocks": int(pair.shape[0]),
            "difference": float(100 * (pair[ours] - pair[control]).mean()),
            "wins": int(test["wins"]),
            "ties": int(test["ties"]),
            "losses": int(test["losses"]),
            "pvalue": float(test["pvalue"]),
        }

    rows = [row("all", "all rates", scores)]
    bands = [row(mech.upper(), band, scores[sel]) for mech, band, sel in _bands(scores)]
    adjusted = holm([r["pvalue"] for r in bands]) if bands else []
    for r, p in zip(bands, adjusted, strict=True):
        r["pvalue_holm"] = float(p)
    return rows + bands


def ablation_table(
    results: Any,
    metric: str,
    ours: str,
    control: str,
    blocks: Sequence[str],
    what: str,
) -> list[str]:
    """Markdown: the section "the kernel or the density?" (:func:`ablation_rows`
    as a table, ``what`` saying what ``control`` is)."""
    rows = ablation_rows(results, metric, ours, control, blocks)
    head = ["## The kernel or the density?", ""]
    if not rows:
        return [*head, f"No results of {ours} and {control} in the same blocks yet."]
    lines = [
        *head,
        f"`{control}` is {what}: it differs from `{ours}` only in imputing "
        f"instead of averaging the kernel over the missing entries. {ours} minus "
        f"{control} in {metric}, in points (100 x {metric}; mean over blocks), "
        "the blocks where it is higher / the same / lower, and the two-sided "
        "Wilcoxon signed-rank p over the blocks (zero differences dropped), "
        "Holm-adjusted over the bands of the table.",
        "",
        "| mech. | rates | blocks | difference (points) | higher / same / lower "
        "| Wilcoxon p | Holm p |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        holm_p = f"{r['pvalue_holm']:.2g}" if "pvalue_holm" in r else "-"
        lines.append(
            f"| {r['mechanism']} | {r['band']} | {r['blocks']} | "
            f"{r['difference']:+.2f} | {r['wins']} / {r['ties']} / {r['losses']} "
            f"| {r['pvalue']:.2g} | {holm_p} |"
        )
    return lines


def ablation_sentence(
    results: Any, metric: str, ours: str, control: str, blocks: Sequence[str]
) -> str:
    """One sentence: ``ours`` against ``control`` over all blocks and the
    bands where Holm leaves the difference significant (empty without
    results)."""
    rows = ablation_rows(results, metric, ours, control, blocks)
    if not rows:
        return ""
    overall, bands = rows[0], rows[1:]
    sig = [
        f"{r['mechanism']} {r['band']} {r['difference']:+.2f} (Holm p "
        f"{r['pvalue_holm']:.2g})"
        for r in bands
        if r["pvalue_holm"] <= 0.05
    ]
    return (
        f" Against `{control}`, the same density imputing its conditional means "
        f"before the same SVM, {ours} scores {overall['difference']:+.2f} points "
        f"of {metric} over {overall['blocks']} blocks ({overall['wins']} higher, "
        f"{overall['losses']} lower; Wilcoxon p = {overall['pvalue']:.2g}); "
        + (
            "significant after Holm's correction in "
            + ", ".join(sig)
            + " of the mechanism x rate bands"
            if sig
            else "no mechanism x rate band is significant after Holm's correction"
        )
        + "."
    )


def _control_section(
    results: Any, metric: str, blocks: Sequence[str], control: tuple[str, str] | None
) -> list[str]:
    """The section "the kernel or the density?" and, where both ran, the mean
    ranks of the two IterativeImputer pipelines (one draw; conditional
    means): what "iterative imputation" scores depends on which is meant."""
    if control is None:
        return []
    lines = [*ablation_table(results, metric, "genrbf", control[0], blocks, control[1])]
    _, ranks = _ranked_blocks(results, metric, blocks)
    if {"iterative", "iterative_mean"} <= set(ranks.columns):
        mean = ranks.mean()
        lines += [
            "",
            f"IterativeImputer as the genRBF paper ran MICE (`iterative`, one "
            f"posterior draw) has mean rank {mean['iterative']:.2f} of "
            f"{len(mean)}; at scikit-learn's defaults (`iterative_mean`, "
            f"conditional means) {mean['iterative_mean']:.2f}.",
        ]
    return [*lines, ""]


def _bands(scores: Any) -> Any:
    """``(mechanism, band label, row mask)`` of every mechanism and rate band
    (:data:`BANDS`) with blocks in ``scores`` (indexed by mechanism, rate)."""
    mech_level = scores.index.get_level_values("mechanism")
    for mech in sorted(mech_level.unique()):
        for band, lo, hi in BANDS:
            sel = (mech_level == mech) & rates_between(scores, lo, hi)
            if sel.any():
                yield mech, band, sel


# -- the paper's claim beside ours ------------------------------------------------

#: A part of a paper's claim checked on our blocks: the sentence with our
#: numbers, and whether it holds.
ClaimPart = tuple[str, bool]


def rates_between(scores: Any, lo: float, hi: float) -> Any:
    """Row mask of the blocks with ``lo < rate <= hi`` (all mechanisms)."""
    rate = scores.index.get_level_values("rate").astype(float)
    return (rate > lo) & (rate <= hi)


def best_rank_part(ranks: Any, ours: str, sel: Any, where: str) -> ClaimPart:
    """``ours`` has the lowest mean rank of the selected blocks."""
    mean = ranks[sel].mean().sort_values()
    holds = bool(mean.index[0] == ours)
    best = "" if holds else f"; best {mean.index[0]} {mean.iloc[0]:.2f}"
    return (
        f"{ours} has the best mean rank {where}: {ours} {mean[ours]:.2f}, "
        f"{list(mean.index).index(ours) + 1} of {len(mean)}{best}",
        holds,
    )


def significantly_ahead_part(
    scores: Any,
    ours: str,
    sel: Any,
    where: str,
    of: Sequence[str] | None = None,
    expected: bool = True,
) -> ClaimPart:
    """``ours`` is significantly ahead of every other method (or of those in
    ``of``) on the selected blocks: Wilcoxon signed-rank, Holm over all pairs
    of those blocks. With ``expected=False`` the part is that it is *not*
    significantly ahead of any of them."""
    from missingkernels.experiments import pairwise_wilcoxon

    s = scores[sel]
    others = [m for m in s.columns if m != ours and (of is None or m in of)]
    whom = "every other method" if of is None else ", ".join(of)
    if s.shape[0] < 2:
        return f"{ours} against {whom} {where}: fewer than 2 blocks", False
    sig = pairwise_wilcoxon(s).significant()
    beaten = set()
    for row in sig.itertuples(index=False):
        if row.method_a == ours and row.median_difference > 0:
            beaten.add(row.method_b)
        elif row.method_b == ours and row.median_difference < 0:
            beaten.add(row.method_a)
    ahead = [m for m in others if m in beaten]
    missed = [m for m in others if m not in beaten]
    tested = f"{where} (Wilcoxon, Holm; {s.shape[0]} blocks)"
    if not expected:
        text = f"{ours} is not significantly ahead of {whom} {tested}"
        return text + (": it is of " + ", ".join(ahead) if ahead else ""), not ahead
    text = f"{ours} is significantly ahead of {whom} {tested}"
    return text + (": not of " + ", ".join(missed) if missed else ""), not missed


def ranks_ahead_part(ranks: Any, a: str, b: str, sel: Any, where: str) -> ClaimPart:
    """``a`` has a lower (better) mean rank than ``b`` on the selected blocks."""
    mean = ranks[sel].mean()
    return (
        f"{a} ranks ahead of {b} {where}: {a} {mean[a]:.2f}, {b} {mean[b]:.2f}",
        bool(mean[a] < mean[b]),
    )


def rank_worsens_part(
    ranks: Any, method: str, low: Any, high: Any, bands: str
) -> ClaimPart:
    """``method``'s mean rank is worse (higher) on the ``high`` blocks than on
    the ``low`` ones."""
    a, b = ranks[low][method].mean(), ranks[high][method].mean()
    return f"{method}'s mean rank worsens {bands}: {a:.2f} to {b:.2f}", bool(b > a)


def _verdict_word(parts: Sequence[ClaimPart]) -> str:
    held = sum(holds for _, holds in parts)
    if held == len(parts):
        return "reproduced"
    return "not reproduced" if held == 0 else "partly reproduced"


def checked_claim(
    results: Any,
    metric: str,
    blocks: Sequence[str],
    claim_parts: Callable[[Any, Any], Sequence[ClaimPart]],
    claim_lineup: Sequence[str],
) -> tuple[list[ClaimPart], list[str]]:
    """The parts of the paper's claim checked on our blocks, with ranks and
    tests among the methods of ``claim_lineup`` that have results (the
    claim is about the paper's comparison); no parts when too few blocks or
    methods."""
    scores, _ = _ranked_blocks(results, metric, blocks)
    lineup = [m for m in claim_lineup if m in scores.columns]
    if scores.shape[0] < 2 or "genrbf" not in lineup or len(lineup) < 3:
        return [], lineup
    scores = scores[lineup]
    return list(claim_parts(scores, scores.rank(axis=1, ascending=False))), lineup


def claim_verdict(parts: Sequence[ClaimPart], lineup: Sequence[str]) -> list[str]:
    """Markdown: each part of the paper's claim with our numbers (ranks and
    tests among the methods of ``lineup``, the paper's), and the verdict:
    reproduced (every part holds), partly, or not reproduced (none holds)."""
    held = sum(holds for _, holds in parts)
    verdict = _verdict_word(parts)
    lines = [
        f"**Beside ours: {verdict}** ({held} of {len(parts)} parts hold; "
        f"ranks and tests among the paper's methods that we run: "
        f"{', '.join(lineup)}).",
        "",
    ]
    lines += [
        f"- {'holds' if holds else 'does not hold'}: {text}." for text, holds in parts
    ]
    return lines


def sweep_report(
    results: Any,
    extra: Mapping[str, Any],
    metric: str,
    imputation: Sequence[str],
    blocks: Sequence[str],
    claim: str,
    figure: str = "",
    claim_parts: Callable[[Any, Any], Sequence[ClaimPart]] | None = None,
    claim_lineup: Sequence[str] = (),
    control: tuple[str, str] | None = None,
) -> str:
    """The rate sweeps' own sections (vignettes 8 and 9): genrbf against the
    best imputation pipeline and hgb by rate band (:func:`band_table`), with
    ``control`` (a method and what it is) the section "the kernel or the
    density?" (:func:`ablation_table`, and the mean ranks of ``iterative``
    and ``iterative_mean`` where both ran), the
    paper's claim and, with ``claim_parts`` (``(scores, ranks)`` of the
    blocks to its parts), the claim checked on ours among the methods of
    ``claim_lineup`` (:func:`claim_verdict`), and the mean rank per rate
    (table and figure)."""
    verdict: list[str] = []
    if claim_parts is not None:
        parts, lineup = checked_claim(
            results, metric, blocks, claim_parts, claim_lineup
        )
        if parts:
            verdict = ["", *claim_verdict(parts, lineup)]
    tables = plot_rank_curves(
        results, metric, blocks, extra["out"] / "ranks_by_rate.png"
    )
    lines = [
        "## genRBF against the best imputation pipeline and hgb, by rate band",
        "",
        f"Per mechanism and band: the blocks ({' x '.join(blocks)}), Friedman's "
        "p over all methods, mean ranks (1 = best) of genrbf, of the imputation "
        "pipeline with the best mean rank in the band (picked after the fact, "
        f"which favours it) and of hgb; genrbf minus each in {metric} (mean over "
        "blocks; blocks where genrbf is higher / the same / lower); below it, "
        "the pairs with genrbf that the Wilcoxon signed-rank test leaves "
        "significant after Holm's correction over all pairs of the band.",
        "",
        *band_table(results, metric, "genrbf", imputation, blocks),
        "",
        *_control_section(results, metric, blocks, control),
        claim,
        *verdict,
        "",
        f"## Mean rank per missing rate{figure}",
        "",
        *rank_tables(tables),
        "![ranks_by_rate.png](ranks_by_rate.png)",
    ]
    return "\n".join(lines)

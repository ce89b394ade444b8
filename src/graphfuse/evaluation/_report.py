"""Writing an evaluation report: a markdown table and a bar chart (matplotlib, Agg backend)."""

from __future__ import annotations

import os
from pathlib import Path

from .._core._errors import InvalidInput
from ._gaps import GAP_METRICS, multihop_gaps
from ._harness import EvalReport

__all__ = ["context_table", "fusion_rows", "fusion_table", "gap_table", "markdown_table", "write_report"]

_COLUMNS = (
    ("recall@2", "R@2", "{:.3f}"),
    ("recall@5", "R@5", "{:.3f}"),
    ("ndcg@10", "nDCG@10", "{:.3f}"),
    ("mrr", "MRR", "{:.3f}"),
    ("latency_p50_ms", "p50 ms", "{:.1f}"),
    ("latency_p95_ms", "p95 ms", "{:.1f}"),
    ("context_tokens@5", "tokens@5", "{:.0f}"),
    ("n_queries", "queries", "{}"),
)


def markdown_table(report: EvalReport) -> str:
    """One row per pipeline; a note above the table when the run was not complete."""
    lines = []
    if not report.complete:
        lines += ["**Incomplete run:** " + "; ".join(report.warnings), ""]
    if report.scoring:
        lines += [f"Scoring: {report.scoring}.", ""]
    lines.append("| pipeline | " + " | ".join(c[1] for c in _COLUMNS) + " |")
    lines.append("|---|" + "---:|" * len(_COLUMNS))
    for name, metrics in report.pipelines.items():
        values = metrics.as_json()
        lines.append(f"| {name} | " + " | ".join(fmt.format(values[key]) for key, _, fmt in _COLUMNS) + " |")
    return "\n".join(lines) + "\n" + gap_table(report) + fusion_table(report)


def fusion_rows(report: EvalReport) -> list[tuple[str, ...]]:
    """``(pipeline, fusion, signal, mean, min, max, queries)`` per weighted signal, formatted: the
    weights each pipeline with more than one weighted signal gave per query (``fusion`` is
    ``fixed`` or ``adaptive s=S``, S the strength). Pipelines of one signal (``bm25``, ``minimal``) and
    scorers that are not weighted sums (``hybrid``'s reciprocal rank fusion) are left out."""
    rows: list[tuple[str, ...]] = []
    for name, metrics in report.pipelines.items():
        fusion = metrics.fusion
        if fusion is None or sum(1 for w in fusion.weights.values() if w.max > 0.0) < 2:
            continue
        kind = "fixed" if not fusion.adaptive else f"adaptive s={fusion.strength:.2f}"
        for signal, w in fusion.weights.items():
            rows.append((name, kind, signal, f"{w.mean:.3f}", f"{w.min:.3f}", f"{w.max:.3f}", str(w.n_queries)))
    return rows


def fusion_table(report: EvalReport) -> str:
    """:func:`fusion_rows` as a markdown table; empty when there are none."""
    rows = fusion_rows(report)
    if not rows:
        return ""
    lines = [
        "",
        "Fusion weights per query (`contribution / value`, over the queries whose results hold the signal):",
        "",
        "| pipeline | fusion | signal | mean | min | max | queries |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def gap_table(report: EvalReport) -> str:
    """``multihop`` against the best of ``bm25``, ``minimal``/``vector``, ``hybrid`` per metric, a
    negative gap in bold with **NEGATIVE**; empty unless ``multihop`` and one of them were run."""
    gaps = multihop_gaps(report.pipelines)
    if not gaps:
        return ""
    labels = dict(GAP_METRICS)
    lines = [
        "",
        "Gap of `multihop` to the best of its parts (`bm25`, `minimal`, `hybrid`, those run):",
        "",
        "| metric | multihop | best part | best | gap | |",
        "|---|---:|---|---:|---:|---|",
    ]
    for g in gaps:
        gap = f"**{g.gap:+.3f}**" if g.negative else f"{g.gap:+.3f}"
        flag = "**NEGATIVE**" if g.negative else ""
        lines.append(f"| {labels[g.metric]} | {g.multihop:.3f} | {g.best_pipeline} | {g.best:.3f} | {gap} | {flag} |")
    return "\n".join(lines) + "\n"


def context_table(report: EvalReport) -> str:
    """The context metrics (answer in context, mean tokens) per pipeline/format; empty without them."""
    ctx = report.context
    if ctx is None:
        return ""
    lines = [
        f"Context budget {ctx.budget} tokens ({ctx.counter}); `<pipeline>/passages` is the top-5 passages whole. "
        f"Left out: {ctx.skipped_yes_no} yes/no questions, {ctx.skipped_no_answer} without an answer.",
        "",
        "| pipeline/format | answer in context | tokens | questions |",
        "|---|---:|---:|---:|",
    ]
    for key, m in ctx.entries.items():
        lines.append(f"| {key} | {m.answer_in_context:.3f} | {m.context_tokens:.0f} | {m.n} |")
    return "\n".join(lines) + "\n"


def _context_curve(report: EvalReport, path: Path, title: str) -> None:
    import matplotlib.pyplot as plt

    ctx = report.context
    assert ctx is not None
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    for key, points in ctx.curve.items():
        ax.plot([m.context_tokens for m in points], [m.answer_in_context for m in points], marker="o", label=key)
    for key, m in ctx.entries.items():
        if key.endswith("/passages"):
            ax.scatter([m.context_tokens], [m.answer_in_context], marker="s", label=key, zorder=3)
    ax.set_xlabel(f"mean context tokens ({ctx.counter})")
    ax.set_ylabel("answer in context")
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_report(report: EvalReport, directory: str | os.PathLike[str], *, title: str = "GraphFuse evaluation") -> Path:
    """Write ``report.md`` and ``recall.png`` (R@2/R@5 per pipeline) into ``directory``; returns the markdown path."""
    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise InvalidInput(f"report path {str(out)!r} is a file, not a directory")
    out.mkdir(parents=True, exist_ok=True)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(report.pipelines)
    r2 = [report.pipelines[n].recall_at_2 for n in names]
    r5 = [report.pipelines[n].recall_at_5 for n in names]
    fig, ax = plt.subplots(figsize=(max(4.0, 1.3 * len(names) + 1.5), 3.5))
    positions = range(len(names))
    ax.bar([p - 0.2 for p in positions], r2, width=0.4, label="Recall@2")
    ax.bar([p + 0.2 for p in positions], r5, width=0.4, label="Recall@5")
    ax.set_xticks(list(positions), names, rotation=20, ha="right")
    ax.set_ylim(0, 1)
    ax.set_title(title + ("" if report.complete else " (incomplete)"))
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(out / "recall.png", dpi=110)
    plt.close(fig)
    md = out / "report.md"
    text = f"# {title}\n\n{markdown_table(report)}\n![Recall per pipeline](recall.png)\n"
    if report.context is not None:
        _context_curve(report, out / "context.png", title)
        text += f"\n## Context\n\n{context_table(report)}\n![Answer in context against tokens](context.png)\n"
    md.write_text(text, encoding="utf-8")
    return md

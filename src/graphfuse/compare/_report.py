"""Writing a comparison report: a markdown table and PNG charts (matplotlib, Agg backend)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from .._core._errors import InvalidInput
from ._harness import ComparisonReport
from ._judge import CRITERIA

__all__ = ["markdown_report", "write_report"]

_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("prompt_tokens_mean", "prompt tok", "{:.0f}"),
    ("completion_tokens_mean", "completion tok", "{:.1f}"),
    ("latency_p50_ms", "p50 ms", "{:.0f}"),
    ("exact_match", "EM", "{:.3f}"),
    ("f1", "F1", "{:.3f}"),
    ("bertscore_f1", "BERTScore F1", "{:.3f}"),
    ("context_contains_answer", "answer in context", "{:.3f}"),
    ("judge.score", "judge score", "{:.2f}"),
    ("judge.pass_rate", "pass rate", "{:.3f}"),
    ("judge.failures", "judge failures", "{}"),
    ("judge.failures_malformed", "malformed verdicts", "{}"),
    ("judge.failures_timeout", "judge timeouts", "{}"),
    ("answer_chars_mean", "answer chars", "{:.0f}"),
    ("errors", "errors", "{}"),
    ("errors_timeout", "answer timeouts", "{}"),
    ("retries", "answer retries", "{}"),
    ("judge.retries", "judge retries", "{}"),
)


def _value(summary: dict[str, Any], key: str) -> Any:
    head, _, tail = key.partition(".")
    value = summary.get(head)
    if tail:
        value = None if not isinstance(value, dict) else value.get(tail)
    return value


def _cell(value: Any, fmt: str) -> str:
    return "n/a" if value is None else fmt.format(value)


def markdown_report(report: ComparisonReport) -> str:
    """The report as markdown: notes, one row per pipeline, the settings (judge, model, order)."""
    data = report.to_dict()
    lines = ["# GraphFuse answer comparison", ""]
    for note in report.notes:
        lines.append(f"- **Note:** {note}")
    if report.notes:
        lines.append("")
    lines.append("| pipeline | " + " | ".join(label for _, label, _ in _COLUMNS) + " |")
    lines.append("|---|" + "---:|" * len(_COLUMNS))
    for name, summary in data["pipelines"].items():
        cells = [_cell(_value(summary, key), fmt) for key, _, fmt in _COLUMNS]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    sources = {name: s["usage_source"] for name, s in data["pipelines"].items()}
    lines += [
        "",
        "Token numbers: "
        + ", ".join(f"{n} {src or 'n/a'}" for n, src in sources.items())
        + " ('provider': as the API reported them; 'counted': counted by GraphFuse).",
        f"{len(report.questions)} questions, {len(report.pipelines)} pipelines, {report.elapsed_s:.1f} s"
        + (" (interrupted: only what finished is reported)." if report.interrupted else "."),
        _bertscore_line(report.settings.get("bertscore")),
        "",
        "## Settings",
        "",
        "```json",
        json.dumps(report.settings, indent=2, sort_keys=True),
        "```",
        "",
        "![tokens](tokens.png) ![judge](judge_radar.png) ![latency](latency.png)",
        "",
    ]
    return "\n".join(lines)


def _bertscore_line(settings: Any) -> str:
    if not isinstance(settings, dict):
        return "BERTScore F1: not computed (`graphfuse compare --bertscore`)."
    return (
        f"BERTScore F1: reference model {settings.get('model')}, layer {settings.get('layer')}, "
        f"idf {'on' if settings.get('idf') else 'off'}, not rescaled with a baseline "
        "(raw scores, not comparable with published rescaled BERTScores)."
    )


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else 0.0


def write_report(report: ComparisonReport, directory: str | os.PathLike[str]) -> Path:
    """Write ``report.md``, ``report.json``, ``tokens.png``, ``judge_radar.png`` and ``latency.png``.

    Returns the markdown path. Pipelines without verdicts are left out of the radar chart
    (it says so when none has any).
    """
    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise InvalidInput(f"report path {str(out)!r} is a file, not a directory")
    out.mkdir(parents=True, exist_ok=True)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    data = report.to_dict()
    names = list(data["pipelines"])
    summaries = [data["pipelines"][n] for n in names]
    x = np.arange(len(names))

    fig, ax = plt.subplots(figsize=(max(5.0, 1.6 * len(names)), 3.6))
    prompt = [_number(s["prompt_tokens_mean"]) for s in summaries]
    completion = [_number(s["completion_tokens_mean"]) for s in summaries]
    ax.bar(x - 0.2, prompt, 0.4, label="prompt")
    ax.bar(x + 0.2, completion, 0.4, label="completion")
    ax.set_xticks(x, names)
    ax.set_ylabel("tokens per answer (mean)")
    ax.set_title("Tokens per pipeline")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "tokens.png", dpi=110)
    plt.close(fig)

    angles = [i * 2 * math.pi / len(CRITERIA) for i in range(len(CRITERIA))]
    fig = plt.figure(figsize=(4.8, 4.8))
    polar = fig.add_subplot(projection="polar")
    plotted = 0
    for name, summary in zip(names, summaries, strict=True):
        judge = summary.get("judge")
        if not judge or judge.get("score") is None:
            continue
        values = [_number(judge[c]) for c in CRITERIA]
        polar.plot([*angles, angles[0]], [*values, values[0]], label=name)
        polar.fill([*angles, angles[0]], [*values, values[0]], alpha=0.1)
        plotted += 1
    polar.set_xticks(angles, list(CRITERIA))
    polar.set_ylim(0, 10)
    polar.set_title("LLM judge (0-10)" if plotted else "LLM judge: no verdicts")
    if plotted:
        polar.legend(loc="lower right", bbox_to_anchor=(1.25, -0.1))
    fig.tight_layout()
    fig.savefig(out / "judge_radar.png", dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(max(5.0, 1.6 * len(names)), 3.6))
    retrieval = [_number(s["retrieval_p50_ms"]) for s in summaries]
    generation = [_number(s["generation_p50_ms"]) for s in summaries]
    ax.bar(x, retrieval, 0.5, label="retrieval p50")
    ax.bar(x, generation, 0.5, bottom=retrieval, label="generation p50")
    ax.set_xticks(x, names)
    ax.set_ylabel("ms")
    ax.set_title("Latency per answer (median)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "latency.png", dpi=110)
    plt.close(fig)

    (out / "report.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    path = out / "report.md"
    path.write_text(markdown_report(report), encoding="utf-8")
    return path

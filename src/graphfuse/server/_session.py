"""``GET /v1/stats/session``: tokens per pipeline since the server started, beside basic RAG.

Every context assembled (``/v1/context``) and every answer generated (``/v1/compare``) adds
its tokens to its pipeline's running total, per tenant. ``tokens_saved`` compares each
pipeline with the baseline (basic RAG: the ``minimal`` preset's passages): the baseline's mean
tokens per call times the pipeline's calls, minus the pipeline's own tokens. Positive means the
pipeline sent fewer tokens than basic RAG would have for as many calls. Answers are counted
by prompt tokens under ``compare:<pipeline>`` and compared with ``compare:basic``.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

__all__ = ["BASELINE", "COMPARE_BASELINE", "SessionStats"]

BASELINE = "minimal:passages"
COMPARE_BASELINE = "compare:basic"


@dataclass
class _Total:
    calls: int = 0
    tokens: int = 0


class SessionStats:
    """Running token totals per tenant and pipeline label (``preset:format``)."""

    def __init__(self, baseline: str = BASELINE) -> None:
        self.baseline = baseline
        self._lock = threading.Lock()
        self._totals: dict[str | None, dict[str, _Total]] = defaultdict(lambda: defaultdict(_Total))

    def record(self, tenant: str | None, label: str, tokens: int) -> None:
        with self._lock:
            total = self._totals[tenant][label]
            total.calls += 1
            total.tokens += tokens

    def snapshot(self, tenant: str | None) -> dict[str, Any]:
        with self._lock:
            totals = {label: _Total(t.calls, t.tokens) for label, t in self._totals.get(tenant, {}).items()}
        means = {label: t.tokens / t.calls for label, t in totals.items() if t.calls}
        pipelines: dict[str, Any] = {}
        for label, t in sorted(totals.items()):
            base_mean = means.get(COMPARE_BASELINE if label.startswith("compare:") else self.baseline)
            entry: dict[str, Any] = {
                "calls": t.calls,
                "tokens": t.tokens,
                "mean_tokens": round(t.tokens / t.calls, 1) if t.calls else 0.0,
                "tokens_saved": None,
            }
            if base_mean is not None:
                entry["tokens_saved"] = round(base_mean * t.calls - t.tokens, 1)
            pipelines[label] = entry
        return {"baseline": self.baseline, "pipelines": pipelines}

"""``/v1/compare``: LLM only, basic RAG and GraphRAG answers side by side, judged against a gold answer.

The two retrieving pipelines assemble their contexts inside the tenant's scope; the answers'
contexts carry the ids the tenant knows. A failure of one answer or verdict is reported in its
place; the tokens each answer's prompt took are counted in the session.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from .._core._errors import GraphFuseError
from .._core._filters import MetadataFilter
from .._retrieval._pipeline import Pipeline
from ..compare import basic_rag, graphrag, llm_only
from ..context import aretrieve_context
from ._problems import Problem
from ._scope import Scope
from ._session import SessionStats

__all__ = ["compare_answers"]

logger = logging.getLogger("graphfuse.server")


class _Scoped:
    """A pipeline whose contexts are always assembled within one tenant's filter."""

    def __init__(self, pipeline: Pipeline, flt: MetadataFilter | None) -> None:
        self._pipeline = pipeline
        self._filter = flt

    async def acontext(self, query: str, **options: Any) -> Any:
        return await aretrieve_context(self._pipeline, query, filter=self._filter, **options)

    def __repr__(self) -> str:
        return repr(self._pipeline)


async def compare_answers(
    session: SessionStats,
    scope: Scope,
    question: str,
    *,
    basic: Pipeline,
    graph: Pipeline,
    generator: Any,
    judge: Any,
    gold: str | None,
    budget: int,
    max_answer_tokens: int,
) -> dict[str, Any]:
    """The three answers to ``question`` (and verdicts with ``gold`` and a ``judge``): :meth:`Service.compare`."""
    flt = scope.filter(None)
    pipelines = {
        "llm_only": llm_only(),
        "basic": basic_rag(_Scoped(basic, flt), budget=budget),
        "graph": graphrag(_Scoped(graph, flt), budget=budget, format="graph"),
    }
    outcomes = await asyncio.gather(
        *(p.aanswer(question, generator, max_tokens=max_answer_tokens) for p in pipelines.values()),
        return_exceptions=True,
    )
    answers: dict[str, Any] = {}
    texts: dict[str, str] = {}
    for name, outcome in zip(pipelines, outcomes, strict=True):
        if isinstance(outcome, GraphFuseError):
            answers[name] = {"error": str(outcome)}
            continue
        if isinstance(outcome, BaseException):
            raise outcome
        data = outcome.to_dict()
        context = data.get("context")
        if isinstance(context, dict):
            for entry in (*context.get("sources", ()), *context.get("dropped", ())):
                external = scope.external(entry["id"])
                if external is None:
                    logger.error("answer context for tenant %r held %r: refused", scope.tenant, entry["id"])
                    raise Problem(500, "internal error; the server's log has the details")
                if isinstance(context.get("text"), str):
                    context["text"] = context["text"].replace(entry["id"], external)
                entry["id"] = external
        answers[name] = {**data, "latency_s": data["retrieval_latency_s"] + data["generation_latency_s"]}
        texts[name] = outcome.text
        session.record(scope.tenant, f"compare:{name}", int(outcome.prompt_tokens))
    verdicts: dict[str, Any] = {}
    if judge is not None and gold:
        judged = await asyncio.gather(
            *(judge.ajudge(question, text, gold) for text in texts.values()), return_exceptions=True
        )
        for name, verdict in zip(texts, judged, strict=True):
            if isinstance(verdict, GraphFuseError):
                verdicts[name] = {"error": str(verdict)}
            elif isinstance(verdict, BaseException):
                raise verdict
            else:
                verdicts[name] = verdict.to_dict()
    notes = [] if judge is not None and gold else ["no judge verdicts: give 'answer' (the expected answer)"]
    return {"question": question, "answers": answers, "verdicts": verdicts, "notes": notes}

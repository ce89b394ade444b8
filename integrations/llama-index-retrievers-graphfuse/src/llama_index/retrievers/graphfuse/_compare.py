"""LlamaIndex in GraphFuse's answer comparison: LLMs as generators, retrievers and query engines as pipelines.

::

    from graphfuse.compare import acompare_pipelines
    from llama_index.retrievers.graphfuse import LlamaIndexAnswerPipeline, LlamaIndexGenerator

    report = await acompare_pipelines(
        questions, {"my_engine": LlamaIndexAnswerPipeline(query_engine)}, LlamaIndexGenerator(llm)
    )
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.llms import LLM
from llama_index.core.schema import NodeWithScore

import graphfuse
from graphfuse import InvalidInput, Result
from graphfuse.compare import (
    CONTEXT_PROMPT,
    Answer,
    ContextPipeline,
    EmptyAnswer,
    Generation,
    Generator,
    Retrieved,
    check_messages,
    count_messages,
    default_counter,
)

__all__ = ["LlamaIndexAnswerPipeline", "LlamaIndexGenerator"]

_ROLES = {"system": MessageRole.SYSTEM, "user": MessageRole.USER, "assistant": MessageRole.ASSISTANT}


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _usage(raw: object, extra: Mapping[str, Any]) -> tuple[int, int] | None:
    # OpenAI-style usage: in additional_kwargs (llama-index-llms-openai) or on the raw response.
    prompt, completion = _int(extra.get("prompt_tokens")), _int(extra.get("completion_tokens"))
    if prompt is not None and completion is not None:
        return prompt, completion
    usage = raw.get("usage") if isinstance(raw, Mapping) else getattr(raw, "usage", None)
    if isinstance(usage, Mapping):
        prompt, completion = _int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens"))
    else:
        prompt, completion = (
            _int(getattr(usage, "prompt_tokens", None)),
            _int(getattr(usage, "completion_tokens", None)),
        )
    return None if prompt is None or completion is None else (prompt, completion)


class LlamaIndexGenerator:
    """A LlamaIndex ``LLM`` as a :class:`graphfuse.compare.Generator` (through its native ``achat``).

    Token usage is the provider's when the response carries OpenAI-style usage (in
    ``additional_kwargs`` or ``raw``), else counted. ``max_tokens`` is passed to ``achat`` as
    ``max_tokens_param`` when one is named (LlamaIndex LLMs usually take it at construction, so
    the default is ``None``). ``context_window`` defaults to the LLM's ``metadata.context_window``.
    """

    def __init__(
        self,
        llm: LLM,
        *,
        name: str | None = None,
        context_window: int | None = None,
        max_tokens_param: str | None = None,
    ) -> None:
        if not isinstance(llm, LLM):
            raise InvalidInput(f"llm must be a LlamaIndex LLM, got {type(llm).__name__}")
        self._llm = llm
        metadata = llm.metadata
        self.model = name or metadata.model_name or type(llm).__name__
        window = context_window if context_window is not None else metadata.context_window
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise InvalidInput(f"context_window must be a positive int of tokens, got {window!r}")
        self.context_window = window
        self.max_tokens_param = max_tokens_param

    def __repr__(self) -> str:
        return f"LlamaIndexGenerator({self.model!r})"

    async def agenerate(self, messages: list[dict[str, str]], *, max_tokens: int | None = None) -> Generation:
        """Send the messages as LlamaIndex chat messages; the answer and its usage."""
        checked = check_messages(messages)
        converted = [ChatMessage(role=_ROLES[m["role"]], content=m["content"]) for m in checked]
        options = {self.max_tokens_param: max_tokens} if max_tokens is not None and self.max_tokens_param else {}
        started = time.perf_counter()
        response = await self._llm.achat(converted, **options)
        latency = time.perf_counter() - started
        text = response.message.content or ""
        usage = _usage(response.raw, response.additional_kwargs)
        if usage is not None:
            return Generation(text, usage[0], usage[1], "provider", latency)
        counter = default_counter()
        return Generation(text, count_messages(checked, counter), counter.count(text), "counted", latency)


def _results(nodes: Sequence[NodeWithScore]) -> list[Result]:
    out = []
    for rank, item in enumerate(nodes):
        node = item.node
        metadata = {k: v for k, v in node.metadata.items() if isinstance(k, str)}
        score = 1.0 / (rank + 1)
        out.append(Result(graphfuse.Document(node.node_id, node.get_content(), metadata), score, {}))
    return out


class LlamaIndexAnswerPipeline:
    """A LlamaIndex retriever or query engine as a :class:`graphfuse.compare.AnswerPipeline`.

    A retriever's nodes are assembled into a ``passages`` or ``evidence`` context within
    ``budget`` tokens (:func:`graphfuse.context.abuild_context`, best first) and the
    comparison's generator answers from it, like the built-in pipelines. A query engine answers
    with its own LLM: its response is the answer, its source nodes the context (for answer
    containment), and its tokens are counted from the question and the answer only (the
    engine's own prompt is not visible), which the answer's ``extra`` says.
    """

    def __init__(
        self,
        component: BaseRetriever | BaseQueryEngine,
        *,
        budget: int = 3000,
        format: str = "passages",
        system_prompt: str = CONTEXT_PROMPT,
        name: str | None = None,
    ) -> None:
        if not isinstance(component, (BaseRetriever, BaseQueryEngine)):
            raise InvalidInput(
                f"component must be a LlamaIndex retriever or query engine, got {type(component).__name__}"
            )
        if format not in ("passages", "evidence"):
            raise InvalidInput(
                f"format must be 'passages' or 'evidence' (the graph format needs a graph store), got {format!r}"
            )
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise InvalidInput(f"budget must be a positive int of tokens, got {budget!r}")
        self._component = component
        self.budget = budget
        self.format = format
        self.system_prompt = system_prompt
        self.settings = {
            "kind": name or "llamaindex",
            "component": type(component).__qualname__,
            "budget": budget,
            "format": format,
        }
        blob = json.dumps([system_prompt, self.settings], sort_keys=True)
        self._fingerprint = hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def fingerprint(self) -> str:
        """A hash of the prompt and settings."""
        return self._fingerprint

    async def aanswer(self, question: str, generator: Generator, *, max_tokens: int) -> Answer:
        """Retrieve and generate, or let the query engine answer."""
        started = time.perf_counter()
        if isinstance(self._component, BaseRetriever):
            nodes = await self._component.aretrieve(question)
            from graphfuse.context import abuild_context

            context = await abuild_context(question, _results(nodes), budget=self.budget, format=self.format)
            elapsed = time.perf_counter() - started
            retrieved = Retrieved(context.to_dict())

            async def fixed(_: str) -> Retrieved:
                return retrieved

            pipeline = ContextPipeline(fixed, system_prompt=self.system_prompt, settings=self.settings)
            answer = await pipeline.aanswer(question, generator, max_tokens=max_tokens)
            return dataclasses.replace(answer, retrieval_latency_s=elapsed)
        response = await self._component.aquery(question)
        elapsed = time.perf_counter() - started
        text = str(getattr(response, "response", None) or "").strip()
        if not text:
            raise EmptyAnswer("the query engine returned an empty answer")
        sources = list(getattr(response, "source_nodes", None) or [])
        source_context: dict[str, Any] | None = None
        if sources:
            from graphfuse.context import abuild_context

            built = await abuild_context(question, _results(sources), budget=self.budget, format="passages")
            source_context = built.to_dict()
        counter = default_counter()
        return Answer(
            text=text,
            prompt_tokens=counter.count(question),
            completion_tokens=counter.count(text),
            usage_source="counted",
            retrieval_latency_s=0.0,
            generation_latency_s=elapsed,
            context=source_context,
            extra={
                "answered_by": "query engine",
                "tokens": "counted from the question and the answer only: the engine's own prompt is not visible",
            },
        )

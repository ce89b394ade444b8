"""LlamaIndex in GraphFuse's answer comparison: LLMs as generators, retrievers and query engines as pipelines.

::

    from graphfuse.compare import acompare_pipelines
    from llama_index.retrievers.graphfuse import LlamaIndexAnswerPipeline, LlamaIndexGenerator

    report = await acompare_pipelines(
        questions, {"my_engine": LlamaIndexAnswerPipeline(query_engine)}, LlamaIndexGenerator(llm)
    )
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.llms import LLM
from llama_index.core.schema import NodeWithScore

from graphfuse import InvalidInput
from graphfuse.compare import (
    CONTEXT_PROMPT,
    Answer,
    Generation,
    Generator,
    HostAnswerPipeline,
    HostDocument,
    check_context_window,
    check_messages,
    host_generation,
    usage_pair,
)

__all__ = ["LlamaIndexAnswerPipeline", "LlamaIndexGenerator"]

_ROLES = {"system": MessageRole.SYSTEM, "user": MessageRole.USER, "assistant": MessageRole.ASSISTANT}


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
        self.context_window = check_context_window(
            metadata.context_window if context_window is None else context_window
        )
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
        # OpenAI-style usage: in additional_kwargs (llama-index-llms-openai) or on the raw response.
        raw = response.raw
        usage = usage_pair(response.additional_kwargs) or usage_pair(
            raw.get("usage") if isinstance(raw, Mapping) else getattr(raw, "usage", None)
        )
        return host_generation(checked, response.message.content or "", usage, latency)


def _documents(nodes: Sequence[NodeWithScore]) -> list[HostDocument]:
    return [(n.node.node_id, n.node.get_content(), n.node.metadata) for n in nodes]


class LlamaIndexAnswerPipeline(HostAnswerPipeline):
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
        super().__init__(
            component,
            kind="llamaindex",
            component_key="component",
            budget=budget,
            format=format,
            system_prompt=system_prompt,
            name=name,
        )
        self._component = component

    async def aanswer(self, question: str, generator: Generator, *, max_tokens: int) -> Answer:
        """Retrieve and generate, or let the query engine answer."""
        started = time.perf_counter()
        if isinstance(self._component, BaseRetriever):
            nodes = await self._component.aretrieve(question)
            return await self.answer_from_documents(
                question, _documents(nodes), generator, max_tokens=max_tokens, started=started
            )
        response = await self._component.aquery(question)
        return await self.answer_from_host(
            question,
            str(getattr(response, "response", None) or ""),
            latency_s=time.perf_counter() - started,
            answered_by="query engine",
            prompt_owner="engine",
            sources=_documents(list(getattr(response, "source_nodes", None) or [])),
        )

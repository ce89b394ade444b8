"""LangChain in GraphFuse's answer comparison: chat models as generators, retrievers and runnables as pipelines.

::

    from graphfuse.compare import acompare_pipelines
    from langchain_graphfuse import LangChainAnswerPipeline, LangChainGenerator

    report = await acompare_pipelines(
        questions, {"my_chain": LangChainAnswerPipeline(retriever)}, LangChainGenerator(chat_model)
    )
"""

from __future__ import annotations

import time
from typing import Any

from langchain_core.documents import Document
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable

from graphfuse import InvalidInput
from graphfuse.compare import (
    CONTEXT_PROMPT,
    Answer,
    Generation,
    Generator,
    HostAnswerPipeline,
    check_context_window,
    check_messages,
    host_generation,
    usage_pair,
)

__all__ = ["LangChainAnswerPipeline", "LangChainGenerator"]

_MESSAGES = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}


def _text(message: object) -> str:
    content = getattr(message, "content", message)
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks
        return "".join(
            p if isinstance(p, str) else str(p.get("text", "")) for p in content if isinstance(p, (str, dict))
        )
    raise InvalidInput(f"the chat model answered a {type(message).__name__}, not a message with text content")


def _usage(message: object) -> tuple[int, int] | None:
    return usage_pair(getattr(message, "usage_metadata", None), "input_tokens", "output_tokens")


class LangChainGenerator:
    """A LangChain chat model (any ``Runnable`` taking messages) as a :class:`graphfuse.compare.Generator`.

    Token usage is the model's ``usage_metadata`` when it reports one (``"provider"``), else
    counted (``"counted"``). ``max_tokens`` is bound to the call as ``max_tokens_param``
    (``"max_tokens"``; ``None`` leaves the model's own setting). ``context_window`` (tokens)
    makes the comparison refuse prompts that cannot fit before calling the model.
    """

    def __init__(
        self,
        model: Runnable[Any, Any],
        *,
        name: str | None = None,
        context_window: int | None = None,
        max_tokens_param: str | None = "max_tokens",
    ) -> None:
        if not isinstance(model, Runnable):
            raise InvalidInput(f"model must be a LangChain chat model (a Runnable), got {type(model).__name__}")
        self.context_window = check_context_window(context_window)
        self._model = model
        found = name or getattr(model, "model_name", None) or getattr(model, "model", None)
        self.model = found if isinstance(found, str) and found else type(model).__name__
        self.max_tokens_param = max_tokens_param

    def __repr__(self) -> str:
        return f"LangChainGenerator({self.model!r})"

    async def agenerate(self, messages: list[dict[str, str]], *, max_tokens: int | None = None) -> Generation:
        """Send the messages as LangChain messages; the answer and its usage."""
        checked = check_messages(messages)
        runnable = self._model
        if max_tokens is not None and self.max_tokens_param:
            runnable = runnable.bind(**{self.max_tokens_param: max_tokens})
        started = time.perf_counter()
        reply = await runnable.ainvoke([_MESSAGES[m["role"]](content=m["content"]) for m in checked])
        return host_generation(checked, _text(reply), _usage(reply), time.perf_counter() - started)


class LangChainAnswerPipeline(HostAnswerPipeline):
    """A LangChain retriever or runnable as a :class:`graphfuse.compare.AnswerPipeline`.

    The runnable is invoked with the question. When it returns documents (a retriever, or a
    chain ending in one), they are assembled into a ``passages`` or ``evidence`` context within
    ``budget`` tokens (:func:`graphfuse.context.abuild_context`, best first) and the
    comparison's generator answers from it, like the built-in pipelines. When it returns text
    or a message (a chain with its own model), that is the answer: its tokens are the
    message's ``usage_metadata``, else counted from the question and the answer only (the
    chain's own prompt is not visible), which the answer's ``extra`` says.
    """

    def __init__(
        self,
        runnable: Runnable[Any, Any],
        *,
        budget: int = 3000,
        format: str = "passages",
        system_prompt: str = CONTEXT_PROMPT,
        name: str | None = None,
    ) -> None:
        if not isinstance(runnable, Runnable):
            raise InvalidInput(f"runnable must be a LangChain retriever or runnable, got {type(runnable).__name__}")
        super().__init__(
            runnable,
            kind="langchain",
            component_key="runnable",
            budget=budget,
            format=format,
            system_prompt=system_prompt,
            name=name,
        )
        self._runnable = runnable

    async def aanswer(self, question: str, generator: Generator, *, max_tokens: int) -> Answer:
        """Invoke the runnable; answer from its documents, or take its answer."""
        started = time.perf_counter()
        output = await self._runnable.ainvoke(question)
        if isinstance(output, list) and all(isinstance(d, Document) for d in output):
            documents = ((d.id or str(d.metadata.get("id") or "") or None, d.page_content, d.metadata) for d in output)
            return await self.answer_from_documents(
                question, documents, generator, max_tokens=max_tokens, started=started
            )
        if not isinstance(output, (str, BaseMessage)):
            raise InvalidInput(
                f"the runnable returned {type(output).__name__}: expected documents (a retriever) or text/a message"
            )
        return await self.answer_from_host(
            question,
            _text(output),
            latency_s=time.perf_counter() - started,
            answered_by="runnable",
            prompt_owner="chain",
            usage=_usage(output),
        )

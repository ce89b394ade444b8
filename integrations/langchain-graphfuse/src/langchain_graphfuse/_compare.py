"""LangChain in GraphFuse's answer comparison: chat models as generators, retrievers and runnables as pipelines.

::

    from graphfuse.compare import acompare_pipelines
    from langchain_graphfuse import LangChainAnswerPipeline, LangChainGenerator

    report = await acompare_pipelines(
        questions, {"my_chain": LangChainAnswerPipeline(retriever)}, LangChainGenerator(chat_model)
    )
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from collections.abc import Sequence
from typing import Any

from langchain_core.documents import Document
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable

import graphfuse
from graphfuse import InvalidInput, Result
from graphfuse.compare import (
    CONTEXT_PROMPT,
    Answer,
    ContextPipeline,
    Generation,
    Generator,
    Retrieved,
    check_messages,
    count_messages,
    default_counter,
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
    usage = getattr(message, "usage_metadata", None)
    if (
        isinstance(usage, dict)
        and isinstance(usage.get("input_tokens"), int)
        and isinstance(usage.get("output_tokens"), int)
    ):
        return usage["input_tokens"], usage["output_tokens"]
    return None


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
        if context_window is not None and (
            isinstance(context_window, bool) or not isinstance(context_window, int) or context_window < 1
        ):
            raise InvalidInput(f"context_window must be a positive int of tokens, got {context_window!r}")
        self._model = model
        found = name or getattr(model, "model_name", None) or getattr(model, "model", None)
        self.model = found if isinstance(found, str) and found else type(model).__name__
        self.context_window = context_window
        self.max_tokens_param = max_tokens_param

    def __repr__(self) -> str:
        return f"LangChainGenerator({self.model!r})"

    async def agenerate(self, messages: list[dict[str, str]], *, max_tokens: int | None = None) -> Generation:
        """Send the messages as LangChain messages; the answer and its usage."""
        checked = check_messages(messages)
        converted = [_MESSAGES[m["role"]](content=m["content"]) for m in checked]
        runnable = self._model
        if max_tokens is not None and self.max_tokens_param:
            runnable = runnable.bind(**{self.max_tokens_param: max_tokens})
        started = time.perf_counter()
        reply = await runnable.ainvoke(converted)
        latency = time.perf_counter() - started
        text = _text(reply)
        usage = _usage(reply)
        if usage is not None:
            return Generation(text, usage[0], usage[1], "provider", latency)
        counter = default_counter()
        return Generation(text, count_messages(checked, counter), counter.count(text), "counted", latency)


def _results(documents: Sequence[Document]) -> list[Result]:
    out = []
    for rank, doc in enumerate(documents):
        doc_id = doc.id or str(doc.metadata.get("id") or f"document-{rank + 1}")
        metadata = {k: v for k, v in doc.metadata.items() if isinstance(k, str)}
        out.append(Result(graphfuse.Document(doc_id, doc.page_content, metadata), 1.0 / (rank + 1), {}))
    return out


class LangChainAnswerPipeline:
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
        if format not in ("passages", "evidence"):
            raise InvalidInput(
                f"format must be 'passages' or 'evidence' (the graph format needs a graph store), got {format!r}"
            )
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise InvalidInput(f"budget must be a positive int of tokens, got {budget!r}")
        self._runnable = runnable
        self.budget = budget
        self.format = format
        self.system_prompt = system_prompt
        self.settings = {
            "kind": name or "langchain",
            "runnable": type(runnable).__qualname__,
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
        """Invoke the runnable; answer from its documents, or take its answer."""
        started = time.perf_counter()
        output = await self._runnable.ainvoke(question)
        elapsed = time.perf_counter() - started
        if isinstance(output, list) and all(isinstance(d, Document) for d in output):
            from graphfuse.context import abuild_context

            context = await abuild_context(question, _results(output), budget=self.budget, format=self.format)
            retrieved = Retrieved(context.to_dict())

            async def fixed(_: str) -> Retrieved:
                return retrieved

            pipeline = ContextPipeline(fixed, system_prompt=self.system_prompt, settings=self.settings)
            answer = await pipeline.aanswer(question, generator, max_tokens=max_tokens)
            return dataclasses.replace(answer, retrieval_latency_s=elapsed + answer.retrieval_latency_s)
        if not isinstance(output, (str, BaseMessage)):
            raise InvalidInput(
                f"the runnable returned {type(output).__name__}: expected documents (a retriever) or text/a message"
            )
        text = _text(output).strip()
        if not text:
            from graphfuse.compare import EmptyAnswer

            raise EmptyAnswer("the runnable returned an empty answer")
        usage = _usage(output)
        extra: dict[str, Any] = {"answered_by": "runnable"}
        if usage is None:
            counter = default_counter()
            usage = (counter.count(question), counter.count(text))
            extra["tokens"] = "counted from the question and the answer only: the chain's own prompt is not visible"
        return Answer(
            text=text,
            prompt_tokens=usage[0],
            completion_tokens=usage[1],
            usage_source="provider" if "tokens" not in extra else "counted",
            retrieval_latency_s=0.0,
            generation_latency_s=elapsed,
            context=None,
            extra=extra,
        )

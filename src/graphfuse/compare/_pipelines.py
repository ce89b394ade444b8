"""Answer pipelines: how a question becomes an answer (retrieve a context, then generate)."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol, runtime_checkable

from .._core._errors import InvalidInput, NotFound
from .._retrieval._pipeline import Pipeline
from ..context import aretrieve_context
from ._generation import ContextWindowExceeded, Generator, describe_generator
from ._tokens import count_messages, default_counter

__all__ = [
    "ANSWER_PROMPT",
    "BUILTIN_PIPELINES",
    "CONTEXT_PROMPT",
    "Answer",
    "AnswerPipeline",
    "ContextPipeline",
    "EmptyAnswer",
    "Retrieved",
    "basic_rag",
    "builtin_pipelines",
    "context_pipeline",
    "graphrag",
    "llm_only",
]

ANSWER_PROMPT = (
    "Answer the question from your own knowledge. Give only the answer, as short as possible "
    "(a name, a date, yes or no, or a short phrase), without explanation. If you do not know, say 'unknown'."
)
"""The system prompt of ``llm_only``."""

CONTEXT_PROMPT = (
    "Answer the question using the context below. Give only the answer, as short as possible "
    "(a name, a date, yes or no, or a short phrase), without explanation. If the context does not "
    "contain the answer, say 'unknown'."
)
"""The system prompt of the pipelines that answer from a retrieved context."""


class EmptyAnswer(InvalidInput):
    """The generator returned an empty (or whitespace-only) answer."""


@dataclass(frozen=True)
class Retrieved:
    """What a pipeline retrieved for one question: the context text and where it came from.

    ``context`` is the ``to_dict()`` of a :class:`graphfuse.context.Context` (``text``,
    ``tokens``, ``counter``, ``sources``, ``dropped``) or any dict with at least ``text``.
    """

    context: Mapping[str, Any]

    @property
    def text(self) -> str:
        text = self.context.get("text")
        if not isinstance(text, str):
            raise InvalidInput("a retrieved context must carry its 'text' as a string")
        return text


@dataclass(frozen=True)
class Answer:
    """One pipeline's answer to one question, with its costs.

    Token numbers are the provider's when ``usage_source == "provider"``, else counted.
    ``context`` is the context dict the answer was generated from (``None`` for ``llm_only``).
    """

    text: str
    prompt_tokens: int
    completion_tokens: int
    usage_source: str
    retrieval_latency_s: float
    generation_latency_s: float
    context: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the on-disk cache stores this)."""
        return {
            "text": self.text,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "usage_source": self.usage_source,
            "retrieval_latency_s": self.retrieval_latency_s,
            "generation_latency_s": self.generation_latency_s,
            "context": None if self.context is None else dict(self.context),
            "extra": dict(self.extra),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Answer:
        """The inverse of :meth:`to_dict`."""
        return cls(**{k: data[k] for k in cls.__dataclass_fields__})


@runtime_checkable
class AnswerPipeline(Protocol):
    """Turns a question into an :class:`Answer` with a generator.

    ``fingerprint`` is a string that changes whenever the pipeline would answer differently
    (its prompt, budget, format): it is part of the cache key of every answer. Implement this
    to compare anything - the LlamaIndex and LangChain integrations adapt their hosts'
    retrievers, query engines and runnables to it.
    """

    @property
    def fingerprint(self) -> str: ...

    async def aanswer(self, question: str, generator: Generator, *, max_tokens: int) -> Answer: ...


RetrieveFn = Callable[[str], Awaitable[Retrieved | None]]


def _messages(system: str, question: str, context: str | None) -> list[dict[str, str]]:
    user = f"Question: {question}" if context is None else f"Context:\n{context}\n\nQuestion: {question}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


class ContextPipeline:
    """Retrieve a context (or none), then ask the generator: the shape of all three built-ins.

    ``retrieve(question)`` returns a :class:`Retrieved` or ``None`` (answer without context).
    Before the call, the prompt is counted; when the generator declares a ``context_window``
    and the prompt plus ``max_tokens`` do not fit, :class:`ContextWindowExceeded` is raised
    with the numbers. An empty answer raises :class:`EmptyAnswer`.
    """

    def __init__(self, retrieve: RetrieveFn | None, *, system_prompt: str, settings: Mapping[str, Any]) -> None:
        if retrieve is not None and not callable(retrieve):
            raise InvalidInput("retrieve must be an async callable(question) -> Retrieved | None")
        if not isinstance(system_prompt, str) or not system_prompt.strip():
            raise InvalidInput("system_prompt must be a non-empty string")
        self._retrieve = retrieve
        self.system_prompt = system_prompt
        self.settings = dict(settings)
        blob = json.dumps([system_prompt, self.settings], sort_keys=True, default=str)
        self._fingerprint = hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def fingerprint(self) -> str:
        """A hash of the prompt and settings."""
        return self._fingerprint

    def __repr__(self) -> str:
        return f"ContextPipeline({self.settings})"

    async def aanswer(self, question: str, generator: Generator, *, max_tokens: int) -> Answer:
        """Retrieve, check the window, generate."""
        started = time.perf_counter()
        retrieved = None if self._retrieve is None else await self._retrieve(question)
        retrieval = time.perf_counter() - started
        context = None if retrieved is None else retrieved.text
        messages = _messages(self.system_prompt, question, context)
        window = getattr(generator, "context_window", None)
        if isinstance(window, int) and not isinstance(window, bool):
            counter = default_counter()
            prompt_tokens = count_messages(messages, counter)
            if prompt_tokens + max_tokens > window:
                raise ContextWindowExceeded(
                    prompt_tokens=prompt_tokens,
                    max_tokens=max_tokens,
                    context_window=window,
                    counter=counter.name,
                    model=describe_generator(generator),
                )
        generation = await generator.agenerate(messages, max_tokens=max_tokens)
        if not generation.text.strip():
            raise EmptyAnswer(f"the generator ({describe_generator(generator)}) returned an empty answer")
        return Answer(
            text=generation.text.strip(),
            prompt_tokens=generation.prompt_tokens,
            completion_tokens=generation.completion_tokens,
            usage_source=generation.usage_source,
            retrieval_latency_s=retrieval,
            generation_latency_s=generation.latency_s,
            context=None if retrieved is None else dict(retrieved.context),
        )


def _describe(obj: object) -> str:
    # A repr that is stable across runs (it is part of the cache key): not the default one with an address.
    # A pipeline's passage selection decides what the model reads (passages or whole documents, how
    # many of a page): it is part of the key too.
    out = repr(obj) if type(obj).__repr__ is not object.__repr__ else type(obj).__qualname__
    passages = getattr(obj, "passages", None)
    return out if passages is None else f"{out} with {passages!r}"


def _context_dict(context: Any) -> Mapping[str, Any]:
    to_dict = getattr(context, "to_dict", None)
    data = to_dict() if callable(to_dict) else context
    if not isinstance(data, Mapping) or not isinstance(data.get("text"), str):
        raise InvalidInput(f"acontext() must return a graphfuse.context.Context, got {type(context).__name__}")
    return data


def context_pipeline(
    pipeline: Any,
    *,
    budget: int = 3000,
    format: str = "passages",
    top_k: int | None = None,
    system_prompt: str = CONTEXT_PROMPT,
    name: str | None = None,
) -> ContextPipeline:
    """Answer from the context of ``pipeline`` for each question (``budget=, format=, top_k=``).

    A GraphFuse :class:`~graphfuse.Pipeline` goes through :func:`graphfuse.context.aretrieve_context`;
    any other object needs an ``acontext(question, budget=, format=, top_k=)`` method. ``budget``
    is the context's token budget, ``format`` one of ``passages``, ``evidence``, ``graph`` (see
    :mod:`graphfuse.context`).
    """
    acontext = (
        partial(aretrieve_context, pipeline) if isinstance(pipeline, Pipeline) else getattr(pipeline, "acontext", None)
    )
    if not callable(acontext):
        raise InvalidInput(
            f"{type(pipeline).__name__} has no acontext(): pass a graphfuse Pipeline "
            "(or adapt your retriever with the LlamaIndex/LangChain integration)"
        )
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise InvalidInput(f"budget must be a positive int of tokens, got {budget!r}")

    async def retrieve(question: str) -> Retrieved:
        options: dict[str, Any] = {"budget": budget, "format": format}
        if top_k is not None:
            options["top_k"] = top_k
        return Retrieved(_context_dict(await acontext(question, **options)))

    settings = {
        "kind": name or "context",
        "pipeline": _describe(pipeline),
        "budget": budget,
        "format": format,
        "top_k": top_k,
    }
    return ContextPipeline(retrieve, system_prompt=system_prompt, settings=settings)


def llm_only(*, system_prompt: str = ANSWER_PROMPT) -> ContextPipeline:
    """The question alone, with a system prompt (no retrieval)."""
    return ContextPipeline(None, system_prompt=system_prompt, settings={"kind": "llm_only"})


def basic_rag(
    pipeline: Any, *, budget: int = 3000, top_k: int = 5, system_prompt: str = CONTEXT_PROMPT
) -> ContextPipeline:
    """Vector search's ``top_k`` passages within ``budget`` tokens (basic RAG: the top 5 by default).

    ``pipeline`` is a vector-search pipeline, e.g. ``presets.minimal(vectors, embedder, graph)``.
    """
    return context_pipeline(
        pipeline, budget=budget, format="passages", top_k=top_k, system_prompt=system_prompt, name="basic_rag"
    )


def graphrag(
    pipeline: Any,
    *,
    budget: int = 3000,
    format: str = "evidence",
    top_k: int | None = None,
    system_prompt: str = CONTEXT_PROMPT,
) -> ContextPipeline:
    """Graph retrieval (e.g. the ``multihop`` preset) with the ``evidence`` or ``graph`` context."""
    if format not in ("evidence", "graph", "passages"):
        raise InvalidInput(f"graphrag format must be 'evidence', 'graph' or 'passages', got {format!r}")
    return context_pipeline(
        pipeline, budget=budget, format=format, top_k=top_k, system_prompt=system_prompt, name="graphrag"
    )


BUILTIN_PIPELINES = ("llm_only", "basic_rag", "graphrag")
"""The names :func:`builtin_pipelines` knows."""


def builtin_pipelines(
    names: Sequence[str],
    *,
    vector: Any = None,
    graph: Any = None,
    budget: int = 3000,
    top_k: int = 5,
    graph_format: str = "evidence",
) -> dict[str, ContextPipeline]:
    """The built-in answer pipelines ``names`` (of :data:`BUILTIN_PIPELINES`), by name.

    ``basic_rag`` needs ``vector`` (a vector-search pipeline, e.g. the ``minimal`` preset),
    ``graphrag`` needs ``graph`` (e.g. the ``multihop`` preset). An unknown name raises
    :class:`~graphfuse.NotFound` listing the known ones; a missing retrieval pipeline
    :class:`~graphfuse.InvalidInput`.
    """
    if isinstance(names, str) or not names:
        raise InvalidInput(f"names must be a non-empty list of pipeline names, got {names!r}")
    unknown = [n for n in names if n not in BUILTIN_PIPELINES]
    if unknown:
        raise NotFound(f"unknown pipeline {unknown[0]!r}; built-in pipelines: {', '.join(BUILTIN_PIPELINES)}")
    out: dict[str, ContextPipeline] = {}
    for name in dict.fromkeys(names):
        if name == "llm_only":
            out[name] = llm_only()
        elif name == "basic_rag":
            if vector is None:
                raise InvalidInput("pipeline 'basic_rag' needs a vector-search pipeline: pass vector=")
            out[name] = basic_rag(vector, budget=budget, top_k=top_k)
        else:
            if graph is None:
                raise InvalidInput("pipeline 'graphrag' needs a graph retrieval pipeline: pass graph=")
            out[name] = graphrag(graph, budget=budget, format=graph_format)
    return out

"""What the integrations' generators and answer pipelines share; each host adds only its own calls."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .._core._errors import InvalidInput
from .._core._types import Document, Result
from ..context import abuild_context
from ._generation import Generation, Generator
from ._pipelines import CONTEXT_PROMPT, Answer, ContextPipeline, EmptyAnswer, Retrieved
from ._tokens import count_messages, default_counter

__all__ = [
    "HostAnswerPipeline",
    "HostDocument",
    "check_context_window",
    "host_generation",
    "ranked_results",
    "usage_pair",
]

HostDocument = tuple[str | None, str, Mapping[Any, Any]]
"""A host's retrieved document as ``(id, text, metadata)``; ``None`` for a document without an id."""


def check_context_window(value: object) -> int | None:
    """``value`` if it is ``None`` or a positive int (tokens), else :class:`~graphfuse.InvalidInput`."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise InvalidInput(f"context_window must be a positive int of tokens, got {value!r}")
    return value


def _tokens(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def usage_pair(
    usage: object, prompt_key: str = "prompt_tokens", completion_key: str = "completion_tokens"
) -> tuple[int, int] | None:
    """The ``(prompt, completion)`` tokens a host reported in ``usage`` (a mapping, or an object with
    those attributes), or ``None`` unless both are ints >= 0."""
    if isinstance(usage, Mapping):
        prompt, completion = _tokens(usage.get(prompt_key)), _tokens(usage.get(completion_key))
    else:
        prompt, completion = _tokens(getattr(usage, prompt_key, None)), _tokens(getattr(usage, completion_key, None))
    return None if prompt is None or completion is None else (prompt, completion)


def host_generation(
    messages: Sequence[Mapping[str, str]], text: str, usage: tuple[int, int] | None, latency_s: float
) -> Generation:
    """A host model's reply as a :class:`Generation`: the provider's ``(prompt, completion)`` tokens
    when the host reported them (``"provider"``), else counted from ``messages`` and ``text`` with
    :func:`default_counter` (``"counted"``)."""
    if usage is not None:
        return Generation(text, usage[0], usage[1], "provider", latency_s)
    counter = default_counter()
    return Generation(
        text, count_messages([dict(m) for m in messages], counter), counter.count(text), "counted", latency_s
    )


def ranked_results(documents: Iterable[HostDocument]) -> list[Result]:
    """Retrieved host documents, best first, as results scored by rank (``1 / (rank + 1)``).

    A document without an id is ``document-<n>`` (its 1-based position); metadata keys that are
    not strings are left out.
    """
    out = []
    for rank, (doc_id, text, metadata) in enumerate(documents):
        kept = {k: v for k, v in metadata.items() if isinstance(k, str)}
        out.append(Result(Document(doc_id or f"document-{rank + 1}", text, kept), 1.0 / (rank + 1), {}))
    return out


class HostAnswerPipeline:
    """The shared half of an integration's :class:`AnswerPipeline`: settings, fingerprint, answers.

    A host subclass implements ``aanswer`` with its own calls and hands what came back to
    :meth:`answer_from_documents` (retrieved documents: a ``passages`` or ``evidence`` context
    within ``budget`` tokens, answered by the comparison's generator like the built-in
    pipelines) or :meth:`answer_from_host` (the host answered with its own model). ``settings``
    (``kind`` = ``name`` or the host's kind, ``component_key`` = the component's class name,
    ``budget``, ``format``) and ``system_prompt`` make the :attr:`fingerprint`.
    """

    def __init__(
        self,
        component: object,
        *,
        kind: str,
        component_key: str,
        budget: int = 3000,
        format: str = "passages",
        system_prompt: str = CONTEXT_PROMPT,
        name: str | None = None,
    ) -> None:
        if format not in ("passages", "evidence"):
            raise InvalidInput(
                f"format must be 'passages' or 'evidence' (the graph format needs a graph store), got {format!r}"
            )
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise InvalidInput(f"budget must be a positive int of tokens, got {budget!r}")
        self.budget = budget
        self.format = format
        self.system_prompt = system_prompt
        self.settings = {
            "kind": name or kind,
            component_key: type(component).__qualname__,
            "budget": budget,
            "format": format,
        }
        blob = json.dumps([system_prompt, self.settings], sort_keys=True)
        self._fingerprint = hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def fingerprint(self) -> str:
        """A hash of the prompt and settings."""
        return self._fingerprint

    async def answer_from_documents(
        self,
        question: str,
        documents: Iterable[HostDocument],
        generator: Generator,
        *,
        max_tokens: int,
        started: float,
    ) -> Answer:
        """Assemble ``documents`` (best first, :func:`ranked_results`) into this pipeline's context and
        let ``generator`` answer from it; the retrieval latency runs from ``started``
        (a :func:`time.perf_counter` value) to the context being built."""
        context = await abuild_context(question, ranked_results(documents), budget=self.budget, format=self.format)
        elapsed = time.perf_counter() - started
        retrieved = Retrieved(context.to_dict())

        async def fixed(_: str) -> Retrieved:
            return retrieved

        pipeline = ContextPipeline(fixed, system_prompt=self.system_prompt, settings=self.settings)
        answer = await pipeline.aanswer(question, generator, max_tokens=max_tokens)
        return dataclasses.replace(answer, retrieval_latency_s=elapsed + answer.retrieval_latency_s)

    async def answer_from_host(
        self,
        question: str,
        text: str,
        *,
        latency_s: float,
        answered_by: str,
        prompt_owner: str,
        usage: tuple[int, int] | None = None,
        sources: Sequence[HostDocument] = (),
    ) -> Answer:
        """The host's own answer: ``usage`` its ``(prompt, completion)`` tokens, else counted from the
        question and the answer only (the ``prompt_owner``'s own prompt is not visible, which
        ``extra["tokens"]`` says); ``sources`` (what the host cited, best first) become a
        ``passages`` context, for answer containment. An empty answer raises :class:`EmptyAnswer`."""
        text = text.strip()
        if not text:
            raise EmptyAnswer(f"the {answered_by} returned an empty answer")
        context = None
        if sources:
            built = await abuild_context(question, ranked_results(sources), budget=self.budget, format="passages")
            context = built.to_dict()
        extra: dict[str, Any] = {"answered_by": answered_by}
        if usage is None:
            counter = default_counter()
            usage = (counter.count(question), counter.count(text))
            extra["tokens"] = (
                f"counted from the question and the answer only: the {prompt_owner}'s own prompt is not visible"
            )
        return Answer(
            text=text,
            prompt_tokens=usage[0],
            completion_tokens=usage[1],
            usage_source="provider" if "tokens" not in extra else "counted",
            retrieval_latency_s=0.0,
            generation_latency_s=latency_s,
            context=context,
            extra=extra,
        )

"""The host-neutral half of the integrations' comparison adapters (graphfuse.compare's host helpers)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Sequence
from typing import Any

import pytest
from _compare_fakes import ScriptedGenerator, last_user

from graphfuse import InvalidInput
from graphfuse.compare import (
    CONTEXT_PROMPT,
    Answer,
    EmptyAnswer,
    Generator,
    HostAnswerPipeline,
    HostDocument,
    check_context_window,
    count_messages,
    default_counter,
    host_generation,
    ranked_results,
    usage_pair,
)


class ListHost(HostAnswerPipeline):
    """A stand-in host: its 'component' is a list of (id, text, metadata) documents, or a string answer."""

    def __init__(self, component: Sequence[HostDocument] | str, **options: Any) -> None:
        super().__init__(component, kind="list-host", component_key="component", **options)
        self._component = component

    async def aanswer(self, question: str, generator: Generator, *, max_tokens: int) -> Answer:
        started = time.perf_counter()
        if isinstance(self._component, str):
            return await self.answer_from_host(
                question, self._component, latency_s=0.5, answered_by="list host", prompt_owner="host"
            )
        return await self.answer_from_documents(
            question, self._component, generator, max_tokens=max_tokens, started=started
        )


DOCS: list[HostDocument] = [
    ("a", "Greta Berg directed the film Northlight.", {"title": "Northlight", 7: "dropped"}),
    (None, "Northlight premiered in Oslo in 2011.", {"title": "Premiere"}),
]


def test_ranked_results_score_by_rank_and_name_documents_without_id() -> None:
    results = ranked_results(DOCS)
    assert [r.id for r in results] == ["a", "document-2"]
    assert [r.score for r in results] == [1.0, 0.5]
    assert results[0].document.metadata == {"title": "Northlight"}  # non-string keys left out
    assert ranked_results([]) == []


@pytest.mark.parametrize("bad", [0, -3, True, 2.5, "8k"])
def test_check_context_window_refuses_what_is_not_a_positive_int(bad: object) -> None:
    with pytest.raises(InvalidInput, match="context_window"):
        check_context_window(bad)


def test_check_context_window_passes_none_and_tokens() -> None:
    assert check_context_window(None) is None
    assert check_context_window(8192) == 8192


def test_usage_pair_reads_mappings_and_attributes_and_refuses_partial_or_bad_numbers() -> None:
    class Usage:
        prompt_tokens = 12
        completion_tokens = 3

    assert usage_pair({"prompt_tokens": 5, "completion_tokens": 2}) == (5, 2)
    assert usage_pair(Usage()) == (12, 3)
    assert usage_pair({"input_tokens": 4, "output_tokens": 1}, "input_tokens", "output_tokens") == (4, 1)
    for bad in (None, {}, {"prompt_tokens": 5}, {"prompt_tokens": True, "completion_tokens": 1}):
        assert usage_pair(bad) is None
    assert usage_pair({"prompt_tokens": -1, "completion_tokens": 1}) is None


def test_host_generation_takes_provider_usage_else_counts() -> None:
    messages = [{"role": "user", "content": "Who directed Northlight?"}]
    provided = host_generation(messages, "Greta Berg", (40, 3), 0.25)
    assert (provided.prompt_tokens, provided.completion_tokens, provided.usage_source) == (40, 3, "provider")
    counted = host_generation(messages, "Greta Berg", None, 0.25)
    counter = default_counter()
    assert counted.usage_source == "counted"
    assert counted.prompt_tokens == count_messages(messages, counter)
    assert counted.completion_tokens == counter.count("Greta Berg")


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"budget": 0}, "budget"),
        ({"budget": True}, "budget"),
        ({"budget": 12.5}, "budget"),
        ({"format": "graph"}, "graph store"),
        ({"format": "bullets"}, "format"),
    ],
)
def test_host_answer_pipeline_refuses_bad_settings(options: dict[str, Any], match: str) -> None:
    with pytest.raises(InvalidInput, match=match):
        ListHost(DOCS, **options)


def test_fingerprint_is_the_prompt_and_settings_and_changes_with_them() -> None:
    host = ListHost(DOCS, budget=500)
    assert host.settings == {"kind": "list-host", "component": "list", "budget": 500, "format": "passages"}
    blob = json.dumps([CONTEXT_PROMPT, host.settings], sort_keys=True)
    assert host.fingerprint == hashlib.sha256(blob.encode()).hexdigest()[:16]
    assert ListHost(DOCS, budget=500, name="mine").fingerprint != host.fingerprint
    assert ListHost(DOCS, budget=501).fingerprint != host.fingerprint


def test_answer_from_documents_builds_the_context_and_asks_the_generator() -> None:
    generator = ScriptedGenerator(lambda messages: "Greta Berg" if "Northlight" in last_user(messages) else "")
    answer = asyncio.run(ListHost(DOCS, budget=200).aanswer("Who directed Northlight?", generator, max_tokens=16))
    assert answer.text == "Greta Berg"
    assert answer.context is not None
    assert [s["id"] for s in answer.context["sources"]] == ["a", "document-2"]
    assert "Greta Berg directed" in last_user(generator.calls[0])
    assert answer.retrieval_latency_s >= 0.0


def test_answer_from_documents_with_no_documents_still_answers() -> None:
    generator = ScriptedGenerator(lambda messages: "unknown")
    answer = asyncio.run(ListHost([], budget=200).aanswer("Who directed Northlight?", generator, max_tokens=16))
    assert answer.text == "unknown"
    assert answer.context is not None
    assert answer.context["sources"] == []


def test_answer_from_host_counts_tokens_and_says_so() -> None:
    answer = asyncio.run(ListHost("  Greta Berg \n").aanswer("Who?", ScriptedGenerator(str), max_tokens=16))
    assert answer.text == "Greta Berg"
    assert answer.usage_source == "counted"
    assert answer.extra["answered_by"] == "list host"
    assert "the host's own prompt is not visible" in answer.extra["tokens"]
    assert (answer.generation_latency_s, answer.context) == (0.5, None)


def test_answer_from_host_with_usage_and_sources() -> None:
    host = ListHost(DOCS, budget=200)
    answer = asyncio.run(
        host.answer_from_host(
            "Who directed Northlight?",
            "Greta Berg",
            latency_s=0.1,
            answered_by="engine",
            prompt_owner="engine",
            usage=(30, 2),
            sources=DOCS,
        )
    )
    assert (answer.prompt_tokens, answer.completion_tokens, answer.usage_source) == (30, 2, "provider")
    assert "tokens" not in answer.extra
    assert answer.context is not None
    assert answer.context["format"] == "passages"


def test_answer_from_host_refuses_an_empty_answer() -> None:
    with pytest.raises(EmptyAnswer, match="the list host returned an empty answer"):
        asyncio.run(ListHost("   ").aanswer("Who?", ScriptedGenerator(str), max_tokens=16))

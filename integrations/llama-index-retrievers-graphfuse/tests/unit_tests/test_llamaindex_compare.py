"""LlamaIndex LLMs, retrievers and query engines in GraphFuse's answer comparison."""

from __future__ import annotations

from typing import Any

import pytest
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
)
from llama_index.core.llms import CustomLLM
from llama_index.core.query_engine import CustomQueryEngine
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.retrievers.graphfuse import LlamaIndexAnswerPipeline, LlamaIndexGenerator

from graphfuse import InvalidInput
from graphfuse.compare import CompareQuestion, ContextWindowExceeded, Judge, acompare_pipelines

NODES = [
    NodeWithScore(node=TextNode(id_="minaj", text="Nicki Minaj was born in Port of Spain, Trinidad."), score=0.9),
    NodeWithScore(node=TextNode(id_="changed", text="Changed It is a song by Nicki Minaj."), score=0.5),
]
QUESTION = CompareQuestion("q1", "Where was the performer of Changed It born?", ("Port of Spain",))
VERDICT = '{"score": 8, "correctness": 8, "completeness": 8, "clarity": 8, "relevance": 8, "reasoning": "ok"}'


class ScriptedLLM(CustomLLM):
    """Answers 'Port of Spain', or a verdict to a judge; reports OpenAI-style usage when asked."""

    window: int = 4096
    with_usage: bool = True
    seen: list[Any]

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=self.window, num_output=256, model_name="scripted-llm")

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text="unused")

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        raise NotImplementedError

    async def achat(self, messages: Any, **kwargs: Any) -> ChatResponse:
        self.seen.append((list(messages), kwargs))
        text = VERDICT if "Answer to grade:" in str(messages[-1].content) else "Port of Spain"
        extra = {"prompt_tokens": 99, "completion_tokens": 3} if self.with_usage else {}
        return ChatResponse(message=ChatMessage(role="assistant", content=text), additional_kwargs=extra)


class FixedRetriever(BaseRetriever):
    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return list(NODES)


class Engine(CustomQueryEngine):
    def custom_query(self, query_str: str) -> str:
        return "Port of Spain, Trinidad"


async def test_llm_generator_uses_provider_usage_and_the_window() -> None:
    llm = ScriptedLLM(seen=[])
    generator = LlamaIndexGenerator(llm)
    generation = await generator.agenerate([{"role": "user", "content": "q"}], max_tokens=20)
    assert (generation.text, generation.prompt_tokens, generation.usage_source) == ("Port of Spain", 99, "provider")
    assert (generator.model, generator.context_window) == ("scripted-llm", 4096)
    assert llm.seen[0][1] == {}  # max_tokens is the LLM's own setting unless max_tokens_param is named
    counted = await LlamaIndexGenerator(ScriptedLLM(with_usage=False, seen=[])).agenerate(
        [{"role": "user", "content": "q"}]
    )
    assert counted.usage_source == "counted"


async def test_retriever_pipeline_and_judge() -> None:
    generator = LlamaIndexGenerator(ScriptedLLM(seen=[]))
    report = await acompare_pipelines(
        [QUESTION],
        {"llamaindex": LlamaIndexAnswerPipeline(FixedRetriever(), budget=200)},
        generator,
        judge=Judge(generator),
    )
    outcome = report.result("q1", "llamaindex")
    assert outcome.answer is not None
    assert outcome.answer.context is not None
    assert [s["id"] for s in outcome.answer.context["sources"]] == ["minaj", "changed"]
    assert (outcome.exact_match, outcome.context_contains_answer) == (1.0, True)
    assert outcome.verdict is not None
    assert outcome.verdict.score == 8.0


async def test_query_engine_answers_itself() -> None:
    generator = LlamaIndexGenerator(ScriptedLLM(seen=[]))
    answer = await LlamaIndexAnswerPipeline(Engine()).aanswer(QUESTION.question, generator, max_tokens=10)
    assert answer.text == "Port of Spain, Trinidad"
    assert answer.usage_source == "counted"
    assert answer.extra["answered_by"] == "query engine"


async def test_a_small_window_is_refused_before_the_call() -> None:
    llm = ScriptedLLM(window=60, seen=[])
    pipeline = LlamaIndexAnswerPipeline(FixedRetriever(), budget=200)
    with pytest.raises(ContextWindowExceeded, match="context window of 60 tokens"):
        await pipeline.aanswer(QUESTION.question, LlamaIndexGenerator(llm), max_tokens=30)
    assert llm.seen == []


def test_bad_inputs() -> None:
    with pytest.raises(InvalidInput, match="must be a LlamaIndex LLM"):
        LlamaIndexGenerator("gpt-4o")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="must be a LlamaIndex retriever or query engine"):
        LlamaIndexAnswerPipeline(object())  # type: ignore[arg-type]

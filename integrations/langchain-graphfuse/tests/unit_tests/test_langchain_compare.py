"""LangChain chat models, retrievers and runnables in GraphFuse's answer comparison."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda
from langchain_graphfuse import LangChainAnswerPipeline, LangChainGenerator

from graphfuse import InvalidInput
from graphfuse.compare import CompareQuestion, Judge, acompare_pipelines, llm_only

DOCS = [
    Document("Nicki Minaj was born in Port of Spain, Trinidad.", id="minaj", metadata={"title": "Nicki Minaj"}),
    Document("Changed It is a song by Nicki Minaj.", id="changed", metadata={"title": "Changed It"}),
]
QUESTION = CompareQuestion("q1", "Where was the performer of Changed It born?", ("Port of Spain",))


class FixedRetriever(BaseRetriever):
    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return list(DOCS)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        return list(DOCS)


def usage_message(text: str, prompt: int, completion: int) -> AIMessage:
    usage: Any = {"input_tokens": prompt, "output_tokens": completion, "total_tokens": prompt + completion}
    return AIMessage(content=text, usage_metadata=usage)


async def test_chat_model_generator_reports_provider_usage() -> None:
    model = GenericFakeChatModel(messages=iter([usage_message("Port of Spain", 120, 4)]))
    generator = LangChainGenerator(model, name="fake-chat")
    generation = await generator.agenerate([{"role": "system", "content": "s"}, {"role": "user", "content": "q"}])
    assert (generation.text, generation.prompt_tokens, generation.completion_tokens) == ("Port of Spain", 120, 4)
    assert generation.usage_source == "provider"
    assert generator.model == "fake-chat"


async def test_chat_model_without_usage_is_counted() -> None:
    generator = LangChainGenerator(FakeListChatModel(responses=["Paris"]))
    generation = await generator.agenerate(
        [{"role": "user", "content": "What is the capital of France?"}], max_tokens=5
    )
    assert generation.usage_source == "counted"
    assert generation.prompt_tokens > 7
    assert generation.completion_tokens == 1
    assert generator.model == "FakeListChatModel"


async def test_retriever_pipeline_answers_from_its_documents_and_is_judged() -> None:
    answers = FakeListChatModel(responses=["Port of Spain"])
    judge = FakeListChatModel(
        responses=['{"score": 9, "correctness": 9, "completeness": 9, "clarity": 9, "relevance": 9, "reasoning": "ok"}']
    )
    report = await acompare_pipelines(
        [QUESTION],
        {"langchain": LangChainAnswerPipeline(FixedRetriever(), budget=200), "llm_only": llm_only()},
        LangChainGenerator(answers),
        judge=Judge(LangChainGenerator(judge)),
        concurrency=1,
    )
    outcome = report.result("q1", "langchain")
    assert outcome.answer is not None
    assert outcome.answer.context is not None
    assert "Port of Spain" in outcome.answer.context["text"]
    assert [s["id"] for s in outcome.answer.context["sources"]] == ["minaj", "changed"]
    assert outcome.context_contains_answer is True
    assert outcome.exact_match == 1.0
    assert outcome.verdict is not None
    assert outcome.verdict.passed


async def test_a_chain_that_answers_itself() -> None:
    chain = RunnableLambda(lambda q: usage_message("Port of Spain", 50, 3))
    answer = await LangChainAnswerPipeline(chain).aanswer(
        QUESTION.question, LangChainGenerator(FakeListChatModel(responses=["x"])), max_tokens=10
    )
    assert (answer.text, answer.prompt_tokens, answer.usage_source) == ("Port of Spain", 50, "provider")
    plain = await LangChainAnswerPipeline(RunnableLambda(lambda q: "Trinidad")).aanswer(
        QUESTION.question, LangChainGenerator(FakeListChatModel(responses=["x"])), max_tokens=10
    )
    assert plain.usage_source == "counted"
    assert "the chain's own prompt is not visible" in plain.extra["tokens"]


async def test_bad_inputs() -> None:
    with pytest.raises(InvalidInput, match="must be a LangChain chat model"):
        LangChainGenerator("gpt-4o")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="'passages' or 'evidence'"):
        LangChainAnswerPipeline(FixedRetriever(), format="graph")
    odd = LangChainAnswerPipeline(RunnableLambda(lambda q: 42))
    with pytest.raises(InvalidInput, match="the runnable returned int"):
        await odd.aanswer("q", LangChainGenerator(FakeListChatModel(responses=["x"])), max_tokens=10)

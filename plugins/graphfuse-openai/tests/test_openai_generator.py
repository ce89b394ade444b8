"""OpenAIGenerator and the judge: the real ``openai`` SDK against a local chat-completions server."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Iterator

import pytest
from graphfuse_openai import OpenAIGenerator
from openai_fake_api import FAST_RETRY, logged_waits

import graphfuse
from graphfuse import AuthenticationFailed, ConnectionFailed, DeadlineExceeded, RateLimited, RequestTimedOut
from graphfuse.compare import (
    CompareQuestion,
    ContextWindowExceeded,
    Judge,
    JudgeFailed,
    acompare_pipelines,
    count_messages,
    default_counter,
    llm_only,
)
from graphfuse.retry import counting_retries
from graphfuse.testing import ChatCompletionsServer

QUESTION = [{"role": "user", "content": "What is the capital of France?"}]


@pytest.fixture
def chat() -> Iterator[ChatCompletionsServer]:
    with ChatCompletionsServer(answers={"capital of France": "Paris"}) as server:
        yield server


@pytest.fixture
async def generator(chat: ChatCompletionsServer) -> AsyncIterator[OpenAIGenerator]:
    async with OpenAIGenerator("gpt-4o-mini", api_key=chat.api_key, base_url=chat.url, retry=FAST_RETRY) as g:
        yield g


async def test_answer_with_provider_usage(generator: OpenAIGenerator, chat: ChatCompletionsServer) -> None:
    generation = await generator.agenerate(QUESTION, max_tokens=50)
    assert generation.text == "Paris"
    assert generation.usage_source == "provider"
    assert (generation.prompt_tokens, generation.completion_tokens) == (7 + 4 + 3, 1)
    assert generation.latency_s > 0
    [body] = chat.received
    assert body["model"] == "gpt-4o-mini"
    assert body["max_tokens"] == 50
    assert body["temperature"] == 0.0
    assert body["messages"] == QUESTION
    assert "response_format" not in body


async def test_usage_is_counted_when_the_provider_does_not_report_it(
    generator: OpenAIGenerator, chat: ChatCompletionsServer
) -> None:
    chat.plan = [("usage", False)]
    generation = await generator.agenerate(QUESTION)
    counter = default_counter()
    assert generation.usage_source == "counted"
    assert generation.prompt_tokens == count_messages(QUESTION, counter)
    assert generation.completion_tokens == counter.count("Paris")
    assert "max_tokens" not in chat.received[0]


async def test_environment_base_url_and_key_are_honoured(
    chat: ChatCompletionsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", chat.url)
    monkeypatch.setenv("OPENAI_API_KEY", chat.api_key)
    async with OpenAIGenerator("gpt-4o") as g:
        assert (await g.agenerate(QUESTION)).text == "Paris"
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("OPENAI_BASE_URL")
    with pytest.raises(AuthenticationFailed, match="pass api_key= or set OPENAI_API_KEY"):
        OpenAIGenerator()  # OpenAI's own API needs a key


async def test_a_local_server_needs_no_key_and_errors_name_it(
    chat: ChatCompletionsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    async with OpenAIGenerator("local", base_url=chat.url, retry=FAST_RETRY) as g:
        assert g.endpoint == chat.url
        # The placeholder key is sent; this stand-in wants its own key, so it answers 401.
        with pytest.raises(AuthenticationFailed, match=f"the chat-completions server at {chat.url} answered HTTP 401"):
            await g.agenerate(QUESTION)
    with pytest.raises(graphfuse.InvalidInput, match="base_url must be an http:// or https:// URL"):
        OpenAIGenerator("local", base_url="127.0.0.1:8080/v1")


async def test_rate_limited_then_success_waits_retry_after(
    generator: OpenAIGenerator, chat: ChatCompletionsServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="graphfuse.retry")
    chat.plan = [("error", 429, {"Retry-After": "0.2"})]
    assert (await generator.agenerate(QUESTION)).text == "Paris"
    assert len(chat.received) == 2
    assert logged_waits(caplog) == [pytest.approx(0.2)]


async def test_rate_limit_longer_than_the_policy_allows_is_raised(
    generator: OpenAIGenerator, chat: ChatCompletionsServer
) -> None:
    chat.plan = [("error", 429, {"Retry-After": "30"})]
    with pytest.raises(RateLimited, match="429") as info:
        await generator.agenerate(QUESTION)
    assert info.value.retry_after == 30.0
    assert len(chat.received) == 1


async def test_server_errors_are_retried_then_raised(generator: OpenAIGenerator, chat: ChatCompletionsServer) -> None:
    chat.plan = [("error", 500, {}), ("error", 503, {})]
    assert (await generator.agenerate(QUESTION)).text == "Paris"
    chat.plan = [("error", 500, {})] * 3
    with pytest.raises(ConnectionFailed, match=f"the chat-completions server at {chat.url} answered HTTP 500"):
        await generator.agenerate(QUESTION)
    assert len(chat.received) == 6


async def test_unauthorized_is_not_retried(chat: ChatCompletionsServer) -> None:
    async with OpenAIGenerator(api_key="sk-wrong", base_url=chat.url, retry=FAST_RETRY) as g:
        with pytest.raises(AuthenticationFailed, match=r"chat-completions server at .* answered HTTP 401"):
            await g.agenerate(QUESTION)
    assert len(chat.received) == 1


async def test_a_slow_response_under_a_deadline(generator: OpenAIGenerator, chat: ChatCompletionsServer) -> None:
    chat.plan = [("stall", 5.0)]
    with pytest.raises(DeadlineExceeded), graphfuse.deadline(0.3):
        await generator.agenerate(QUESTION)


async def test_a_request_past_its_timeout_is_a_retryable_timeout_that_is_counted(chat: ChatCompletionsServer) -> None:
    async with OpenAIGenerator("local", base_url=chat.url, api_key=chat.api_key, timeout=0.2, retry=FAST_RETRY) as g:
        chat.plan = [("stall", 5.0)]
        with counting_retries() as count:
            assert (await g.agenerate(QUESTION)).text == "Paris"  # timed out once, then sent again
        assert (count.retries, count.timeouts) == (1, 1)
        chat.plan = [("stall", 5.0)] * 3
        with counting_retries() as count, pytest.raises(RequestTimedOut) as info:
            await g.agenerate(QUESTION)
        assert (count.retries, count.timeouts) == (2, 2)
    assert f"the chat-completions server at {chat.url} did not answer within 0.2 s" in str(info.value)
    assert isinstance(info.value, ConnectionFailed)
    assert info.value.retryable


async def test_concurrency_suggested_by_the_server() -> None:
    with ChatCompletionsServer(slots=3) as three, ChatCompletionsServer() as silent:
        async with OpenAIGenerator("local", base_url=three.url) as g:
            assert await g.asuggest_concurrency() == 3  # llama.cpp's GET /props total_slots
        async with OpenAIGenerator("local", base_url=silent.url) as g:
            assert await g.asuggest_concurrency() == 1  # a server that does not say: one at a time
    async with OpenAIGenerator("gpt-4o-mini", api_key="sk-test", base_url="https://api.openai.com/v1") as g:
        assert await g.asuggest_concurrency() == 4  # OpenAI: asked nothing
        assert g.provider == "OpenAI"


async def test_a_prompt_larger_than_the_window_is_refused_before_the_call(chat: ChatCompletionsServer) -> None:
    async with OpenAIGenerator("local-model", api_key=chat.api_key, base_url=chat.url, context_window=100) as g:
        long = [{"role": "user", "content": "word " * 200}]
        with pytest.raises(ContextWindowExceeded, match=r"tokens .* > the model.s context window of 100") as info:
            await g.agenerate(long, max_tokens=20)
    assert info.value.prompt_tokens > 200
    assert (info.value.max_tokens, info.value.context_window) == (20, 100)
    assert chat.received == []


async def test_the_judge_asks_for_structured_output(generator: OpenAIGenerator, chat: ChatCompletionsServer) -> None:
    verdict = await Judge(generator).ajudge("What is the capital of France?", "Paris", "Paris")
    assert (verdict.score, verdict.passed, verdict.reasoning) == (9.0, True, "matches the ground truth")
    assert verdict.prompt_tokens > 0
    fmt = chat.received[0]["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "verdict"
    assert fmt["json_schema"]["schema"]["required"] == [
        "score", "correctness", "completeness", "clarity", "relevance", "reasoning"
    ]  # fmt: skip


async def test_structured_output_can_be_turned_off(chat: ChatCompletionsServer) -> None:
    async with OpenAIGenerator(api_key=chat.api_key, base_url=chat.url, structured_output=False) as g:
        verdict = await Judge(g).ajudge("q", "Paris", "London")
    assert verdict.score == 2.0
    assert not verdict.passed
    assert "response_format" not in chat.received[0]


async def test_malformed_verdict_json_is_retried(generator: OpenAIGenerator, chat: ChatCompletionsServer) -> None:
    chat.plan = [("reply", '{"score": 9, "correctness": 9'), ("reply", "Sure! Here is my verdict.")]
    verdict = await Judge(generator).ajudge("q", "Paris", "Paris")
    assert (verdict.score, verdict.attempts) == (9.0, 3)
    assert len(chat.received) == 3


async def test_a_judge_that_never_returns_valid_json(generator: OpenAIGenerator, chat: ChatCompletionsServer) -> None:
    chat.responder = lambda messages, body: "I think it is a good answer, 8/10."
    with pytest.raises(JudgeFailed, match="gave no valid verdict in 2 attempts") as info:
        await Judge(generator, attempts=2).ajudge("q", "Paris", "Paris")
    assert info.value.raw == "I think it is a good answer, 8/10."
    assert len(info.value.problems) == 2


async def test_comparison_with_a_different_judge_model(chat: ChatCompletionsServer) -> None:
    questions = [CompareQuestion("q1", "What is the capital of France?", ("Paris",))]
    async with (
        OpenAIGenerator("gpt-4o-mini", api_key=chat.api_key, base_url=chat.url) as answerer,
        OpenAIGenerator("gpt-4o", api_key=chat.api_key, base_url=chat.url) as judge_model,
    ):
        report = await acompare_pipelines(questions, {"llm_only": llm_only()}, answerer, judge=Judge(judge_model))
    data = report.to_dict()
    assert data["pipelines"]["llm_only"]["judge"]["pass_rate"] == 1.0
    assert data["pipelines"]["llm_only"]["usage_source"] == "provider"
    assert data["settings"]["generator"] == "gpt-4o-mini"
    assert data["settings"]["judge"]["model"] == "gpt-4o"
    assert [b["model"] for b in chat.received] == ["gpt-4o-mini", "gpt-4o"]
    json.dumps(data)

"""ContextPostprocessor.context / acontext with conversation history: LlamaIndex ChatMessage objects."""

from __future__ import annotations

from typing import Any

import pytest
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.schema import NodeWithScore, TextNode
from llama_index.postprocessor.graphfuse import ContextPostprocessor

from graphfuse import InvalidInput
from graphfuse.context import Turn, build_context, get_token_counter

QUESTION = "Where was she born?"
BERG = "Anna Berg was a Norwegian film director. She was born in Oslo."


def nodes() -> list[NodeWithScore]:
    return [NodeWithScore(node=TextNode(id_="berg", text=BERG, metadata={"title": "Anna Berg"}), score=0.9)]


async def test_chat_messages_from_a_memory_go_before_the_context_in_order() -> None:
    memory = ChatMemoryBuffer.from_defaults(token_limit=2000)
    for message in (
        ChatMessage(role=MessageRole.SYSTEM, content="Answer briefly."),
        ChatMessage(role=MessageRole.USER, content="Who directed The Quiet Harbour?"),
        ChatMessage(role=MessageRole.ASSISTANT, content="Anna Berg."),
    ):
        memory.put(message)
    post = ContextPostprocessor(budget=300)
    ctx = await post.acontext(nodes(), QUESTION, history=memory.get())
    assert ctx.prompt_text.startswith(
        "## Conversation History\nSystem: Answer briefly.\nUser: Who directed The Quiet Harbour?\n"
        "Assistant: Anna Berg.\n\n## Retrieved Information\n[1] Anna Berg\n"
    )
    assert ctx.history_tokens == get_token_counter().count(ctx.prompt_text[: -len(ctx.text)])
    assert post.context(nodes(), QUESTION, history=memory.get()) == ctx
    # The same as the core builds from the same turns (dicts and Turn objects are taken too).
    same = [
        Turn("system", "Answer briefly."),
        {"role": "user", "content": "Who directed The Quiet Harbour?"},
        {"role": "assistant", "content": "Anna Berg."},
    ]
    assert post.context(nodes(), QUESTION, history=same) == ctx
    assert build_context(QUESTION, post._results(nodes()), budget=300, history=same).prompt_text == ctx.prompt_text


def test_provider_role_names_and_the_newest_turns_within_the_share() -> None:
    history = [
        ChatMessage(role=MessageRole.DEVELOPER, content="Be exact."),
        ChatMessage(role=MessageRole.MODEL, content="Understood."),
        ChatMessage(role=MessageRole.CHATBOT, content="Ready."),
    ]
    ctx = ContextPostprocessor(budget=300).context(nodes(), QUESTION, history=history)
    assert [t.role for t in ctx.history] == ["system", "assistant", "assistant"]
    long = [ChatMessage(role="user", content=f"q{i} " + "word " * 40) for i in range(6)]
    small = ContextPostprocessor(budget=400).context(nodes(), QUESTION, history=long)
    assert small.history_tokens <= 60  # min(500, 15 % of 400)
    assert [t.content.split()[0] for t in small.history] == ["q5"]
    assert small.history_dropped == 5


@pytest.mark.parametrize(
    ("history", "message"),
    [
        ([ChatMessage(role=MessageRole.TOOL, content="42")], r"history\[0\] is a 'tool' message"),
        ([ChatMessage(role="user", content="hi"), {"role": "bot", "content": "x"}], r"history\[1\]\.role must be"),
        ("hello", r"history must be a list of ChatMessage"),
        ([{"role": "user", "text": "hi"}], r"history\[0\] lacks content"),
    ],
)
async def test_invalid_history_names_the_item(history: Any, message: str) -> None:
    post = ContextPostprocessor(budget=300)
    with pytest.raises(InvalidInput, match=message):
        await post.acontext(nodes(), QUESTION, history=history)
    with pytest.raises(InvalidInput, match=message):
        post.context(nodes(), QUESTION, history=history)

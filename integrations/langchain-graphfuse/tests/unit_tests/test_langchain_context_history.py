"""GraphFuseContextFormatter with conversation history: LangChain messages, pairs and dicts."""

from __future__ import annotations

from operator import itemgetter
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.language_models import FakeListChatModel
from langchain_core.messages import AIMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda
from langchain_graphfuse import GraphFuseContextFormatter

from graphfuse import InvalidInput
from graphfuse.context import Context, Turn, build_context, retrieve_context

QUESTION = "Where was she born?"
HISTORY = [
    SystemMessage("Answer briefly."),
    HumanMessage("Who directed The Quiet Harbour?"),
    AIMessage("Anna Berg directed it."),
]


def docs() -> list[Document]:
    return [
        Document(
            id="berg",
            page_content="Anna Berg was a Norwegian film director. She was born in Oslo.",
            metadata={"title": "Anna Berg"},
        ),
        Document(id="dahl", page_content="Liv Dahl was a Norwegian painter.", metadata={"title": "Liv Dahl"}),
    ]


def test_messages_become_turns_and_the_string_holds_the_history_first() -> None:
    formatter = GraphFuseContextFormatter(budget=300)
    text = formatter.invoke({"question": QUESTION, "documents": docs(), "history": HISTORY})
    assert text.startswith(
        "## Conversation History\nSystem: Answer briefly.\nUser: Who directed The Quiet Harbour?\n"
        "Assistant: Anna Berg directed it.\n\n## Retrieved Information\n[1] Anna Berg"
    )
    ctx = formatter.with_sources().invoke({"question": QUESTION, "documents": docs(), "chat_history": HISTORY})
    assert isinstance(ctx, Context)
    assert ctx.prompt_text == text
    assert [t.role for t in ctx.history] == ["system", "user", "assistant"]
    # The same context the core builds from the same turns.
    core = build_context(
        QUESTION,
        formatter._split({"question": QUESTION, "documents": docs()})[1],
        budget=300,
        history=[
            Turn("system", "Answer briefly."),
            *[
                {"role": r, "content": c}
                for r, c in (
                    ("user", "Who directed The Quiet Harbour?"),
                    ("assistant", "Anna Berg directed it."),
                )
            ],
        ],
    )
    assert core.prompt_text == text


async def test_pairs_dicts_and_chat_messages_async() -> None:
    history: list[Any] = [
        ("human", "Who directed it?"),
        {"role": "assistant", "content": "Anna Berg."},
        ChatMessage(role="user", content="And her mother?"),
        AIMessage(content=[{"type": "text", "text": "Liv Dahl."}]),
    ]
    ctx = (
        await GraphFuseContextFormatter(budget=300)
        .with_sources()
        .ainvoke({"question": QUESTION, "documents": docs(), "history": history})
    )
    assert [(t.role, t.content) for t in ctx.history] == [
        ("user", "Who directed it?"),
        ("assistant", "Anna Berg."),
        ("user", "And her mother?"),
        ("assistant", "Liv Dahl."),
    ]


def test_oldest_turns_are_dropped_within_the_share() -> None:
    history = [HumanMessage(f"question {i} " + "word " * 30) for i in range(7)]
    ctx = (
        GraphFuseContextFormatter(budget=400)
        .with_sources()
        .invoke({"question": QUESTION, "documents": docs(), "history": history})
    )
    assert ctx.history_tokens <= 60  # min(500, 15 % of 400)
    assert [t.content.split()[1] for t in ctx.history] == ["6"]
    assert ctx.history_dropped == 6


async def test_a_question_and_history_retrieve_with_the_pipeline(backend: Any) -> None:
    pipeline = backend.pipeline()
    formatter = GraphFuseContextFormatter(budget=200, pipeline=pipeline, k=3)
    turns = [HumanMessage("Tell me about Ada Lovelace."), AIMessage("She programmed the Analytical Engine.")]
    got = await formatter.ainvoke({"question": "Who designed it?", "history": turns})
    expected = retrieve_context(
        pipeline,
        "Who designed it?",
        budget=200,
        top_k=3,
        history=[
            {"role": "user", "content": "Tell me about Ada Lovelace."},
            {"role": "assistant", "content": "She programmed the Analytical Engine."},
        ],
    )
    assert got == expected.prompt_text
    assert got.startswith("## Conversation History\nUser: Tell me about Ada Lovelace.\n")


def test_in_a_chain_with_a_messages_placeholder_style_input() -> None:
    prompt = ChatPromptTemplate.from_template("{context}\n\nQuestion: {question}")
    seen: list[str] = []

    def model_input(value: Any) -> Any:
        seen.append(value.to_string())
        return value

    chain = (
        {
            "context": {
                "question": itemgetter("question"),
                "documents": lambda x: docs(),
                "chat_history": itemgetter("chat_history"),
            }
            | GraphFuseContextFormatter(budget=300),
            "question": itemgetter("question"),
        }
        | prompt
        | RunnableLambda(model_input)
        | FakeListChatModel(responses=["Oslo."])
        | StrOutputParser()
    )
    assert chain.invoke({"question": QUESTION, "chat_history": HISTORY}) == "Oslo."
    assert "Assistant: Anna Berg directed it.\n\n## Retrieved Information\n[1] Anna Berg" in seen[0]


@pytest.mark.parametrize(
    ("history", "message"),
    [
        ([ToolMessage("42", tool_call_id="t1")], r"history\[0\] is a ToolMessage"),
        ([HumanMessage("hi"), ("bot", "hello")], r"history\[1\] is not a chat message: Unexpected message type: 'bot'"),
        (["hello"], r"history\[0\] is a bare string"),
        ("hello", r"history must be a list of messages"),
        ([{"role": "user"}], r"history\[0\] is not a chat message"),
    ],
)
def test_invalid_history_names_the_item(history: Any, message: str) -> None:
    formatter = GraphFuseContextFormatter(budget=300)
    with pytest.raises(InvalidInput, match=message):
        formatter.invoke({"question": QUESTION, "documents": docs(), "history": history})


def test_history_and_chat_history_together_are_refused() -> None:
    with pytest.raises(InvalidInput, match="not both"):
        GraphFuseContextFormatter(budget=300).invoke(
            {"question": QUESTION, "documents": docs(), "history": [], "chat_history": []}
        )

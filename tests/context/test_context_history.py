"""Conversation history in a context: the last five turns, newest first into their share, shown in order."""

from __future__ import annotations

import random

import pytest

from graphfuse import Document, InvalidInput, Pipeline, Result, VectorRecord, presets
from graphfuse.context import (
    FORMATS,
    HISTORY_TURNS,
    Context,
    TokenBudget,
    Turn,
    aretrieve_context,
    build_context,
    get_token_counter,
    history_turns,
    retrieve_context,
)
from graphfuse.context._history import history_block
from graphfuse.embedders import HashingEmbedder
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

DOCS = [
    Document("berg", "Anna Berg was a Norwegian film director. She was born in Oslo.", {"title": "Anna Berg"}),
    Document("dahl", "Liv Dahl was a Norwegian painter. She was Anna Berg's mother.", {"title": "Liv Dahl"}),
]
RESULTS = [Result(DOCS[0], 0.9, {}), Result(DOCS[1], 0.5, {})]
QUESTION = "Where was she born?"
CL100K = get_token_counter()


def conversation(n: int, words: int = 3) -> list[dict[str, str]]:
    """``n`` turns, user and assistant in turn, each naming its number (turn 0 is the oldest)."""
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn{i} " + " ".join(["word"] * words)}
        for i in range(n)
    ]


def shown(ctx: Context) -> list[int]:
    return [int(t.content.split()[0].removeprefix("turn")) for t in ctx.history]


def test_the_last_five_turns_in_chronological_order() -> None:
    ctx = build_context(QUESTION, RESULTS, budget=2000, history=conversation(8))
    assert HISTORY_TURNS == 5
    assert shown(ctx) == [3, 4, 5, 6, 7]
    assert ctx.history_dropped == 3
    lines = ctx.prompt_text.splitlines()
    assert lines[0] == "## Conversation History"
    assert lines[1:6] == [f"{'User' if i % 2 == 0 else 'Assistant'}: turn{i} word word word" for i in range(3, 8)]
    assert lines[6:8] == ["", "## Retrieved Information"]
    assert ctx.prompt_text.endswith(ctx.text)
    assert ctx.history_tokens == CL100K.count(history_block(ctx.history))
    # The context gets the budget less what the history takes, and the prompt holds no more than the budget.
    assert ctx.budget == 2000 - ctx.history_tokens
    assert CL100K.count(ctx.prompt_text) <= 2000


def test_oldest_turns_are_dropped_first_when_the_share_is_small() -> None:
    history = conversation(5, words=20)
    # An int budget of 400: the history may take min(500, 15 %) = 60 tokens; each turn is about 22.
    ctx = build_context(QUESTION, RESULTS, budget=400, history=history)
    assert shown(ctx) == [3, 4]
    assert ctx.history_dropped == 3
    assert ctx.history_tokens <= 60
    assert ctx.budget == 400 - ctx.history_tokens
    assert ctx.tokens <= ctx.budget
    assert CL100K.count(ctx.prompt_text) <= 400


def test_a_turn_that_does_not_fit_ends_the_history() -> None:
    history = conversation(4)
    history[1]["content"] = "turn1 " + "long " * 400  # an older turn too long for the share
    ctx = build_context(QUESTION, RESULTS, budget=1000, history=history)
    assert shown(ctx) == [2, 3]  # never turn 0 without turn 1
    assert ctx.history_dropped == 2


def test_a_newest_turn_too_long_alone_is_cut_to_fit() -> None:
    history = [*conversation(2), {"role": "user", "content": "turn2 " + "long " * 400}]
    ctx = build_context(QUESTION, RESULTS, budget=1000, history=history)
    assert len(ctx.history) == 1
    newest = ctx.history[0]
    assert newest.role == "user"
    assert newest.content.startswith("turn2 long")
    assert newest.content.endswith("\u2026")
    assert ctx.history_tokens <= 150  # 15 % of 1000
    assert ctx.history_dropped == 2
    # Nothing of a turn fits a share of 0 tokens (15 % of 5): no history at all.
    tiny = build_context(QUESTION, RESULTS, budget=5, history=history)
    assert tiny.history == ()
    assert tiny.history_tokens == 0
    assert tiny.prompt_text == tiny.text


def test_a_token_budget_reserves_what_the_history_takes() -> None:
    budget = TokenBudget(8192)
    ctx = build_context(QUESTION, RESULTS, budget=budget, history=conversation(3))
    assert ctx.allocation is not None
    assert ctx.allocation.history == ctx.history_tokens > 0
    assert ctx.allocation.context == ctx.budget == 8192 - 200 - 1200 - CL100K.count(QUESTION) - ctx.history_tokens
    # A long conversation gets at most history_cap (500) tokens, the newest turns first.
    long = build_context(QUESTION, RESULTS, budget=budget, history=conversation(5, words=200))
    assert long.allocation is not None
    assert long.history_tokens == long.allocation.history <= 500
    assert shown(long) == [3, 4]
    # And at most history_share of what the reserves and the query leave.
    small = build_context(QUESTION, RESULTS, budget=TokenBudget(2000), history=conversation(5, words=200))
    assert small.allocation is not None
    assert small.history_tokens <= int((2000 - 200 - 1200 - CL100K.count(QUESTION)) * 0.15)


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "graph"])
@pytest.mark.parametrize("counter", ["cl100k_base", "regex"])
def test_random_histories_never_exceed_the_budget(fmt: str, counter: str) -> None:
    rng = random.Random(7)
    count = get_token_counter(counter)
    vocabulary = ["alpha", "beta,", "gamma.", "Oslo", "\u00e9t\u00e9", "\u4e2d\u6587", "42", "\n", "  "]
    for _ in range(60):
        history = [
            {
                "role": rng.choice(["user", "assistant", "system"]),
                "content": " ".join(rng.choice(vocabulary) for _ in range(rng.randint(0, 120))),
            }
            for _ in range(rng.randint(1, 9))
        ]
        budget = rng.randint(1, 800)
        ctx = build_context(QUESTION, RESULTS, budget=budget, format=fmt, counter=count, history=history)
        assert ctx.tokens <= ctx.budget
        assert ctx.history_tokens <= min(500, int(budget * 0.15))
        assert count.count(ctx.prompt_text) <= budget
        assert len(ctx.history) + ctx.history_dropped == len(history)
        # Kept turns are the newest, in order (the newest possibly cut).
        given = [Turn(h["role"], h["content"]) for h in history]  # type: ignore[arg-type]
        if ctx.history:
            tail = given[-len(ctx.history) :]
            assert [t.role for t in ctx.history] == [t.role for t in tail]
            assert [t.content for t in ctx.history[:-1]] == [t.content for t in tail[:-1]]


def test_graph_format_and_dict_and_turn_objects() -> None:
    store = InMemoryGraphStore()
    history = [Turn("system", "Answer briefly."), {"role": "user", "content": "Who is Anna Berg?"}]
    ctx = build_context(QUESTION, RESULTS, budget=300, format="graph", graph_store=store, history=history)
    assert ctx.prompt_text.startswith("## Conversation History\nSystem: Answer briefly.\nUser: Who is Anna Berg?\n\n")
    assert "## ENTITIES" in ctx.prompt_text
    data = ctx.to_dict()
    assert data["history"] == [{"role": "system", "content": "Answer briefly."}, history[1]]
    assert data["history_tokens"] == ctx.history_tokens
    assert data["history_dropped"] == 0
    assert data["prompt_text"] == ctx.prompt_text


def test_without_history_nothing_changes() -> None:
    plain = build_context(QUESTION, RESULTS, budget=300)
    for history in (None, []):
        ctx = build_context(QUESTION, RESULTS, budget=300, history=history)
        assert ctx == plain
        assert ctx.prompt_text == ctx.text
        assert "history" not in ctx.to_dict()


@pytest.mark.parametrize(
    ("history", "message"),
    [
        ("hello", r"history must be a list of turns"),
        ({"role": "user", "content": "hi"}, r"history must be a list of turns"),
        ([{"role": "bot", "content": "hi"}], r"history\[0\]\.role must be one of 'user', 'assistant', 'system'"),
        ([{"role": "user", "content": "a"}, {"role": "user"}], r"history\[1\] lacks content"),
        ([{"role": "user", "content": 3}], r"history\[0\]\.content must be a string"),
        ([{"role": "user", "content": "a", "name": "x"}], r"history\[0\] has unknown keys \['name'\]"),
        ([("user", "hi")], r"history\[0\] must be a \{'role', 'content'\} mapping"),
    ],
)
def test_invalid_history_names_the_field(history: object, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        build_context(QUESTION, RESULTS, budget=300, history=history)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match=message):
        history_turns(history)


def test_turn_checks_its_fields() -> None:
    with pytest.raises(InvalidInput, match=r"turn\.role must be one of"):
        Turn("tool", "x")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match=r"turn\.content must be a string"):
        Turn("user", None)  # type: ignore[arg-type]
    assert Turn("assistant", "ok").to_dict() == {"role": "assistant", "content": "ok"}


async def test_pipeline_context_takes_history_and_checks_it_before_retrieval() -> None:
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(dimension=64)
    await graph.store_documents(DOCS)
    vectors_of = await embedder.embed_documents([d.content or "" for d in DOCS])
    await vectors.upsert([VectorRecord(d.id, v) for d, v in zip(DOCS, vectors_of, strict=True)])
    pipeline = presets.minimal(vectors, embedder, graph)
    history = conversation(2)
    ctx = await aretrieve_context(pipeline, QUESTION, budget=300, history=history)
    assert shown(ctx) == [0, 1]
    assert ctx.sources
    assert retrieve_context(pipeline, QUESTION, budget=300, history=history).prompt_text == ctx.prompt_text

    class Counting:
        name = "counting"
        calls = 0

        async def run(self, query: object, candidates: object, context: object) -> list[object]:
            Counting.calls += 1
            return []

    with pytest.raises(InvalidInput, match=r"history\[0\]\.role"):
        await aretrieve_context(
            Pipeline([Counting()]), QUESTION, budget=100, history=[{"role": "tool", "content": "x"}]
        )
    assert Counting.calls == 0


def test_a_huge_newest_turn_is_cut_from_its_head() -> None:
    huge = [{"role": "user", "content": "turn0 " + "word " * 400_000}]
    ctx = build_context(QUESTION, RESULTS, budget=1000, history=huge)
    assert len(ctx.history) == 1
    assert ctx.history[0].content.startswith("turn0 word")
    assert 0 < ctx.history_tokens <= 150

"""Chat logs and transcripts: a sentence taken out of a speaker's turn keeps its speaker."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from graphfuse import Document, Result, run_sync
from graphfuse._core._sentences import sentence_spans
from graphfuse.context import build_context
from graphfuse.context._dialogue import speaker_turns
from graphfuse.stores import InMemoryGraphStore

CHAT = (
    "LiHua: Hey! That restaurant we hit up tonight was awesome! The food was delicious.\n"
    "WolfgangSchulz: Totally! Glad you enjoyed it. I really liked the steak I had. Juicy and cooked perfectly.\n"
    "LiHua: Nice choice! That steak must have been really good.\n"
    "WolfgangSchulz: Sounds great! 🕒! See you at the gym on Tuesday."
)


def turns_of(text: str) -> list[tuple[str, str | None, int]]:
    spans = sentence_spans(text)
    turns = speaker_turns(text, spans)
    assert turns is not None
    return [(text[s:e], label, n) for (s, e), label, n in zip(spans, turns.labels, turns.turns, strict=True)]


def test_sentences_inside_a_turn_carry_its_label() -> None:
    found = turns_of(CHAT)
    assert found[:3] == [
        ("LiHua: Hey!", None, 0),  # (it says its speaker already)
        ("That restaurant we hit up tonight was awesome!", "LiHua", 0),
        ("The food was delicious.", "LiHua", 0),
    ]
    assert ("I really liked the steak I had.", "WolfgangSchulz", 1) in found
    assert ("That steak must have been really good.", "LiHua", 2) in found


def test_labels_of_several_words_and_lines_outside_any_turn() -> None:
    text = "Dr. Jane Doe: We start. It is late.\nMax: Fine. Go.\nA closing line. Another one."
    assert turns_of(text) == [
        ("Dr. Jane Doe: We start.", None, 0),
        ("It is late.", "Dr. Jane Doe", 0),
        ("Max: Fine.", None, 1),
        ("Go.", "Max", 1),
        ("A closing line.", None, -1),  # an unlabelled line is no one's turn
        ("Another one.", None, -1),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Note: the film was shot in Bergen. It premiered in 1961.",  # one labelled line is not a dialogue
        "The meeting starts at 12:30 pm. Bring notes.\n10:45: coffee. Then more.\n11:00: talks. Go.",  # times
        "Anna Berg was a director. She was born in Oslo.",
        "",
    ],
)
def test_texts_that_are_not_dialogues(text: str) -> None:
    assert speaker_turns(text, sentence_spans(text)) is None


def chat_results() -> list[Result]:
    return [Result(Document("c1", CHAT, {"title": "20260514_22:00"}), 0.9, {})]


def test_evidence_names_the_speaker_of_a_sentence_it_takes_out_of_a_turn() -> None:
    ctx = build_context("Which steak did WolfgangSchulz like?", chat_results(), budget=40, format="evidence")
    assert ctx.tokens <= 40
    assert "WolfgangSchulz: I really liked the steak I had." in ctx.text
    # Without the label it would read as the previous speaker's words.
    assert "perfectly. That steak" not in ctx.text


def test_consecutive_sentences_of_one_turn_are_labelled_once() -> None:
    ctx = build_context("steak juicy cooked liked", chat_results(), budget=60, format="evidence")
    assert "WolfgangSchulz: I really liked the steak I had. Juicy and cooked perfectly." in ctx.text
    assert ctx.text.count("WolfgangSchulz") == 1


def test_a_sentence_without_words_is_never_evidence() -> None:
    ctx = build_context("When is the gym?", chat_results(), budget=200, format="evidence")
    assert "gym on Tuesday" in ctx.text
    assert "🕒" not in ctx.text


def test_a_shortened_passage_keeps_the_speakers() -> None:
    other = Result(Document("o", "Filler text about nothing. " * 30, {"title": "Other"}), 0.95, {})
    first = build_context("Which steak did WolfgangSchulz like?", [other], budget=1000)
    ctx = build_context("Which steak did WolfgangSchulz like?", [other, *chat_results()], budget=first.tokens + 40)
    assert [(s.id, s.shortened) for s in ctx.sources] == [("o", False), ("c1", True)]
    assert "WolfgangSchulz: I really liked the steak I had." in ctx.text


@pytest.mark.parametrize("fmt", ["passages", "evidence"])
def test_wikipedia_text_gets_no_labels(fmt: str) -> None:
    text = "Anna Berg (12 March 1920 - 3 May 1988) was a Norwegian film director. She was born in Oslo."
    res = [Result(Document("b", text, {"title": "Anna Berg"}), 0.9, {})]
    ctx = build_context("Where was Anna Berg born?", res, budget=200, format=fmt)
    assert "She was born in Oslo." in ctx.text
    assert "Anna Berg: She" not in ctx.text


def test_chinese_and_japanese_turns_use_the_fullwidth_colon() -> None:
    chat = "李华：你好！今天去哪里？\n王明：我们去公园吧。公园很美。"  # noqa: RUF001
    assert turns_of(chat) == [
        ("李华：你好！", None, 0),  # noqa: RUF001
        ("今天去哪里？", "李华", 0),  # noqa: RUF001
        ("王明：我们去公园吧。", None, 1),  # noqa: RUF001
        ("公园很美。", "王明", 1),
    ]
    # A clause before a colon is no speaker: a label in a script without spaces is a short name.
    notes = "今天我们讨论一下明年的预算和计划安排：预算。\n接下来我们讨论一下计划的细节：计划。"  # noqa: RUF001
    assert speaker_turns(notes, sentence_spans(notes)) is None


def test_an_untitled_dated_passage_is_headed_by_its_date_in_every_format() -> None:
    when = datetime(2026, 3, 14, 21, 6, tzinfo=timezone.utc)
    chat = Document("choir/2026-03-14T21:06:00Z", CHAT, {"channel": "choir"}, created_at=when)
    titled = Document("t", "The steak house opened in 2020.", {"title": "Steak house"}, created_at=when)
    undated = Document("u", "WolfgangSchulz: The steak was juicy.\nLiHua: Indeed it was.")
    results = [Result(chat, 0.9, {}), Result(titled, 0.8, {}), Result(undated, 0.7, {})]
    passages = build_context("What did Wolfgang like?", results, budget=400, format="passages")
    assert passages.text.startswith("[1] 2026-03-14 21:06 UTC\nLiHua: Hey!")
    assert "[2] Steak house\n" in passages.text  # a title stays the head
    assert "[3] WolfgangSchulz: The steak" in passages.text  # nothing to show: no head
    assert [s.title for s in passages.sources] == ["2026-03-14 21:06 UTC", "Steak house", None]
    evidence = build_context("What steak did Wolfgang like?", results[:1], budget=60, format="evidence")
    assert evidence.text.startswith("[1] 2026-03-14 21:06 UTC: ")
    store = InMemoryGraphStore()
    run_sync(store.store_documents([chat]))
    graph = build_context("What steak did Wolfgang like?", results[:1], budget=200, format="graph", graph_store=store)
    assert graph.text.startswith("## ENTITIES\n- [1] 2026-03-14 21:06 UTC: ")

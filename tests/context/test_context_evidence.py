"""The evidence scorer (``graphfuse.context._evidence``): which sentences of the retrieved pages answer a question."""

from __future__ import annotations

from typing import Any

import pytest

from graphfuse import Document, Result
from graphfuse._core._sentences import content_terms
from graphfuse.context import RegexTokenCounter, _evidence, build_context
from graphfuse.context._evidence import SentenceScorer, relation_query
from graphfuse.context._items import Item, items_from_results


def test_evidence_reads_words_and_names_inside_text_without_spaces() -> None:
    tower = Document(
        "tower",
        "東京タワーは電波塔である。高さは333メートルである。展望台がある。設計者は内藤多仲である。",
        {"title": "東京タワー"},
    )
    tokyo = Document("tokyo", "東京は日本の首都である。人口は約1400万人である。", {"title": "東京"})
    results = [Result(tower, 0.9, {}), Result(tokyo, 0.8, {})]
    question = "東京タワーの設計者は誰ですか？"  # noqa: RUF001
    # The title is found inside the question (so what is asked about it is the rest) ...
    asked = relation_query(question, _items(results))
    assert asked is not None
    assert "設計" in asked
    assert "東京" not in asked
    # ... and the question's words inside the sentences: the designer's sentence is evidence.
    ctx = build_context(question, results, budget=45, format="evidence")
    assert ctx.tokens <= 45
    assert ctx.text == "[1] 東京タワーは電波塔である。 設計者は内藤多仲である。"


def _items(results: list[Result]) -> list[Any]:
    return items_from_results(results)[0]


def test_a_place_question_prefers_the_sentence_that_names_a_place() -> None:
    from graphfuse.context._items import Item

    text = "Ada Brook was a composer. Brook died of a stroke at home. Brook died of a stroke in Ukiah."
    item = Item("p", "Ada Brook", text, 1.0, {}, ("p",))
    for question in ("Where did Ada Brook die?", "What was the place of death of Ada Brook?"):
        at_home, in_ukiah = SentenceScorer(question, [item]).sentences(0)[1:]
        assert in_ukiah.score > at_home.score, question
        assert "die" in in_ukiah.terms  # "death" in the question, "died" in the text
    # No place asked for: the two score the same.
    at_home, in_ukiah = SentenceScorer("Why did Ada Brook die?", [item]).sentences(0)[1:]
    assert in_ukiah.score == at_home.score


def test_the_question_word_not_the_topic_says_whether_a_date_or_a_place_is_asked() -> None:
    from graphfuse.context._items import Item

    # One sentence gives a year, the other a place: "born"/"died" say what the question is about,
    # "where"/"when" what it asks for.
    text = "Ada Brook was a composer. Brook was born in 1901. Brook was born in Ukiah."
    item = Item("p", "Ada Brook", text, 1.0, {}, ("p",))

    def year_and_place(question: str) -> tuple[float, float]:
        year, place = SentenceScorer(question, [item]).sentences(0)[1:]
        return year.score, place.score

    year, place = year_and_place("Where was Ada Brook born?")
    assert place > year
    year, place = year_and_place("When was Ada Brook born?")
    assert year > place
    year, place = year_and_place("Who was born first, Ada Brook or Tom Lee?")  # a comparison of dates
    assert year > place


def test_relation_words_match_their_forms_in_the_text() -> None:
    assert content_terms("place of death") & content_terms("she died in Ukiah")
    assert content_terms("date of birth") & content_terms("he was born in 1901")
    assert content_terms("Who is his spouse?") & content_terms("He married Ann Lee.")
    assert content_terms("Who is her child?") & content_terms("Her daughter Eva sang.")
    # A parent and a child are one relation read from either end; a killing is a death.
    assert content_terms("Who is the father of Eva?") & content_terms("Eva is the daughter of Tom Lee.")
    # Education and burial, as they are asked and as they are stated.
    for stated in ("He graduated from King's College.", "She studied law.", "An alumnus of Eton."):
        assert content_terms("Where did he study?") & content_terms(stated), stated
    assert content_terms("What is the place of burial of Eva?") & content_terms("Eva was interred in Oslo.")
    assert content_terms("Where was Eva buried?") & content_terms("Her burial took place in Oslo.")
    assert content_terms("Who is his paternal grandmother?") & content_terms("He was the son of Ann Bo.")
    assert content_terms("place of death") & content_terms("he was assassinated in Delft")
    assert content_terms("place of death") & content_terms("dying in Paris")


def test_relation_query_is_the_question_without_the_titles_it_names() -> None:
    from graphfuse.context._items import Item

    def item(title: str) -> Item:
        return Item(title, title, "Some text.", 1.0, {}, (title,))

    items = [item("Quiet Harbour (film)"), item("Anna Berg")]
    assert relation_query("Where did the director of Quiet Harbour die?", items) == "where did the director of die"
    # Each named title is removed where it stands, the other words kept in order.
    assert relation_query("Was Anna Berg older than the star of Quiet Harbour?", items) == (
        "was older than the star of"
    )
    assert relation_query("Who directed Blue Moon?", items) is None  # names no retrieved title
    assert relation_query("Anna Berg", items) is None  # nothing but the name


def test_sentences_restating_a_named_document_yield_to_the_next_hop(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphfuse.context._evidence import SentenceScorer

    film = Item(
        "f",
        "Quiet Harbour",
        "Quiet Harbour is a film directed by Anna Berg. Quiet Harbour was shot in a harbour town. "
        "Critics said Quiet Harbour was slow.",
        1.0,
        {},
        ("f",),
    )
    berg = Item("b", "Anna Berg", "Anna Berg was a film maker. She was born in Oslo.", 0.5, {}, ("b",))
    question = "Where was the director of Quiet Harbour born?"
    damped = _evidence.EVIDENCE_WEIGHTS["restated"]
    assert 0 < damped < 1
    subject, shot, slow = SentenceScorer(question, [film, berg]).sentences(0)
    # The named document's first sentence (which names the bridge) keeps its whole score; the
    # others, which only restate the question's name, keep the 'restated' share of it.
    monkeypatch.setattr(_evidence, "EVIDENCE_WEIGHTS", {**_evidence.EVIDENCE_WEIGHTS, "restated": 1.0})
    plain = SentenceScorer(question, [film, berg]).sentences(0)
    monkeypatch.undo()
    assert subject.score == plain[0].score
    assert shot.score == pytest.approx(damped * plain[1].score)
    assert slow.score == pytest.approx(damped * plain[2].score)
    results = _evidence_results(film, berg)
    ctx = build_context(question, results, budget=45, format="evidence", counter=RegexTokenCounter())
    assert "born in Oslo" in ctx.text
    assert "shot in a harbour town" not in ctx.text
    # A question naming both documents compares them: their own sentences are not damped.
    both = "Was Quiet Harbour shot where Anna Berg was born?"
    compared = SentenceScorer(both, [film, berg]).sentences(0)
    monkeypatch.setattr(_evidence, "EVIDENCE_WEIGHTS", {**_evidence.EVIDENCE_WEIGHTS, "restated": 1.0})
    undamped = SentenceScorer(both, [film, berg]).sentences(0)
    monkeypatch.undo()
    assert [s.score for s in compared] == [s.score for s in undamped]
    # A name given only in parentheses disambiguates the other: the question is no comparison.
    disambiguated = "Where was the director of Quiet Harbour (Anna Berg film) born?"
    _, shot_named, slow_named = SentenceScorer(disambiguated, [film, berg]).sentences(0)
    monkeypatch.setattr(_evidence, "EVIDENCE_WEIGHTS", {**_evidence.EVIDENCE_WEIGHTS, "restated": 1.0})
    plain = SentenceScorer(disambiguated, [film, berg]).sentences(0)
    monkeypatch.undo()
    assert shot_named.score == pytest.approx(damped * plain[1].score)
    assert slow_named.score == pytest.approx(damped * plain[2].score)


def _evidence_results(*items: object) -> list[Result]:
    out = []
    for n, it in enumerate(items):
        assert isinstance(it, Item)
        out.append(Result(Document(it.id, it.text, {"title": it.title}), 1.0 / (1 + n), {}))
    return out


def test_a_document_sharing_a_rare_name_with_the_best_one_is_a_bridge_without_titles() -> None:
    from graphfuse.context._items import Item

    # No titles: the chat names Lina Okafor, and so does the later note, which the best one links to.
    best = Item("a", None, "We met Lina Okafor at the harbour office on Monday.", 1.0, {}, ("a",))
    other = Item("b", None, "The ferry timetable changed again this week.", 0.5, {}, ("b",))
    linked = Item("c", None, "Lina Okafor moved to Tromso in 2019.", 0.3, {}, ("c",))
    question = "Where did the woman we met at the harbour office move?"
    scorer = SentenceScorer(question, [best, other, linked])
    (moved,) = scorer.sentences(2)
    (ferry,) = scorer.sentences(1)
    # Rank weights: 1 / (1 + 2 * rank) is 0.2 for the third; the shared name lifts it to 0.5 of the first's.
    unnamed = Item("c", None, "Someone moved to Tromso in 2019.", 0.3, {}, ("c",))
    alone = SentenceScorer(question, [best, other, unnamed])
    assert moved.score > alone.sentences(2)[0].score
    assert moved.score > ferry.score
    # A name the question itself contains links nothing.
    asked = SentenceScorer("Where did Lina Okafor move?", [best, other, linked])
    assert asked.sentences(2)[0].score < moved.score


def test_a_document_titled_by_what_is_asked_ranks_its_sentences_higher(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphfuse.context._evidence import SentenceScorer

    question = "What year did the governor of the city where Anna Berg died leave office?"
    berg = Item("b", "Anna Berg", "Anna Berg was a painter. She died in Harbour City.", 1.0, {}, ("b",))
    text = "Marchese Serafini held the post from 1929 until 1952."

    def fact_score(title: str) -> float:
        post = Item("p", title, text, 0.5, {}, ("p",))
        return SentenceScorer(question, [berg, post]).sentences(1)[0].score

    titled, untitled = fact_score("Governor of Harbour City"), fact_score("Marchese Serafini")
    assert titled > untitled  # the title holds "governor" and "city", words the question asks with
    monkeypatch.setattr(_evidence, "EVIDENCE_WEIGHTS", {**_evidence.EVIDENCE_WEIGHTS, "title": 0.0})
    assert fact_score("Governor of Harbour City") == pytest.approx(untitled)
    monkeypatch.undo()
    # The document the question names gets nothing for its title: its name is what the question says.
    named = SentenceScorer(question, [berg]).sentences(0)
    monkeypatch.setattr(_evidence, "EVIDENCE_WEIGHTS", {**_evidence.EVIDENCE_WEIGHTS, "title": 0.0})
    assert [s.score for s in named] == [s.score for s in SentenceScorer(question, [berg]).sentences(0)]


def test_in_markdown_the_sentence_after_the_opening_headings_defines_the_subject() -> None:
    from graphfuse.context._items import Item

    question = "Who carries the Atlas pager?"
    plain = Item("p", "Atlas Maps", "Atlas Maps is the tiles service. It has a pager.", 1.0, {}, ("p",))
    noted = Item(
        "n", "Atlas Maps", "# Atlas\n## Overview\nAtlas Maps is the tiles service. It has a pager.", 1.0, {}, ("n",)
    )
    defining, _ = SentenceScorer(question, [plain]).sentences(0)
    heading, subheading, after, _ = SentenceScorer(question, [noted]).sentences(0)
    assert after.score == defining.score  # the subject bonus, as if the headings were not there
    assert heading.score == subheading.score == 0.0  # a heading states nothing: never evidence
    ctx = build_context(
        question, [Result(Document("n", noted.text, {"title": "Atlas Maps"}), 0.9, {})], budget=60, format="evidence"
    )
    assert ctx.text == "[1] Atlas Maps is the tiles service. It has a pager."

"""The shortcuts that make context assembly fast give the same answers as the plain ways.

Title matching without a regex alternation, the sentence splitter's rewritten regex and word
look-back, the cl100k_base lower bound that rejects a text without encoding it: each is checked
against the plain computation it replaces, and whole contexts against a counter without the
lower bound (every fit decided by an exact count).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from graphfuse import Document, Relation, Result, run_sync
from graphfuse.context import TiktokenCounter, abuild_context
from graphfuse.context._evidence import NameMatcher, _pattern
from graphfuse.context._packing import Budgeter
from graphfuse.context._text import _ABBREVIATIONS as ABBREVIATIONS
from graphfuse.context._text import _END, _word_before, ascii_word_map, sentence_spans, words_of
from graphfuse.indexing._extractors import normalize
from graphfuse.stores import InMemoryGraphStore

CL100K = TiktokenCounter("cl100k_base")
ROOT = Path(__file__).resolve().parents[1]

# The splitter's regex as it was first written (a plain alternation): the faster one must match the same.
PLAIN_END = re.compile(r"""(?:[.!?]+["')\]\u201d\u2019]*(?=\s))|[\u3002\uff01\uff1f]+|\n+""")
PLAIN_LAST_WORD = re.compile(r"(\w+)\W*$")
PLAIN_WORD = re.compile(r"\w+")

_tricky = st.lists(
    st.sampled_from([*"ab .!?\n\t\"')]_9é東。\uff01\uff1f\u201d\u2019\u0301²", "Dr", "U.S", " J"]),
    max_size=60,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(text=_tricky)
def test_sentence_end_regex_matches_the_plain_alternation(text: str) -> None:
    assert [m.span() for m in _END.finditer(text)] == [m.span() for m in PLAIN_END.finditer(text)]


@settings(max_examples=400, deadline=None)
@given(text=_tricky.filter(lambda t: "." in t), data=st.data())
def test_word_before_a_period_matches_the_regex_search(text: str, data: Any) -> None:
    dot = data.draw(st.sampled_from([i for i, c in enumerate(text) if c == "."]))
    found = PLAIN_LAST_WORD.search(text, max(0, dot - 40), dot + 1)
    assert _word_before(text, dot) == (found.group(1) if found else "")


def plain_sentence_spans(text: str) -> list[tuple[int, int]]:
    """The sentence splitter as first written: plain regexes and character loops."""
    spans: list[tuple[int, int]] = []

    def add(start: int, end: int) -> None:
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if end > start:
            spans.append((start, end))

    start = 0
    for m in PLAIN_END.finditer(text):
        if m.group()[0] == ".":
            word = PLAIN_LAST_WORD.search(text, max(0, m.start() - 40), m.start() + 1)
            before = word.group(1) if word else ""
            if (len(before) == 1 and before.isalpha()) or before.casefold() in ABBREVIATIONS:
                continue
        add(start, m.end())
        start = m.end()
    add(start, len(text))
    return spans


_prose = st.lists(
    st.sampled_from([" ", ".", ". ", "!", "\n", "\u3002", "Dr", "U.S", "J", "approx", "Approx", "Washington", "x_y"])
    | st.sampled_from(
        ["\ufb05" * 7, "\u0130" * 7, "1234567", "sept", "\u00e9t\u00e9", "\u6771\u4eac", "\u00a0", "\u2028"]
    ),
    max_size=40,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(text=_tricky | _prose)
def test_sentence_spans_match_the_splitter_as_first_written(text: str) -> None:
    assert sentence_spans(text) == plain_sentence_spans(text)


@settings(max_examples=200, deadline=None)
@given(text=_tricky, limit=st.integers(min_value=0, max_value=4))
def test_sentence_spans_with_a_limit_is_a_prefix(text: str, limit: int) -> None:
    assert sentence_spans(text, limit) == sentence_spans(text)[:limit]


@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet=st.characters(max_codepoint=0x7F)) | _tricky, data=st.data())
def test_words_read_without_a_regex_are_the_regex_words(text: str, data: Any) -> None:
    assert words_of(text) == PLAIN_WORD.findall(normalize(text))
    if text.isascii():  # any slice of the mapped text splits into the words of that slice
        start = data.draw(st.integers(min_value=0, max_value=len(text)))
        end = data.draw(st.integers(min_value=start, max_value=len(text)))
        assert ascii_word_map(text.lower())[start:end].split() == PLAIN_WORD.findall(text.lower(), start, end)


_name_words = st.sampled_from(["a", "b", "c", "ab", "abc", "x", "é", "東京", "a_b"])


@settings(max_examples=400, deadline=None)
@given(
    keys=st.lists(st.lists(_name_words, min_size=1, max_size=3).map(" ".join), max_size=6),
    words=st.lists(_name_words, max_size=14),
)
def test_name_matcher_finds_what_the_regex_alternation_finds(keys: list[str], words: list[str]) -> None:
    pattern = _pattern(keys)
    text = " ".join(words)
    matcher = NameMatcher(keys)
    assert matcher.findall(words) == (pattern.findall(text) if pattern else [])
    assert matcher.search(words) == bool(pattern and pattern.search(text))
    assert bool(matcher) == bool(pattern)


_any_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200)
_wordy = st.lists(
    st.sampled_from(["it's", "don't", " the", "'ll", "naïve", "東京", "Москва", "x1", "1x"])
    | st.text(alphabet="abcXYZ '\u2019.,-_\n\t019é\u0301", max_size=8),
    max_size=30,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(text=_any_text | _wordy)
def test_cl100k_lower_bound_never_exceeds_the_count(text: str) -> None:
    assert CL100K.at_least(text) <= CL100K.count(text)


def test_cl100k_lower_bound_on_real_text_and_other_encodings() -> None:
    for path in [*sorted((ROOT / "docs").glob("*.md")), ROOT / "src" / "graphfuse" / "context" / "_packing.py"]:
        text = path.read_text(encoding="utf-8")
        for start in range(0, len(text), 700):
            piece = text[start : start + 1400]
            assert CL100K.at_least(piece) <= CL100K.count(piece), (path, start)
    prose = "Anna Berg was a Norwegian film director. She was born in Oslo in 1920."
    assert CL100K.at_least(prose) >= 10  # useful, not only safe
    assert TiktokenCounter("o200k_base").at_least(prose) == 0


@settings(max_examples=300, deadline=None)
@given(text=_any_text | _wordy, room=st.integers(min_value=-3, max_value=60))
def test_budgeter_over_is_count_above_room(text: str, room: int) -> None:
    assert Budgeter(CL100K, 100).over(text, room) == (CL100K.count(text) > room)


class PlainCl100k:
    """cl100k_base counts without the lower bound: every fit decided by an exact count."""

    name = "cl100k_base"

    def count(self, text: str) -> int:
        return CL100K.count(text)


_sentence = st.lists(
    st.sampled_from(
        [
            "Anna Berg",
            "directed",
            "the film",
            "Oslo.",
            "1961",
            "born",
            "!",
            "?",
            "\n",
            "東京。",
            "Dr. X",
            "Москва — столица.",
            "harbour",
            " ",
        ]
    ),
    max_size=40,
).map(" ".join)
_long = st.integers(min_value=50, max_value=600).map(lambda n: " ".join(f"word{i % 37} harbour" for i in range(n)))


@settings(max_examples=120, deadline=None)
@given(
    texts=st.lists(st.one_of(_sentence, _long, st.text(max_size=300)), max_size=10),
    titles=st.lists(st.sampled_from([None, "Anna Berg", "Oslo", "東京", "The film", "X"]), min_size=10, max_size=10),
    query=st.sampled_from(["Who directed the film born in Oslo?", "東京", "When was Anna Berg born?"]),
    budget=st.integers(min_value=1, max_value=1500),
    fmt=st.sampled_from(["passages", "evidence", "graph"]),
)
def test_fast_paths_give_the_context_of_plain_exact_counting(
    texts: list[str], titles: list[str | None], query: str, budget: int, fmt: str
) -> None:
    results = [
        Result(Document(f"d{i}", text, {} if titles[i] is None else {"title": titles[i]}), 1.0 - i / 20, {})
        for i, text in enumerate(texts)
    ]

    async def run(counter: Any) -> Any:
        store = InMemoryGraphStore()
        await store.store_documents([r.document for r in results])
        if len(results) > 2:
            await store.create_relations([Relation("d0", "d1", "MENTIONS"), Relation("d2", "d0", "LINKS_TO", 0.3)])
        return await abuild_context(query, results, budget=budget, format=fmt, counter=counter, graph_store=store)

    fast, plain = run_sync(run(CL100K)), run_sync(run(PlainCl100k()))
    assert fast == plain
    assert fast.tokens == CL100K.count(fast.text) <= budget

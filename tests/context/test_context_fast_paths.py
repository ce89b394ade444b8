"""The shortcuts that make context assembly fast give the same answers as the plain ways.

Title matching without a regex alternation, the sentence splitter's rewritten regex and word
look-back, the cl100k_base lower bound that rejects a text without encoding it, the count of a
joined text from the counts of its parts (cl100k_base's cuts), shared names extracted only where
they may be, query terms and title mentions found with ``str.find`` instead of splitting every
passage into words: each is checked against the plain computation it replaces, and whole contexts
against a counter without the lower bound or the cuts (every fit decided by counting the whole text).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphfuse import Document, Relation, Result, run_sync
from graphfuse._core._sentences import _ABBREVIATIONS as ABBREVIATIONS
from graphfuse._core._sentences import (
    _END,
    _RELATION_STEMS,
    _SUFFIXES,
    _word_before,
    ascii_word_map,
    content_terms,
    holds_term,
    sentence_spans,
    stem,
    stem_prefixes,
    words_of,
)
from graphfuse.context import TiktokenCounter, abuild_context
from graphfuse.context._counters import _pieces
from graphfuse.context._cuts import _CUT, _cut_at, first_cut, last_cut
from graphfuse.context._evidence import (
    _EXTRACTOR,
    _SHARED_AMONG,
    NameMatcher,
    SentenceScorer,
    _key,
    _name_key,
    _pattern,
    _SharedNames,
)
from graphfuse.context._graph import _SPACE, _clip
from graphfuse.context._items import Item
from graphfuse.context._packing import Budgeter
from graphfuse.defaults import EVIDENCE_WEIGHTS
from graphfuse.indexing._extractors import has_cjk, normalize
from graphfuse.stores import InMemoryGraphStore

CL100K = TiktokenCounter("cl100k_base")
ROOT = Path(__file__).resolve().parents[2]

# The splitter's regex as it was first written (a plain alternation): the faster one must match the same.
PLAIN_END = re.compile(r"""(?:[.!?]+["')\]\u201d\u2019]*(?=\s))|[\u3002\uff01\uff1f]+|\n+""")
PLAIN_LAST_WORD = re.compile(r"(\w+)\W*$")
PLAIN_WORD = re.compile(r"\w+")

_tricky = st.lists(
    st.sampled_from([*"ab .!?\n\t\"')]_9é東。\uff01\uff1f\u201d\u2019\u0301²", "Dr", "U.S", " J"]),
    max_size=60,
).map("".join)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(text=_tricky)
def test_sentence_end_regex_matches_the_plain_alternation(text: str) -> None:
    assert [m.span() for m in _END.finditer(text)] == [m.span() for m in PLAIN_END.finditer(text)]


@pytest.mark.slow
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


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(text=_tricky | _prose)
def test_sentence_spans_match_the_splitter_as_first_written(text: str) -> None:
    assert sentence_spans(text) == plain_sentence_spans(text)


@settings(max_examples=200, deadline=None)
@given(text=_tricky, limit=st.integers(min_value=0, max_value=4))
def test_sentence_spans_with_a_limit_is_a_prefix(text: str, limit: int) -> None:
    assert sentence_spans(text, limit) == sentence_spans(text)[:limit]


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet=st.characters(max_codepoint=0x7F)) | _tricky, data=st.data())
def test_words_read_without_a_regex_are_the_regex_words(text: str, data: Any) -> None:
    # (Runs of CJK characters are read as their bigrams: test_bm25_tokens and test_context_assembly.)
    text = "".join(c for c in text if not has_cjk(c))
    assert words_of(text) == PLAIN_WORD.findall(normalize(text))
    if text.isascii():  # any slice of the mapped text splits into the words of that slice
        start = data.draw(st.integers(min_value=0, max_value=len(text)))
        end = data.draw(st.integers(min_value=start, max_value=len(text)))
        assert ascii_word_map(text.lower())[start:end].split() == PLAIN_WORD.findall(text.lower(), start, end)


_name_words = st.sampled_from(["a", "b", "c", "ab", "abc", "x", "é", "東京", "a_b"])


@pytest.mark.slow
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


# Words built to meet every rule of stem: its suffixes, the relation stems, short and long words.
_stem_parts = st.sampled_from(
    [
        *(s for s, _ in _SUFFIXES),
        *_RELATION_STEMS,
        "y",
        "d",
        "e",
        "di",
        "ci",
        "t",
        "entit",
        "paint",
        "born",
        "7",
        "_",
        "s",
    ]
)
_stem_word = st.lists(
    _stem_parts | st.text(alphabet="abcdeisty019_", min_size=1, max_size=4), min_size=1, max_size=4
).map("".join)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None)
@given(word=_stem_word)
def test_every_word_starts_with_a_prefix_of_its_stem(word: str) -> None:
    assert any(word.startswith(p) for p in stem_prefixes(stem(word)))


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(
    words=st.lists(_stem_word | st.sampled_from(["the", "of", "a", "I", "x"]), max_size=12),
    seps=st.lists(st.sampled_from([" ", ". ", ", ", "-", "\n", "'", "  "]), min_size=12, max_size=12),
    term=_stem_word.map(stem),
)
def test_holds_term_is_membership_in_the_content_terms(words: list[str], seps: list[str], term: str) -> None:
    text = "".join(w + s for w, s in zip(words, seps, strict=False)).capitalize()
    for t in {term, *content_terms(text)}:
        assert holds_term(f" {ascii_word_map(text.lower())} ", t) == (t in content_terms(text))


_mentions = st.lists(
    st.sampled_from(
        ["Anna Berg", "Oslo", "Port of Spain", "Port", "Berg", "東京", "Café Müller", "born in", ".", "and"]
    ),
    max_size=12,
).map(" ".join)


def plain_ranks(items: list[Item], in_query: list[bool]) -> list[float]:
    """Rank weights as first written: every item's title mentions found first, then each raised in order."""
    names = [_name_key(it.title) if it.title else None for it in items]
    every = NameMatcher(n for n in names if n)
    first: dict[str, int] = {}
    for i, it in enumerate(items):
        for key in every.findall(words_of(it.text)):
            first.setdefault(key, i)
    rank = [1.0 / (1.0 + EVIDENCE_WEIGHTS["decay"] * i) for i in range(len(items))]
    for j, own in enumerate(names):
        if own is not None and not in_query[j] and first.get(own, j) < j:
            rank[j] = max(rank[j], EVIDENCE_WEIGHTS["linked"] * rank[first[own]])
    return rank


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(_mentions, min_size=1, max_size=10),
    titles=st.lists(
        st.sampled_from([None, "Anna Berg", "Oslo", "Port of Spain", "Berg", "東京", "Café Müller"]),
        min_size=10,
        max_size=10,
    ),
    query=st.sampled_from(["Who is Anna Berg?", "Where is Oslo?", "x"]),
    data=st.data(),
)
def test_rank_weights_worked_out_on_demand_are_those_of_the_plain_loop(
    texts: list[str], titles: list[str | None], query: str, data: Any
) -> None:
    items = [Item(f"d{i}", titles[i], text, 1.0, {}, (f"d{i}",)) for i, text in enumerate(texts)]
    scorer = SentenceScorer(query, items, shared_names=False)
    order = data.draw(st.permutations(range(len(items))))
    got = {j: scorer._rank_of(j) for j in order}
    in_query = [scorer._in_query[j] for j in range(len(items))]
    assert [got[j] for j in range(len(items))] == plain_ranks(items, in_query)


_any_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200)
_wordy = st.lists(
    st.sampled_from(["it's", "don't", " the", "'ll", "naïve", "東京", "Москва", "x1", "1x"])
    | st.text(alphabet="abcXYZ '\u2019.,-_\n\t019é\u0301", max_size=8),
    max_size=30,
).map("".join)


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(text=_any_text | _wordy)
def test_cl100k_lower_bound_never_exceeds_the_count(text: str) -> None:
    assert CL100K.at_least(text) <= CL100K.count(text)


@settings(max_examples=300, deadline=None)
@given(classes=st.text(alphabet="ax ", max_size=40).map(str.encode))
def test_lower_bound_pieces_are_counted_as_split_counts_them(classes: bytes) -> None:
    assert _pieces(classes) == len(classes.split())


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


# Characters around which the pre-tokenizer's branches meet: whitespace of every kind, letters,
# digits and punctuation of several scripts, combining marks, contractions.
_cut_prone = st.lists(
    st.sampled_from(
        [
            *"aZ09 \n\r\t\x0b\x0c.,;:!?'\"()[]{}<>-_/\\|@#$%^&*+=~`",
            *"\u0301\u0663\u00bd\u216b\u200b\u00a0\u3000\u2028\u2029\u202f\u1680\x1c\x1f\x85\u2019\u2026",
            *["é", "漢", "三", "ж", "😀", "'s", "'ll", "'T", " the", "\n\n", "  ", "123456", "[3] ", "Word"],
        ]
    ),
    max_size=30,
).map("".join)


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(text=_cut_prone | _any_text | _wordy)
def test_cl100k_cuts_split_the_count(text: str) -> None:
    cuts = [m.start() for m in _CUT.finditer(text, 1)]
    assert cuts == [i for i in range(1, len(text)) if _cut_at(text[i - 1], text[i])]
    for i in cuts:
        assert CL100K.count(text) == CL100K.count(text[:i]) + CL100K.count(text[i:]), i
    assert first_cut(text) == (cuts[0] if cuts else 0)
    assert last_cut(text) == (cuts[-1] if cuts else 0)


def test_cuts_that_are_not_cuts_of_o200k() -> None:
    # Why the cuts are cl100k_base's only: o200k_base's punctuation takes a "/" after line breaks.
    o200k = TiktokenCounter("o200k_base")
    text = "9.\n\n/"
    assert _cut_at(text[3], text[4])
    assert CL100K.count(text) == CL100K.count(text[:4]) + CL100K.count(text[4:])
    assert o200k.count(text) != o200k.count(text[:4]) + o200k.count(text[4:])


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(
    parts=st.lists(_cut_prone | _wordy, max_size=6),
    sep=st.sampled_from(["\n\n", "\n", " ", "", ": ", " \n", "\t", "x", "\n ", "10", "7"]),
)
def test_joined_texts_are_counted_as_the_joined_text(parts: list[str], sep: str) -> None:
    budgeter = Budgeter(CL100K, 100)
    assert budgeter.count_joined(parts, sep) == CL100K.count(sep.join(parts))
    # Seams worked out for one join serve the next (here: the same parts, one fewer).
    assert budgeter.count_joined(parts[1:], sep) == CL100K.count(sep.join(parts[1:]))
    o200k = TiktokenCounter("o200k_base")  # no cuts: counted whole
    assert Budgeter(o200k, 100).count_joined(parts, sep) == o200k.count(sep.join(parts))


def test_joined_passages_are_counted_from_their_seams() -> None:
    parts = [f"[{n}] Title {n}\nA passage about Oslo, born {1900 + n}. It ends here." for n in range(1, 30)]
    budgeter = Budgeter(CL100K, 100)
    for part in parts:
        budgeter.count(part)
    spy = Spy()
    budgeter.counter = spy
    assert budgeter.count_joined(parts, "\n\n") == CL100K.count("\n\n".join(parts))
    assert spy.counted  # only the few characters around the separators are counted anew
    assert max(map(len, spy.counted)) < 10


class Spy:
    """cl100k_base counts, and the texts counted."""

    name = "cl100k_base"

    def __init__(self) -> None:
        self.counted: list[str] = []

    def count(self, text: str) -> int:
        self.counted.append(text)
        return CL100K.count(text)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(text=_prose | _tricky | _wordy)
def test_sentence_keys_are_runs_of_the_text_key(text: str) -> None:
    # What lets a graph context skip splitting a text whose key does not hold a name.
    for start, end in sentence_spans(text):
        key = _key(text[start:end])
        assert not key or f" {key} " in f" {_key(text)} "


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=" \n\t\x0b\x1c\x85\xa0\u2028\u3000\u200bab.é", max_size=40), limit=st.integers(0, 30))
def test_clip_collapses_whitespace_as_the_regex(text: str, limit: int) -> None:
    plain = _SPACE.sub(" ", text).strip()
    assert _clip(text, limit) == _clip(plain, limit)
    assert _clip(text, 10**6) == plain


_proper = st.lists(
    st.sampled_from(["Anna Berg", "Oslo", "Liv Dahl", "the", "Berg's", "WolfgangSchulz", "Port of Spain"])
    | st.sampled_from(["born in", "and", ".", ". She met", "with", "Café Müller", "東京", "Ann", "BERG"]),
    max_size=14,
).map(" ".join)


def plain_sharing(query: str, texts: list[str]) -> list[int]:
    """The items sharing a rare name with the first, every item's names extracted."""
    if len(texts) < 2:
        return []
    asked = f" {' '.join(words_of(query))} "
    names = []
    for text in texts[:_SHARED_AMONG]:
        keys = {" ".join(words_of(m.entity)) for m in _EXTRACTOR.extract(text)}
        names.append({k for k in keys if len(k) >= 3 and f" {k} " not in asked})
    df: dict[str, int] = {}
    for keys in names:
        for k in keys:
            df[k] = df.get(k, 0) + 1
    first = {k for k in names[0] if df[k] <= 2}
    return [j for j in range(1, len(names)) if not first.isdisjoint(names[j])]


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(texts=st.lists(_proper, max_size=12), query=st.sampled_from(["Who is Anna Berg?", "Where is Oslo?", "x"]))
def test_shared_names_are_those_of_plain_extraction(texts: list[str], query: str) -> None:
    items = [Item(f"d{i}", None, text, 1.0, {}, (f"d{i}",)) for i, text in enumerate(texts)]
    shared = _SharedNames(query, items)
    assert [j for j in range(len(items)) if shared.shares(j)] == plain_sharing(query, texts)


class PlainCl100k:
    """cl100k_base counts without the lower bound or the cuts: every fit decided by counting the whole text."""

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


def test_normalising_line_by_line_is_normalising_the_whole() -> None:
    import unicodedata

    def whole(text: str) -> str:
        decomposed = unicodedata.normalize("NFKD", text)
        return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()

    alphabet = "ab\u00e9\u0301\n\r\u2028 \u00dfZ\u0130\u212b\u1e9e🐛"
    import random

    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        assert normalize(text) == whole(text), repr(text)


def test_remembered_spans_are_copies() -> None:
    text = "One sentence here. " * 400
    spans = sentence_spans(text)
    spans.clear()
    assert len(sentence_spans(text)) == 400

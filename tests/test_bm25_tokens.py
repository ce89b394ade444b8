"""BM25 tokenisation: joined names, underscores, accents, and what it does to ranking."""

from __future__ import annotations

from graphfuse.multihop import BM25Index, bm25_tokens


def test_joined_names_split_at_their_seams() -> None:
    assert bm25_tokens("WolfgangSchulz:") == bm25_tokens("Wolfgang Schulz") == ["wolfgang", "schulz"]
    assert bm25_tokens("ChaeSong-hwa") == ["chae", "song", "hwa"]
    # All-capitals words and lower-case words stay whole.
    assert bm25_tokens("NASA launched rockets") == ["nasa", "launched", "rockets"]


def test_underscore_separates_and_accents_fold() -> None:
    assert bm25_tokens("20260430_18:30") == ["20260430", "18", "30"]
    assert bm25_tokens("Ça va à Zürich") == ["ca", "va", "zurich"]
    assert bm25_tokens("the cat and a dog") == ["cat", "dog"]


def test_a_spaced_name_in_the_query_finds_the_joined_speaker() -> None:
    index = BM25Index(
        [
            ("chat-1", "WolfgangSchulz: see you at the concert"),
            ("chat-2", "AdamSmith: the plumber comes at five"),
            ("note", "20260430_18:30 dinner booked"),
        ]
    )
    assert index.search("What did Wolfgang Schulz say?", 1)[0][0] == "chat-1"
    assert index.search("dinner on 20260430", 1)[0][0] == "note"

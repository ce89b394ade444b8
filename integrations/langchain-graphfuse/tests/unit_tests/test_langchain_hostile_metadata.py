"""A loaded document's metadata that refers to itself, or expands past the bounds, is one error naming it."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_graphfuse import source_records

from graphfuse import InvalidInput
from graphfuse.indexing import MAX_METADATA_VALUES


def test_self_referencing_metadata_is_invalid_input_naming_the_document() -> None:
    meta: dict[str, Any] = {"source": "notes/a.md"}
    meta["self"] = meta  # (a RecursionError traceback before)
    docs = [
        Document(page_content="fine", metadata={"source": "ok.txt"}),
        Document(page_content="# A\n\nx", metadata=meta),
    ]
    with pytest.raises(InvalidInput, match=r"document 1 \('notes/a\.md'\): metadata\[.*'self'\] refers to itself"):
        source_records(docs)


def test_metadata_that_expands_past_the_bound_is_refused_at_once() -> None:
    shared: list[Any] = ["laugh"] * 10
    for _ in range(8):
        shared = [shared] * 10  # 10**9 values once written out
    doc = Document(page_content="text", metadata={"source": "b.txt", "laughs": shared})
    with pytest.raises(InvalidInput, match=r"document 0 \('b\.txt'\): metadata (holds|takes) more than"):
        source_records([doc])
    front = "---\n" + "\n".join(f"k{i}: {i}" for i in range(MAX_METADATA_VALUES + 1)) + "\n---\ntext\n"
    with pytest.raises(InvalidInput, match=r"notes/c\.md: front matter: metadata (holds|takes) more than"):
        source_records([Document(page_content=front, metadata={"source": "notes/c.md"})])

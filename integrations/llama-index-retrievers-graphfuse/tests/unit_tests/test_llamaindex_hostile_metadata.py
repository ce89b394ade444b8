"""A loaded document's metadata that refers to itself, or expands past the bounds, is one error naming it."""

from __future__ import annotations

from typing import Any

import pytest
from llama_index.core import Document
from llama_index.retrievers.graphfuse import source_records

from graphfuse import InvalidInput


def test_self_referencing_metadata_is_invalid_input_naming_the_document() -> None:
    meta: dict[str, Any] = {"file_path": "notes/a.md"}
    meta["self"] = meta  # (a RecursionError traceback before)
    docs = [Document(text="fine", doc_id="ok"), Document(text="# A\n\nx", metadata=meta, doc_id="a")]
    with pytest.raises(InvalidInput, match=r"document 1 \('a'\): metadata\[.*'self'\] refers to itself"):
        source_records(docs)


def test_metadata_that_expands_past_the_bound_is_refused_at_once() -> None:
    shared: list[Any] = ["laugh"] * 10
    for _ in range(8):
        shared = [shared] * 10  # 10**9 values once written out
    doc = Document(text="text", metadata={"laughs": shared}, doc_id="b")
    with pytest.raises(InvalidInput, match=r"document 0 \('b'\): metadata (holds|takes) more than"):
        source_records([doc])

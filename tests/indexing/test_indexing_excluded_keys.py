"""graphfuse.indexing.EXCLUDED_KEYS: the keys a host keeps out of prompts and embeddings, stored with a
record's document and chunks and read back by excluded_keys; every other graphfuse_ key stays reserved."""

from __future__ import annotations

import pytest

from graphfuse import InvalidInput, run_sync
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import EXCLUDED_KEYS, Indexer, SourceRecord, TokenChunker, excluded_keys
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore


def test_the_document_and_its_chunks_keep_the_excluded_keys() -> None:
    hidden = {"llm": ["secret"], "embed": ["secret", "team"]}
    text = " ".join(f"Sentence {i} about the routing project." for i in range(60))
    record = SourceRecord("doc", text, metadata={"team": "routing", "secret": "x", EXCLUDED_KEYS: hidden})
    graph = InMemoryGraphStore()
    Indexer(graph, LocalVectorStore(), HashingEmbedder(dimension=32), chunker=TokenChunker(max_tokens=64)).index(
        [record]
    )
    stored = run_sync(graph.get_documents(["doc", "doc#0", "doc#1"]))
    assert len(stored) == 3
    for document in stored.values():
        assert excluded_keys(document.metadata) == (("secret",), ("secret", "team"))


def test_bad_shapes_and_other_reserved_keys_are_refused() -> None:
    assert excluded_keys({}) == ((), ())
    assert excluded_keys({EXCLUDED_KEYS: {"embed": ["a", "a", "b"]}}) == ((), ("a", "b"))
    for bad in (["secret"], {"llm": "secret"}, {"llm": [1]}, {"prompt": ["a"]}):
        with pytest.raises(InvalidInput, match=f"record 'a': '{EXCLUDED_KEYS}'"):
            SourceRecord("a", "text", metadata={EXCLUDED_KEYS: bad})
    with pytest.raises(InvalidInput, match="metadata key 'graphfuse_hidden' is reserved"):
        SourceRecord("a", "text", metadata={"graphfuse_hidden": ["secret"]})
    with pytest.raises(InvalidInput, match="document 'd': 'graphfuse_excluded_keys'"):
        excluded_keys({EXCLUDED_KEYS: "secret"}, "document 'd'")

"""Host conventions: metadata LlamaIndex keeps out of the LLM or the embedding stays out after GraphFuse
(the incoming nodes' excluded keys, merged with GraphFuse's own; the excluded keys of the documents
indexed through source_records on the nodes GraphFuse builds from them); the nodes passed in are never
changed; bad node input."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from llama_index.core import Document
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode
from llama_index.postprocessor.graphfuse import (
    AccessPostprocessor,
    GraphExpansionPostprocessor,
    TemporalDecayPostprocessor,
    WeightedFusionPostprocessor,
)
from llama_index.retrievers.graphfuse import source_records
from llama_index.retrievers.graphfuse.nodes import SIGNALS_KEY

from graphfuse import InvalidInput
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import Indexer
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def reader_node() -> NodeWithScore:
    node = TextNode(
        id_="a",
        text="alpha",
        metadata={"file_path": "/data/a.txt", "file_name": "a.txt", "title": "Alpha", "created_at": NOW.isoformat()},
        excluded_llm_metadata_keys=["file_path", "file_name"],
        excluded_embed_metadata_keys=["file_name"],
    )
    return NodeWithScore(node=node, score=0.7)


def test_incoming_excluded_keys_are_kept_and_merged_with_graphfuse_own() -> None:
    given = reader_node()
    before = given.node.model_dump()
    out = [given]
    for post in (TemporalDecayPostprocessor(clock=lambda: NOW), AccessPostprocessor(), WeightedFusionPostprocessor()):
        out = post.postprocess_nodes(out)
    node = out[0].node
    assert node.excluded_llm_metadata_keys == ["file_path", "file_name", SIGNALS_KEY]
    assert node.excluded_embed_metadata_keys == ["file_name", SIGNALS_KEY]
    prompt = node.get_content(MetadataMode.LLM)
    assert "/data/a.txt" not in prompt
    assert SIGNALS_KEY not in prompt
    assert "Alpha" in prompt
    assert given.node.model_dump() == before  # the caller's node is unchanged


def test_nodes_built_from_stored_documents_keep_the_documents_excluded_keys_out() -> None:
    hidden = ["file_name", "file_size"]
    docs = [
        Document(text="alpha", id_="a", metadata={"links": ["b"]}),
        Document(
            text="beta",
            id_="b",
            metadata={"file_name": "b.txt", "file_size": 12, "title": "Beta"},
            excluded_llm_metadata_keys=hidden,
            excluded_embed_metadata_keys=hidden,
        ),
    ]
    store = InMemoryGraphStore()
    Indexer(store, LocalVectorStore(), HashingEmbedder(dimension=64)).index(source_records(docs))
    out = GraphExpansionPostprocessor(store).postprocess_nodes([reader_node()])
    new = out[1].node
    assert new.node_id == "b"
    assert new.excluded_llm_metadata_keys == [*hidden, SIGNALS_KEY]
    assert new.excluded_embed_metadata_keys == [*hidden, SIGNALS_KEY]
    assert "b.txt" not in new.get_content(MetadataMode.LLM)
    assert "Beta" in new.get_content(MetadataMode.LLM)


def test_bad_node_input() -> None:
    empty = NodeWithScore(node=TextNode(id_="e", text=""), score=0.5)  # a node without text is text ""
    assert AccessPostprocessor().postprocess_nodes([empty])[0].node.metadata[SIGNALS_KEY]["access"] == 0.5
    assert AccessPostprocessor().postprocess_nodes([]) == []
    with pytest.raises(InvalidInput, match="node 'a' has score 2"):
        AccessPostprocessor().postprocess_nodes([NodeWithScore(node=TextNode(id_="a", text="x"), score=2.0)])
    with pytest.raises(InvalidInput, match="node 'a' metadata 'created_at'"):
        AccessPostprocessor().postprocess_nodes(
            [NodeWithScore(node=TextNode(id_="a", text="x", metadata={"created_at": 1e20}))]
        )
    twice = [
        NodeWithScore(node=TextNode(id_="c1", text="x", metadata={SIGNALS_KEY: {"temporal": 0.2}}), score=0.1),
        NodeWithScore(node=TextNode(id_="c1", text="x", metadata={SIGNALS_KEY: {"temporal": 0.9}}), score=0.1),
    ]
    out = WeightedFusionPostprocessor(weights={"temporal": 1.0}).postprocess_nodes(twice)
    assert [n.score for n in out] == [0.9, 0.9]  # one record: each signal's largest value

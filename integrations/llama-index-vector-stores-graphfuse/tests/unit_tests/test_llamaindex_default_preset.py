"""The vector store retrieves with the core's default preset, as the CLI and the server do."""

from __future__ import annotations

from llama_index.vector_stores.graphfuse import GraphFuseVectorStore

from graphfuse import presets


def test_the_default_preset_is_the_cores() -> None:
    assert GraphFuseVectorStore(path=None).preset == presets.DEFAULT_PRESET == "multihop"

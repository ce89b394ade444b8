"""The vector store retrieves with the core's default preset, as the CLI and the server do."""

from __future__ import annotations

import inspect

from langchain_graphfuse import DEFAULT_PRESET, GraphFuseVectorStore

from graphfuse import presets


def test_the_default_preset_is_the_cores() -> None:
    assert DEFAULT_PRESET == presets.DEFAULT_PRESET == "multihop"
    for door in (GraphFuseVectorStore.from_documents, GraphFuseVectorStore.from_texts, GraphFuseVectorStore.from_path):
        assert inspect.signature(door).parameters["preset"].default in (DEFAULT_PRESET, None)

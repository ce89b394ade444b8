"""The CLI selects the Qdrant plugin by name, with its settings from the environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _graphfuse(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "graphfuse.cli", *args], capture_output=True, text=True, env=env, timeout=300
    )


def test_index_and_query_through_qdrant_embedded_on_disk(tmp_path: Path) -> None:
    corpus = tmp_path / "docs.jsonl"
    rows = [
        {"id": "rivers", "title": "Rivers", "text": "The Seine is a river that flows through Paris."},
        {"id": "bread", "title": "Bread", "text": "Baguettes are baked from wheat flour and water."},
        {"id": "paris", "title": "Paris", "text": "Paris is the capital of France.", "links": ["rivers"]},
    ]
    corpus.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    qdrant_dir = tmp_path / "qdrant"
    env = {**os.environ, "GRAPHFUSE_QDRANT_PATH": str(qdrant_dir), "GRAPHFUSE_LOAD_PLUGINS": "qdrant"}
    store = str(tmp_path / "store")

    indexed = _graphfuse(
        "index", str(corpus), "--store", store, "--vector-store", "qdrant", "--embedder", "hashing", env=env
    )
    assert indexed.returncode == 0, indexed.stderr
    assert qdrant_dir.is_dir()  # the vectors went to Qdrant, not to the embedded store

    # A second process reads the same Qdrant directory back (the choice is remembered by the store).
    queried = _graphfuse("query", "which river flows through Paris", "--store", store, "--json", env=env)
    assert queried.returncode == 0, queried.stderr
    results = json.loads(queried.stdout)
    assert results[0]["id"] == "rivers"
    assert "semantic" in results[0]["signals"]


def test_unknown_vector_store_name_is_a_clean_error(tmp_path: Path) -> None:
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text(json.dumps({"id": "a", "text": "alpha"}) + "\n", encoding="utf-8")
    env = {**os.environ, "GRAPHFUSE_LOAD_PLUGINS": "qdrant"}
    out = _graphfuse("index", str(corpus), "--store", str(tmp_path / "s"), "--vector-store", "qdrantx", env=env)
    assert out.returncode == 1
    assert "qdrantx" in out.stderr + out.stdout
    assert "Traceback" not in out.stderr

"""examples/langchain_vector_store.py: this repository's docs folder through the LangChain front door."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
EXAMPLE = ROOT / "examples" / "langchain_vector_store.py"


def test_the_docs_folder_answers_through_the_langchain_retriever(tmp_path: Path) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRAPHFUSE_EXAMPLE_EMBEDDER": "hashing"}  # fast; MiniLM by default
    store = tmp_path / "store"
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--store", str(store)], capture_output=True, text=True, timeout=300, env=env
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("embedder: HashingEmbedder\nindexed ")
    blocks = out.split("\n\n")
    serve = next(b for b in blocks if b.startswith("How do I serve a store over HTTP"))
    assert serve.splitlines()[1].split()[0] == "server.md"
    keys = next(b for b in blocks if b.startswith("Which metadata keys does LlamaIndex"))
    assert "integrations/llama-index.md" in keys
    assert "reopened with from_path (multihop): same results: True" in out
    assert (store / "manifest.json").is_file()

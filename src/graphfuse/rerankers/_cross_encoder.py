"""CrossEncoderReranker: a sentence-transformers cross-encoder loaded from a local directory."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._core._errors import InvalidInput
from .._providers._local_models import load_sentence_transformers
from ..embedders import check_texts

__all__ = ["CrossEncoderReranker"]


class CrossEncoderReranker:
    """Scores (query, document) pairs jointly with a cross-encoder, as ``sigmoid(logit)``.

    ``model_path`` is a local directory you provide (for example a saved
    ``cross-encoder/ms-marco-MiniLM-L-6-v2``); nothing is downloaded. A path that does not
    exist raises ``InvalidInput`` at construction. The model is loaded on first use (needs
    the ``graphfuse[local]`` extra) and runs in a worker thread.
    """

    def __init__(self, model_path: str | os.PathLike[str], *, batch_size: int = 32, device: str = "cpu") -> None:
        path = os.fspath(model_path)
        if not os.path.isdir(path):
            raise InvalidInput(
                f"cross-encoder model_path {path!r} is not a directory; give the local directory of a "
                "saved sentence-transformers CrossEncoder (GraphFuse never downloads models)"
            )
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInput(f"batch_size must be a positive integer, got {batch_size!r}")
        self._path = path
        self._batch_size = batch_size
        self._device = device
        self._model: Any = None
        self._lock = threading.Lock()

    def _predict(self, pairs: list[tuple[str, str]]) -> list[float]:
        with self._lock:
            if self._model is None:
                st = load_sentence_transformers()
                try:
                    self._model = st.CrossEncoder(self._path, device=self._device, local_files_only=True)
                except Exception as exc:
                    raise InvalidInput(f"cannot load a cross-encoder from {self._path!r}: {exc}") from exc
            # Raw logits, then our own sigmoid: the model's configured activation may differ.
            logits = self._model.predict(
                pairs,
                batch_size=self._batch_size,
                activation_fn=_identity,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        values = np.asarray(logits, dtype=np.float64).reshape(len(pairs), -1)[:, -1]
        return [float(x) for x in 1.0 / (1.0 + np.exp(-values))]

    async def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        """One score in [0, 1] per document, input order."""
        if not isinstance(query, str):
            raise InvalidInput(f"query must be a string, got {type(query).__name__}")
        texts = check_texts(documents, "documents")
        if not texts:
            return []
        return await asyncio.to_thread(self._predict, [(query, t) for t in texts])

    def __repr__(self) -> str:
        return f"CrossEncoderReranker({self._path!r})"


def _identity(x: Any) -> Any:
    return x

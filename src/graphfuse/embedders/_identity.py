"""A stable name for an embedder: what its vectors are comparable with."""

from __future__ import annotations

from .._core._protocols import Embedder

__all__ = ["embedder_identity"]


def embedder_identity(embedder: Embedder) -> str:
    """``module.Class:model:dimension``; vectors are comparable only under the same identity.

    The model is the embedder's ``model_id`` (or ``model`` / ``model_name``) attribute when it
    has a string one, so two instances of one class with different models differ.
    """
    cls = type(embedder)
    model = ""
    for attr in ("model_id", "model", "model_name"):
        value = getattr(embedder, attr, None)
        if isinstance(value, str):
            model = value
            break
    return f"{cls.__module__}.{cls.__qualname__}:{model}:{embedder.dimension}"

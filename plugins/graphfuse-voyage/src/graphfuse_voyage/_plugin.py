"""GraphFuse plugin hooks: the embedder ``voyage`` and the reranker ``voyage``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphfuse.plugins import hookimpl
from graphfuse.plugins.hookspecs import Register

if TYPE_CHECKING:
    from ._embedder import VoyageEmbedder
    from ._reranker import VoyageReranker

__all__ = ["register_embedders", "register_rerankers"]


def _embedder(**options: Any) -> VoyageEmbedder:
    from ._embedder import VoyageEmbedder

    return VoyageEmbedder(**options)


def _reranker(**options: Any) -> VoyageReranker:
    from ._reranker import VoyageReranker

    return VoyageReranker(**options)


@hookimpl
def register_embedders(register: Register) -> None:
    register("voyage", _embedder)


@hookimpl
def register_rerankers(register: Register) -> None:
    register("voyage", _reranker)

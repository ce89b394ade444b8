"""GraphFuse plugin hooks: the embedder ``cohere`` and the reranker ``cohere``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphfuse.plugins import hookimpl
from graphfuse.plugins.hookspecs import Register

if TYPE_CHECKING:
    from ._embedder import CohereEmbedder
    from ._reranker import CohereReranker

__all__ = ["register_embedders", "register_rerankers"]


def _embedder(**options: Any) -> CohereEmbedder:
    from ._embedder import CohereEmbedder

    return CohereEmbedder(**options)


def _reranker(**options: Any) -> CohereReranker:
    from ._reranker import CohereReranker

    return CohereReranker(**options)


@hookimpl
def register_embedders(register: Register) -> None:
    register("cohere", _embedder)


@hookimpl
def register_rerankers(register: Register) -> None:
    register("cohere", _reranker)

"""GraphFuse plugin hooks: the embedder ``openai``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphfuse.plugins import hookimpl
from graphfuse.plugins.hookspecs import Register

if TYPE_CHECKING:
    from ._embedder import OpenAIEmbedder

__all__ = ["register_embedders"]


def _embedder(**options: Any) -> OpenAIEmbedder:
    from ._embedder import OpenAIEmbedder

    return OpenAIEmbedder(**options)


@hookimpl
def register_embedders(register: Register) -> None:
    register("openai", _embedder)

"""GraphFuse plugin hooks: the embedder ``openai`` and the generator ``openai``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphfuse.plugins import hookimpl
from graphfuse.plugins.hookspecs import Register

if TYPE_CHECKING:
    from ._embedder import OpenAIEmbedder
    from ._generator import OpenAIGenerator

__all__ = ["register_embedders", "register_generators"]


def _embedder(**options: Any) -> OpenAIEmbedder:
    from ._embedder import OpenAIEmbedder

    return OpenAIEmbedder(**options)


@hookimpl
def register_embedders(register: Register) -> None:
    register("openai", _embedder)


def _generator(**options: Any) -> OpenAIGenerator:
    from ._generator import OpenAIGenerator

    return OpenAIGenerator(**options)


@hookimpl
def register_generators(register: Register) -> None:
    register("openai", _generator)

"""Options that several commands take, declared once: the metadata filter, what a result list is
made of, the chunk size, and the model of the LLM-built graph."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Annotated, Any

import typer

from .._core._errors import InvalidInput
from .._retrieval._passages import DEFAULT_MAX_DOCUMENT_TOKENS
from ..defaults import CHUNK_OVERLAP, MAX_PER_DOCUMENT

__all__ = [
    "FilterJSON",
    "Granularity",
    "LlmGraphBaseUrl",
    "LlmGraphModel",
    "MaxPerDocument",
    "MaxTokens",
    "Overlap",
    "byte_size",
    "llm_graph_options",
]

FilterJSON = Annotated[
    str | None, typer.Option("--filter", help='Metadata filter as JSON, e.g. \'{"lang": "en"}\'.', show_default=False)
]
"""``--filter``: metadata conditions as a JSON object (read by ``parse_filter``)."""

Granularity = Annotated[
    str | None,
    typer.Option(
        "--granularity",
        help=(
            f"Results as 'passage's (default) or whole 'document's (each cut to {DEFAULT_MAX_DOCUMENT_TOKENS} tokens)."
        ),
        show_default=False,
    ),
]
"""``--granularity``: passages of at most the chunk size, or whole documents."""

MaxPerDocument = Annotated[
    int | None,
    typer.Option(
        "--max-per-document",
        min=1,
        help=f"Passages of one document, at most (default {MAX_PER_DOCUMENT}).",
        show_default=False,
    ),
]
"""``--max-per-document``: how many passages of one document a result list keeps."""

MaxTokens = Annotated[
    int,
    typer.Option(
        "--max-tokens",
        min=1,
        help="Tokens of a passage, at most: longer documents are cut into chunks of this many (changing it "
        "re-chunks every document on the next index run).",
    ),
]
"""``--max-tokens``: the chunk size of ``graphfuse index`` and ``graphfuse eval`` (default
:data:`~graphfuse.defaults.CHUNK_TOKENS`, the one both use)."""

Overlap = Annotated[
    int | None,
    typer.Option(
        "--overlap",
        min=0,
        help=f"Tokens consecutive chunks share (default {CHUNK_OVERLAP}, or --max-tokens - 1 when smaller).",
        show_default=False,
    ),
]
"""``--overlap``: the tokens consecutive chunks share (:meth:`~graphfuse.indexing.TokenChunker.sized`)."""

LlmGraphModel = Annotated[
    str | None,
    typer.Option(
        "--llm",
        help="The model of --entity-extractor llm, NAME:MODEL (default openai:gpt-4o-mini).",
        show_default=False,
    ),
]
"""``--llm``: the model the ``llm`` entity extractor asks (``graphfuse index`` and ``eval``)."""

LlmGraphBaseUrl = Annotated[
    str | None,
    typer.Option(
        "--llm-base-url",
        help="API root of an OpenAI-compatible server (llama.cpp, Ollama, vLLM), e.g. http://127.0.0.1:8080/v1.",
        show_default=False,
    ),
]
"""``--llm-base-url``: where the ``llm`` entity extractor's model is served."""


def llm_graph_options(entity_extractor: Sequence[str] | None, llm: str | None, base_url: str | None) -> dict[str, Any]:
    """The ``llm`` entity extractor's options from ``--llm`` and ``--llm-base-url``; either one
    without ``--entity-extractor llm`` is an error (it would set up nothing)."""
    uses_llm = any(name.strip().partition(":")[0] == "llm" for name in entity_extractor or ())
    if (llm is not None or base_url is not None) and not uses_llm:
        raise InvalidInput("--llm and --llm-base-url set up the LLM graph: add --entity-extractor llm")
    options: dict[str, Any] = {}
    if llm is not None:
        options["model"] = llm
    if base_url is not None:
        options["base_url"] = base_url
    return options


_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([KMG]i?B?|B)?\s*", re.IGNORECASE)
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KIB": 1 << 10, "KB": 10**3, "M": 1 << 20, "MIB": 1 << 20, "MB": 10**6}
_UNITS |= {"G": 1 << 30, "GIB": 1 << 30, "GB": 10**9}


def byte_size(text: str, what: str = "size") -> int:
    """A size written as ``text``: bytes (``5000000``), or with a unit as GNU tools read them
    (``K``, ``M``, ``G`` and ``KiB``, ``MiB``, ``GiB`` are powers of 1024; ``KB``, ``MB``, ``GB``
    of 1000). :class:`~graphfuse.InvalidInput` naming ``what`` for anything else, or less than 1."""
    match = _SIZE.fullmatch(text)
    unit = (match.group(2) or "").upper() if match else ""
    if match is None or unit not in _UNITS:
        raise InvalidInput(
            f"{what}: {text!r} is not a size (bytes, or a number with K, M, G, KiB, MiB, GiB, KB, MB, GB)"
        )
    size = int(float(match.group(1)) * _UNITS[unit])
    if size < 1:
        raise InvalidInput(f"{what}: {text!r} must be at least 1 byte")
    return size

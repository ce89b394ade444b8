"""Options that several commands take, declared once: the metadata filter and what a result list is made of."""

from __future__ import annotations

from typing import Annotated

import typer

from .._passages import DEFAULT_MAX_DOCUMENT_TOKENS, DEFAULT_MAX_PER_DOCUMENT

__all__ = ["FilterJSON", "Granularity", "MaxPerDocument"]

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
        help=f"Passages of one document, at most (default {DEFAULT_MAX_PER_DOCUMENT}).",
        show_default=False,
    ),
]
"""``--max-per-document``: how many passages of one document a result list keeps."""

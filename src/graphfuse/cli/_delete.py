"""``graphfuse delete``: remove documents (with their chunks, vectors and relations) from a store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import typer

from .._core._sync import run_sync
from ..indexing import Indexer
from ..stores import DEFAULT_STORE, aopen_store
from ._errors import reports_errors

__all__ = ["delete_documents", "register"]


async def delete_documents(store_dir: str, ids: Sequence[str], *, missing_ok: bool) -> int:
    """Delete ``ids`` from the store in ``store_dir``; returns how many existed.

    Unless ``missing_ok``, an id that is not an indexed document raises
    :class:`~graphfuse.NotFound` naming it, and nothing is deleted.
    """
    store = await aopen_store(store_dir, create=False)
    try:
        indexer = Indexer(store.graph, store.vectors, store.embedder)
        deleted = await indexer.adelete(list(ids), missing_ok=missing_ok)
        await store.arefresh_corpus_indexes()
        return deleted
    finally:
        await store.aclose()


@reports_errors
def delete(
    ids: Annotated[list[str], typer.Argument(help="Ids of the documents to delete.", show_default=False)],
    store: Annotated[str, typer.Option("--store", help="Store directory.")] = DEFAULT_STORE,
    missing_ok: Annotated[
        bool, typer.Option("--missing-ok", help="Skip ids that are not in the store instead of failing.")
    ] = False,
) -> None:
    """Delete documents by id, with their chunks, vectors and relations.

    An id that is not an indexed document fails the command (nothing is deleted) unless
    --missing-ok is given.
    """
    deleted = run_sync(delete_documents(store, ids, missing_ok=missing_ok))
    typer.echo(f"deleted {deleted} documents from {store}")


def register(app: typer.Typer) -> None:
    app.command("delete")(delete)

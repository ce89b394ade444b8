"""Documents loaded once per run: a graph store's reads shared by the stages of one pipeline run.

The run context's ``values`` (:class:`graphfuse.RunContext`) hold, under :data:`RUN_DOCUMENTS`,
the graph store and the documents read from it in this run, so a later stage or the passage
selection asks the store only for the ids no earlier one loaded. A run sees each document as
first loaded in it, as one read of all of them would.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._core._filters import MetadataFilter
from .._core._protocols import GraphStore
from .._core._types import Document

__all__ = ["RUN_DOCUMENTS", "load_documents"]

RUN_DOCUMENTS = "graphfuse.documents"
"""Run-context key of ``(graph store, {id: Document})``: the documents read from that store in the run."""


def _table(context: Any, graph_store: GraphStore) -> dict[str, Document] | None:
    values = getattr(context, "values", None)
    if not isinstance(values, dict):
        return None
    found = values.get(RUN_DOCUMENTS)
    if found is None:
        table: dict[str, Document] = {}
        values[RUN_DOCUMENTS] = (graph_store, table)
        return table
    if isinstance(found, tuple) and len(found) == 2 and found[0] is graph_store and isinstance(found[1], dict):
        return found[1]
    return None  # another store's documents: this one is read as without a context


async def load_documents(
    graph_store: GraphStore, ids: Sequence[str], context: Any, *, filter: MetadataFilter | None = None
) -> dict[str, Document]:
    """``graph_store.get_documents(ids, filter=filter)``, from the run's documents where ``context`` holds them.

    Only the ids not loaded earlier in the run are read from the store (none: no read); what
    it returns joins the run's documents. A document found in the run is checked against
    ``filter`` as the hydrate stage checks a loaded candidate. Without a run context (or one
    holding another store's documents) it is the store's read.
    """
    table = _table(context, graph_store)
    if table is None:
        return await graph_store.get_documents(ids, filter=filter) if ids else {}
    missing = [i for i in ids if i not in table]
    if missing:
        table.update(await graph_store.get_documents(missing, filter=filter))
    out: dict[str, Document] = {}
    for i in ids:
        doc = table.get(i)
        if doc is not None and (filter is None or filter.matches(doc.metadata)):
            out[i] = doc
    return out

"""Running GraphFuse stages over LangChain documents, and GraphFuse runnables' calls."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar

from langchain_core.documents import Document
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import (
    ensure_config,
    get_async_callback_manager_for_config,
    get_callback_manager_for_config,
)

from graphfuse import GraphStore, MetadataFilter, Stage
from graphfuse.hosts import host_query
from graphfuse.records import check_known, run_stages

from ._documents import DocumentMapping, documents_from_hits, read_documents

__all__ = ["Unknown", "ainvoke_leaf", "invoke_leaf", "run_stages_on_documents"]

Unknown = Literal["keep", "error"]
R = TypeVar("R")

_MISSING = (
    "none came with the documents: use GraphFuseRetriever (its documents carry the query), wrap another "
    "retriever with with_query(retriever), or invoke with {'query': ..., 'documents': [...]}"
)


def invoke_leaf(runnable: Runnable[Any, Any], func: Callable[[Any], R], input: Any, config: RunnableConfig | None) -> R:
    """Run ``func(input)`` as one LangChain run of ``runnable`` that starts no child runs.

    The callbacks of any run (``on_chain_start`` with the run's name and id, then ``on_chain_end``
    or ``on_chain_error``), through LangChain's public callback-manager functions; for runnables
    whose work cannot reach LangChain (in-memory stages, fusion).
    """
    config = ensure_config(config)
    run_manager = get_callback_manager_for_config(config).on_chain_start(
        None, input, name=config.get("run_name") or runnable.get_name(), run_id=config.pop("run_id", None)
    )
    try:
        output = func(input)
    except BaseException as exc:
        run_manager.on_chain_error(exc)
        raise
    run_manager.on_chain_end(output)
    return output


async def ainvoke_leaf(
    runnable: Runnable[Any, Any], func: Callable[[Any], Awaitable[R]], input: Any, config: RunnableConfig | None
) -> R:
    """Async form of :func:`invoke_leaf` (awaits ``func`` on the caller's task)."""
    config = ensure_config(config)
    run_manager = await get_async_callback_manager_for_config(config).on_chain_start(
        None, input, name=config.get("run_name") or runnable.get_name(), run_id=config.pop("run_id", None)
    )
    try:
        output = await func(input)
    except BaseException as exc:
        await run_manager.on_chain_error(exc)
        raise
    await run_manager.on_chain_end(output)
    return output


async def run_stages_on_documents(
    stages: Sequence[Stage],
    docs: Sequence[Document],
    *,
    query: str | None,
    needs_query: bool,
    filter: MetadataFilter | None,
    mapping: DocumentMapping,
    what: str,
    graph_store: GraphStore | None = None,
    unknown: Unknown = "keep",
    options: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[Document]:
    """Read the documents as records, run the core stages, build the documents back (``[]`` for none).

    A failing stage raises :class:`~graphfuse.StageFailed` (as in a pipeline); bad document data
    raises :class:`~graphfuse.InvalidInput` naming it; with ``unknown="error"``, documents the graph
    store does not hold raise :class:`~graphfuse.NotFound`."""
    if not docs:
        return []
    stage_query = host_query(
        query, needs_query=needs_query, what=what, missing=_MISSING, filter=filter, options=options
    )
    batch = read_documents(docs, mapping)
    if unknown == "error" and graph_store is not None:
        await check_known(graph_store, batch.ids, what)
    hits = await run_stages(stages, stage_query, batch)
    return documents_from_hits(hits, query=query, filter=filter, mapping=mapping)

"""Running GraphFuse stages over LangChain documents, outside a full pipeline run."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar, cast

from langchain_core.documents import Document
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import (
    ensure_config,
    get_async_callback_manager_for_config,
    get_callback_manager_for_config,
)

from graphfuse import (
    Candidate,
    GraphStore,
    InvalidInput,
    MetadataFilter,
    Pipeline,
    Query,
    SignalStage,
    run_signal_stage,
)
from graphfuse import run_stages as run_stages_core

from ._documents import (
    DocumentMapping,
    Owned,
    owned_documents,
    owned_records,
    read_records,
    record_documents,
    to_candidates,
    to_documents,
)

__all__ = [
    "NO_QUERY",
    "Unknown",
    "ainvoke_leaf",
    "check_known",
    "invoke_leaf",
    "presigned",
    "run_signal_stage_on_documents",
    "run_stages",
    "run_stages_on_documents",
]

Unknown = Literal["keep", "error"]
R = TypeVar("R")

# A stage that does not read the query text still receives a Query; this stands in for it.
NO_QUERY = "(no query)"


def presigned(fn: Callable[..., R]) -> Callable[..., R]:
    """``fn`` (a bound method) with its signature computed once, for ``Runnable._call_with_config``.

    LangChain asks ``inspect.signature`` on every call whether the function takes
    ``run_manager``/``config``; for a bound method that costs as much as a small stage run. The
    wrapper carries the signature, so the question is answered without inspecting again.
    """
    sig = inspect.signature(fn)
    wrapper: Callable[..., R]
    if inspect.iscoroutinefunction(fn):

        async def acall(*args: Any, **kwargs: Any) -> Any:
            return await fn(*args, **kwargs)

        wrapper = cast("Callable[..., R]", acall)
    else:

        def call(*args: Any, **kwargs: Any) -> R:
            return fn(*args, **kwargs)

        wrapper = call
    wrapper.__signature__ = sig  # type: ignore[attr-defined]
    return wrapper


def invoke_leaf(runnable: Runnable[Any, Any], func: Callable[[Any], R], input: Any, config: RunnableConfig | None) -> R:
    """``runnable._call_with_config(func, input, config)`` for a leaf run: one that starts no child runs.

    The same callbacks (``on_chain_start`` with the run's name and id, then ``on_chain_end`` or
    ``on_chain_error``), so callbacks, traces and ``astream_events`` see the run as before;
    without what only a run with children needs (a child callback manager, the child config
    set in a fresh context, inspecting ``func``'s signature), which is a third of the cost of a
    small runnable. Only for runnables whose work cannot reach LangChain (in-memory stages,
    fusion).
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
    """Async form of :func:`invoke_leaf` (awaits ``func`` on the caller's task, no new task)."""
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


async def run_stages(pipeline: Pipeline, query: Query, candidates: list[Candidate]) -> list[Candidate]:
    """Run the pipeline's stages in order, with its logging, metrics, tracing and StageFailed wrapping."""
    return await run_stages_core(pipeline.stages, query, candidates)


async def check_known(graph_store: GraphStore, ids: Sequence[str], *, what: str) -> None:
    """Raise :class:`~graphfuse.InvalidInput` naming the ids the graph store does not hold."""
    if not ids:
        return
    found = await graph_store.get_documents(list(ids))
    missing = [i for i in ids if i not in found]
    if missing:
        shown = ", ".join(map(repr, missing[:5])) + (" ..." if len(missing) > 5 else "")
        raise InvalidInput(
            f"{what}: {len(missing)} document(s) are not in the graph store ({shown}); "
            "pass unknown='keep' to keep them without graph signals, or set id_key to the metadata key "
            "holding their graph id"
        )


def require_query(query: str | None, *, needs_query: bool, what: str) -> str:
    """The query text to run with; refuses a missing query for a stage that reads it."""
    if query is not None:
        return query
    if needs_query:
        raise InvalidInput(
            f"{what} needs the query, but none came with the documents: use GraphFuseRetriever (its "
            "documents carry the query), wrap another retriever with with_query(retriever), or invoke with "
            "{'query': ..., 'documents': [...]}"
        )
    return NO_QUERY


_QUERIES: dict[str, Query] = {}  # Query(text) for texts seen without a filter (bounded)


def _query(text: str, filter: MetadataFilter | None) -> Query:
    """``Query(text, filter)``; without a filter, the one built before for that text (a Query is immutable)."""
    if filter is not None:
        return Query(text, filter)
    built = _QUERIES.get(text)
    if built is None:
        built = Query(text)
        if len(_QUERIES) >= 1024:
            _QUERIES.clear()
        _QUERIES[text] = built
    return built


async def run_stages_on_documents(
    pipeline: Pipeline,
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
    """Convert, run the stages, convert back. An empty list gives ``[]`` without running anything."""
    if not docs:
        return []
    text = require_query(query, needs_query=needs_query, what=what)
    candidates, originals = to_candidates(docs, mapping)
    if unknown == "error" and graph_store is not None:
        await check_known(graph_store, [c.id for c in candidates], what=what)
    out = await run_stages(pipeline, Query(text, filter, options or {}), candidates)
    return to_documents(out, originals, query=query, filter=filter, mapping=mapping, inputs=candidates)


async def run_signal_stage_on_documents(
    stage: SignalStage,
    docs: Sequence[Document],
    *,
    query: str | None,
    needs_query: bool,
    filter: MetadataFilter | None,
    mapping: DocumentMapping,
    what: str,
    graph_store: GraphStore | None = None,
    unknown: Unknown = "keep",
    owned: Owned | None = None,
) -> list[Document]:
    """:func:`run_stages_on_documents` for one :class:`graphfuse.SignalStage`, without candidates:
    the values it reads come from the documents (:func:`graphfuse.run_signal_stage`: the same
    logging, metrics, tracing and errors), and the same documents come out.

    ``owned`` (:func:`owned_input`): ``docs`` are GraphFuse's own documents, unchanged since the
    runnable that returned them; they are updated in place instead of copied."""
    if not docs:
        return []
    text = require_query(query, needs_query=needs_query, what=what)
    records = owned_records(owned, mapping, stage.signal_input) if owned is not None else None
    if records is None:
        owned = None
        records = read_records(docs, mapping, stage.signal_input)
    if unknown == "error" and graph_store is not None:
        await check_known(graph_store, records.ids, what=what)
    values = await run_signal_stage(stage, _query(text, filter), records.ids, records.values)
    name = stage.signal
    for signals, value in zip(records.signals, values, strict=True):
        signals[name] = value
    if owned is not None:
        return owned_documents(owned, records, query=query, filter=filter)
    return record_documents(records, query=query, filter=filter, mapping=mapping)

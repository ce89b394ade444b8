"""Neo4jGraphStore: GraphFuse's GraphStore protocol on the official neo4j driver (async)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeVar

import neo4j
import neo4j.exceptions as neo4j_errors

from graphfuse import (
    AuthenticationFailed,
    ConnectionFailed,
    Document,
    GraphFuseError,
    InvalidInput,
    MetadataFilter,
    NotFound,
    RelatedDocument,
    Relation,
)
from graphfuse.retry import RetryPolicy, call_with_retry

from . import _cypher as cypher
from ._pagerank import pagerank_from_edges

__all__ = ["Neo4jGraphStore", "translate_error"]

T = TypeVar("T")

_DRIVER_ERRORS = (neo4j_errors.Neo4jError, neo4j_errors.DriverError, OSError)


def translate_error(exc: BaseException, what: str) -> GraphFuseError:
    """Map a neo4j driver exception to the GraphFuse hierarchy."""
    if isinstance(exc, GraphFuseError):
        return exc
    detail = f"neo4j {what}: {type(exc).__name__}: {exc}"
    if isinstance(exc, (neo4j_errors.AuthError, neo4j_errors.Forbidden)):
        return AuthenticationFailed(detail)
    if isinstance(exc, (neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired, neo4j_errors.TransientError)):
        return ConnectionFailed(detail)
    if isinstance(exc, neo4j_errors.ClientError):
        # A ClientError is a query the server refused: with validated input, a constraint or schema clash.
        return InvalidInput(detail)
    return ConnectionFailed(detail)


class Neo4jGraphStore:
    """Documents as nodes and typed relations as relationships in Neo4j.

    Args:
        uri: the server, e.g. ``neo4j://host:7687`` or ``bolt://host:7687``.
        user, password: basic authentication (omit both for a server without auth).
        database: the database name (``None``: the server's default database).
        label: the node label of GraphFuse documents.
        max_connection_pool_size, connection_timeout: passed to the driver.
        batch_size: rows per ``UNWIND`` statement (all batches of one call share a transaction).
        use_gds: refresh the stored PageRank with the Graph Data Science library; ``None``
            detects it and otherwise computes it with scipy from the streamed relations.
        create_schema: create the unique-id constraint on first use (needs schema rights).
        retry: retries on top of the driver's own (its managed transactions already retry
            transient errors); default ``RetryPolicy(attempts=1)``, none. Every call stops at
            the caller's :func:`graphfuse.deadline` either way.

    The driver is created once, here (it connects lazily), and closed by :meth:`close`.
    Unreachable servers raise :class:`~graphfuse.ConnectionFailed`, refused credentials
    :class:`~graphfuse.AuthenticationFailed`. The storage layout is described in
    ``graphfuse_neo4j._cypher``.
    """

    def __init__(
        self,
        uri: str,
        *,
        user: str | None = None,
        password: str | None = None,
        database: str | None = None,
        label: str = "GraphFuseDocument",
        max_connection_pool_size: int = 50,
        connection_timeout: float = 30.0,
        batch_size: int = 1000,
        use_gds: bool | None = None,
        create_schema: bool = True,
        retry: RetryPolicy | None = None,
    ) -> None:
        if not isinstance(uri, str) or "://" not in uri:
            raise InvalidInput(f"neo4j uri must look like neo4j://host:7687, got {uri!r}")
        self._label = cypher.check_identifier(label, "label")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInput(f"batch_size must be a positive integer, got {batch_size!r}")
        if (
            isinstance(max_connection_pool_size, bool)
            or not isinstance(max_connection_pool_size, int)
            or (max_connection_pool_size < 1)
        ):
            raise InvalidInput(f"max_connection_pool_size must be a positive integer, got {max_connection_pool_size!r}")
        if (
            isinstance(connection_timeout, bool)
            or not isinstance(connection_timeout, (int, float))
            or (connection_timeout <= 0)
        ):
            raise InvalidInput(f"connection_timeout must be a positive number, got {connection_timeout!r}")
        auth = (user, password or "") if user is not None else None
        try:
            self._driver = neo4j.AsyncGraphDatabase.driver(
                uri,
                auth=auth,
                max_connection_pool_size=max_connection_pool_size,
                connection_timeout=float(connection_timeout),
            )
        except (neo4j_errors.ConfigurationError, ValueError) as exc:
            raise InvalidInput(f"neo4j driver options are not valid: {exc}") from exc
        self._retry = retry if retry is not None else RetryPolicy(attempts=1)
        if not isinstance(self._retry, RetryPolicy):
            raise InvalidInput(f"retry must be a graphfuse.retry.RetryPolicy, got {type(retry).__name__}")
        self._database = database
        self._batch_size = batch_size
        self._use_gds = use_gds
        self._schema_ready = not create_schema
        self._schema_lock = asyncio.Lock()
        self._refresh_lock = asyncio.Lock()
        self._closed = False

    @property
    def label(self) -> str:
        """The node label of GraphFuse documents."""
        return self._label

    # -- plumbing --------------------------------------------------------------------------

    async def _session_run(
        self, what: str, work: Callable[[neo4j.AsyncManagedTransaction], Awaitable[T]], *, write: bool
    ) -> T:
        if self._closed:
            raise ConnectionFailed("the neo4j graph store is closed")
        return await call_with_retry(lambda: self._once(what, work, write=write), self._retry, describe=f"neo4j {what}")

    async def _once(
        self, what: str, work: Callable[[neo4j.AsyncManagedTransaction], Awaitable[T]], *, write: bool
    ) -> T:
        await self._ensure_schema()
        try:
            async with self._driver.session(database=self._database) as session:
                if write:
                    return await session.execute_write(work)
                return await session.execute_read(work)
        except _DRIVER_ERRORS as exc:
            raise translate_error(exc, what) from exc

    async def _ensure_schema(self) -> None:
        if self._schema_ready:
            return
        async with self._schema_lock:
            if self._schema_ready:
                return
            try:
                async with self._driver.session(database=self._database) as session:
                    for ddl in (cypher.constraint_statement(self._label), cypher.meta_constraint_statement()):
                        result = await session.run(ddl)
                        await result.consume()
            except _DRIVER_ERRORS as exc:
                raise translate_error(exc, "schema setup") from exc
            self._schema_ready = True

    @staticmethod
    async def _rows(tx: neo4j.AsyncManagedTransaction, statement: cypher.Statement) -> list[dict[str, Any]]:
        query, params = statement
        result = await tx.run(query, params)
        return [record.data() async for record in result]

    def _chunks(self, rows: list[T]) -> list[list[T]]:
        return [rows[i : i + self._batch_size] for i in range(0, len(rows), self._batch_size)]

    # -- documents -------------------------------------------------------------------------

    async def store_documents(self, documents: Sequence[Document]) -> None:
        """Upsert by id, atomically: the batch is validated, then written in one transaction."""
        rows = cypher.document_rows(documents)
        if not rows:
            return
        statements = [cypher.store_documents_statement(self._label, chunk) for chunk in self._chunks(rows)]

        bump = cypher.bump_generation_statement(self._label)

        async def work(tx: neo4j.AsyncManagedTransaction) -> None:
            for query, params in [*statements, bump]:
                await (await tx.run(query, params)).consume()

        await self._session_run("store_documents", work, write=True)

    async def get_document(self, id: str) -> Document:
        """The document ``id``; raises :class:`~graphfuse.NotFound`."""
        found = await self.get_documents([id])
        if id not in found:
            raise NotFound(f"document {id!r} does not exist")
        return found[id]

    async def get_documents(
        self, ids: Sequence[str], *, filter: MetadataFilter | dict[str, Any] | None = None
    ) -> dict[str, Document]:
        """The documents among ``ids`` that exist (and match ``filter``)."""
        flt = MetadataFilter.parse(filter)
        unique = list(dict.fromkeys(ids))
        if not unique:
            return {}
        statement = cypher.get_documents_statement(self._label, unique, flt)

        async def work(tx: neo4j.AsyncManagedTransaction) -> list[dict[str, Any]]:
            return await self._rows(tx, statement)

        rows = await self._session_run("get_documents", work, write=False)
        found = {row["id"]: cypher.to_document(row) for row in rows}
        return {i: found[i] for i in unique if i in found}

    def iter_documents(
        self, *, filter: MetadataFilter | dict[str, Any] | None = None, batch_size: int = 1000
    ) -> AsyncIterator[Document]:
        """Every document (matching ``filter``), in id order, ``batch_size`` per read transaction.

        ``async for doc in store.iter_documents(): ...`` (what makes the store a
        :class:`~graphfuse.DocumentListing`: the ``multihop`` preset builds its corpus indexes from
        it). Pages follow the id index (keyset pagination), so writes made during the iteration
        do not break it: each document is yielded at most once, one stored or deleted meanwhile
        may or may not be seen. Bad arguments raise ``InvalidInput`` here, before the iteration.
        """
        if self._closed:
            raise ConnectionFailed("the neo4j graph store is closed")
        flt = MetadataFilter.parse(filter)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInput(f"batch_size must be a positive integer, got {batch_size!r}")

        async def generate() -> AsyncIterator[Document]:
            after: str | None = None
            while True:
                statement = cypher.document_page_statement(self._label, after, batch_size, flt)

                async def work(tx: neo4j.AsyncManagedTransaction, statement: cypher.Statement = statement) -> Any:
                    return await self._rows(tx, statement)

                rows = await self._session_run("iter_documents", work, write=False)
                for row in rows:
                    yield cypher.to_document(row)
                if len(rows) < batch_size:
                    return
                after = rows[-1]["id"]

        return generate()

    async def generation(self) -> int:
        """A counter that moves with every write that changes the documents or relations of this
        store's label (by any client: it is counted in the writing transaction). A cache stamp:
        a ``graphfuse`` store directory keeps the ``multihop`` preset's corpus indexes in a file
        and reads the documents again only when it moved."""
        statement = cypher.generation_statement(self._label)

        async def work(tx: neo4j.AsyncManagedTransaction) -> int:
            rows = await self._rows(tx, statement)
            return int(rows[0]["generation"]) if rows else 0

        return await self._session_run("generation", work, write=False)

    async def delete_documents(self, ids: Sequence[str]) -> int:
        """Delete documents and every relation touching them; returns how many existed."""
        if not ids:
            return 0
        statement = cypher.delete_documents_statement(self._label, ids)
        bump = cypher.bump_generation_statement(self._label)

        async def work(tx: neo4j.AsyncManagedTransaction) -> int:
            deleted = int((await self._rows(tx, statement))[0]["deleted"])
            if deleted:
                await (await tx.run(*bump)).consume()
            return deleted

        return await self._session_run("delete_documents", work, write=True)

    # -- relations -------------------------------------------------------------------------

    async def create_relations(self, relations: Sequence[Relation]) -> None:
        """Create relations idempotently; a missing endpoint raises ``NotFound`` and writes nothing."""
        statements = cypher.merge_relations_statements(self._label, relations)
        if not statements:
            return
        endpoints = [i for r in relations for i in (r.source, r.target)]
        check = cypher.missing_documents_statement(self._label, endpoints)
        bump = cypher.bump_generation_statement(self._label)

        async def work(tx: neo4j.AsyncManagedTransaction) -> None:
            missing = (await self._rows(tx, check))[0]["missing"]
            if missing:
                raise NotFound(f"relations refer to documents that do not exist: {sorted(missing)!r}")
            for query, params in statements:
                for chunk in self._chunks(params["rows"]):
                    await (await tx.run(query, {"rows": chunk})).consume()
            await (await tx.run(*bump)).consume()

        await self._session_run("create_relations", work, write=True)

    async def delete_relations(self, relations: Sequence[Relation]) -> int:
        """Delete relations by (source, target, type); returns how many existed."""
        statements = cypher.delete_relations_statements(self._label, relations)
        bump = cypher.bump_generation_statement(self._label)

        async def work(tx: neo4j.AsyncManagedTransaction) -> int:
            deleted = 0
            for query, params in statements:
                for chunk in self._chunks(params["rows"]):
                    deleted += int((await self._rows(tx, (query, {"rows": chunk})))[0]["deleted"])
            if deleted:
                await (await tx.run(*bump)).consume()
            return deleted

        if not statements:
            return 0
        return await self._session_run("delete_relations", work, write=True)

    # -- traversal and pagerank ------------------------------------------------------------

    async def related(
        self,
        ids: Sequence[str],
        *,
        depth: int = 2,
        filter: MetadataFilter | dict[str, Any] | None = None,
        relation_types: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[RelatedDocument]:
        """Documents within ``depth`` hops (1..3) of any seed; see :func:`_cypher.related_statement`."""
        statement = cypher.related_statement(
            self._label,
            ids,
            depth=depth,
            flt=MetadataFilter.parse(filter),
            relation_types=relation_types,
            limit=limit,
        )
        if not ids or limit == 0:
            return []

        async def work(tx: neo4j.AsyncManagedTransaction) -> list[dict[str, Any]]:
            return await self._rows(tx, statement)

        rows = await self._session_run("related", work, write=False)
        return [RelatedDocument(r["id"], int(r["distance"]), r["seed"]) for r in rows]

    async def _gds_available(self) -> bool:
        if self._use_gds is None:

            async def work(tx: neo4j.AsyncManagedTransaction) -> bool:
                await self._rows(tx, (cypher.gds_available_statement(), {}))
                return True

            try:
                self._use_gds = await self._session_run("gds detection", work, write=False)
            except InvalidInput:
                self._use_gds = False
        return self._use_gds

    async def pagerank(self, ids: Sequence[str] | None = None) -> dict[str, float]:
        """PageRank over the relations (source -> target, weighted), normalised to max 1.

        Read from the ``graphfuse_pagerank`` property of the documents (one lookup per id on the
        unique id index) when the stored scores are fresh, i.e. computed at the label's current
        :meth:`generation`. Every write moves the generation, which marks them stale; the first
        call that finds them stale recomputes and stores them (:meth:`refresh_pagerank`); a
        user who may not write gets the computed scores without storing them.
        """
        if ids is not None and not ids:
            return {}
        wanted = None if ids is None else list(dict.fromkeys(ids))
        scores = await self._stored_pagerank(wanted)
        if scores is None:
            # One refresh per store object at a time; whoever waited reads what it stored.
            async with self._refresh_lock:
                scores = await self._stored_pagerank(wanted)
                if scores is None:
                    scores = await self._refresh(must_store=False)
        if wanted is None:
            return scores
        return {i: scores[i] for i in wanted if i in scores}

    async def refresh_pagerank(self) -> None:
        """Recompute PageRank now and store it on the documents, marked with the generation it
        was computed at (:class:`graphfuse.PageRankRefreshing`: the ``Indexer`` calls it at the
        end of a run, so the first query after indexing does not pay for it; :meth:`pagerank`
        refreshes stale scores by itself otherwise). The computation uses GDS when available
        (``use_gds``), else the driver-side power iteration over the streamed relations; scores
        computed while another client wrote are not stored (they are stale already)."""
        async with self._refresh_lock:
            await self._refresh(must_store=True)

    async def _pagerank_status(self, tx: neo4j.AsyncManagedTransaction) -> tuple[int, int | None]:
        """(generation, the generation the stored scores were computed at or ``None``)."""
        rows = await self._rows(tx, cypher.pagerank_status_statement(self._label))
        if not rows:
            return 0, None
        ranked_at = rows[0]["ranked_at"]
        return int(rows[0]["generation"] or 0), None if ranked_at is None else int(ranked_at)

    async def _stored_pagerank(self, ids: list[str] | None) -> dict[str, float] | None:
        """The stored scores of ``ids`` (all when ``None``), or ``None`` when they are stale."""
        lookup = cypher.pagerank_scores_statement(self._label, ids)

        async def work(tx: neo4j.AsyncManagedTransaction) -> list[dict[str, Any]] | None:
            generation, ranked_at = await self._pagerank_status(tx)
            if ranked_at != generation:
                return None
            return await self._rows(tx, lookup)

        rows = await self._session_run("pagerank", work, write=False)
        if rows is None:
            return None
        return {r["id"]: float(r["score"]) for r in rows}

    async def _refresh(self, *, must_store: bool) -> dict[str, float]:
        if await self._gds_available():
            generation, scores = await self._gds_pagerank()
        else:
            generation, scores = await self._scipy_pagerank()
        try:
            await self._store_pagerank(generation, scores)
        except AuthenticationFailed:
            # A user without write rights still gets scores from pagerank(), computed per call.
            if must_store:
                raise
        return scores

    async def _store_pagerank(self, generation: int, scores: dict[str, float]) -> None:
        rows = [{"id": i, "score": s} for i, s in scores.items()]
        writes = [cypher.pagerank_write_statement(self._label, chunk) for chunk in self._chunks(rows)]
        mark = cypher.pagerank_mark_statement(self._label, generation)

        async def work(tx: neo4j.AsyncManagedTransaction) -> None:
            if (await self._pagerank_status(tx))[0] != generation:
                return  # written meanwhile: these scores are already stale, the next call recomputes
            for query, params in [*writes, mark]:
                await (await tx.run(query, params)).consume()

        await self._session_run("pagerank refresh", work, write=True)

    async def _gds_pagerank(self) -> tuple[int, dict[str, float]]:
        async def work(tx: neo4j.AsyncManagedTransaction) -> tuple[int, list[dict[str, Any]]]:
            # The generation is read before the graph: the scores are at least that recent.
            generation, _ = await self._pagerank_status(tx)
            # The GDS graph catalog is not transactional: a retried attempt needs a fresh name.
            project, stream, drop = cypher.gds_pagerank_statements(self._label, f"graphfuse-{uuid.uuid4().hex}")
            projected = await self._rows(tx, project)
            try:
                if not projected or not projected[0]["nodes"]:
                    return generation, []
                return generation, await self._rows(tx, stream)
            finally:
                await self._rows(tx, drop)

        generation, rows = await self._session_run("pagerank (gds)", work, write=True)
        if not rows:
            return generation, {}
        top = max(float(r["score"]) for r in rows)
        return generation, {r["id"]: (float(r["score"]) / top if top > 0 else 0.0) for r in rows}

    async def _scipy_pagerank(self) -> tuple[int, dict[str, float]]:
        async def work(tx: neo4j.AsyncManagedTransaction) -> tuple[int, list[str], list[dict[str, Any]]]:
            generation, _ = await self._pagerank_status(tx)
            nodes = [r["id"] for r in await self._rows(tx, cypher.nodes_statement(self._label))]
            return generation, nodes, await self._rows(tx, cypher.edges_statement(self._label))

        generation, nodes, edges = await self._session_run("pagerank", work, write=False)
        scores = await asyncio.to_thread(
            pagerank_from_edges,
            nodes,
            [(e["source"], e["target"], float(e["weight"])) for e in edges],
        )
        return generation, scores

    async def close(self) -> None:
        """Close the driver and its connection pool (idempotent)."""
        if self._closed:
            return
        self._closed = True
        await self._driver.close()

    def __repr__(self) -> str:
        return f"Neo4jGraphStore(label={self._label!r}, database={self._database!r})"

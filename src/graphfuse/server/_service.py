"""The work behind the endpoints: one store, shared pipelines, one writer at a time.

All of it runs on the service's work loop (:class:`~graphfuse.server._work.WorkLoop`), never
on the loop that answers HTTP: :meth:`Service.run` hands a coroutine over. Pipelines are built
once per preset and shared by every request (a pipeline is immutable and safe to share).
Presets that read the whole corpus (``multihop``, ``bm25``, ``hybrid``: a BM25 index, a title
linker) are rebuilt after a write, this service's or another process's, the first time they are
used again. Writes (ingest, delete) take one lock, so
two indexing runs never overlap; queries do not wait for them except to pick up such a rebuild.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from .. import __version__, presets
from .._capabilities import AdjacencySource, DocumentListing
from .._errors import GraphFuseError, InvalidInput, StageFailed
from .._filters import MetadataFilter
from .._pipeline import Pipeline
from .._protocols import Embedder, GraphStore, Reranker, VectorStore
from .._result_cache import ResultCache
from .._types import KIND_KEY, Result
from ..compare import basic_rag, graphrag, llm_only
from ..context import FORMATS, get_token_counter
from ..indexing import (
    CO_MENTION,
    CO_OCCURS_WITH,
    LINKS_TO,
    MENTIONED_IN,
    MENTIONS,
    PART_OF,
    Indexer,
    SourceRecord,
    TitleLinker,
    metadata_aliases,
)
from ..multihop import CorpusCache, corpus_inputs
from ..plugins import Components, build_pipeline
from ..rerankers import EmbeddingReranker
from ._options import check_filter_size, check_scorer, check_stages
from ._problems import Problem
from ._scope import TENANT_KEY, Scope
from ._session import SessionStats
from ._work import WorkLoop

__all__ = ["Limits", "Service"]

T = TypeVar("T")

logger = logging.getLogger("graphfuse.server")

KNOWN_RELATION_TYPES = (LINKS_TO, MENTIONS, CO_MENTION, PART_OF, MENTIONED_IN, CO_OCCURS_WITH)
_DEGREE_BUCKETS = ((0, 0), (1, 1), (2, 2), (3, 5), (6, 10), (11, 20), (21, 50), (51, None))
_WARM_UP_QUERY = "How do I get started?"
_HEALTH_START = 1.0  # seconds /health waits for the work loop to take its store probes up
_HEALTH_PROBE = 5.0  # seconds each store probe may take


def _title(r: Result) -> str | None:
    title = r.document.metadata.get("title")
    return title if isinstance(title, str) else None


class _Scoped:
    """A pipeline whose contexts are always assembled within one tenant's filter."""

    def __init__(self, pipeline: Pipeline, flt: MetadataFilter | None) -> None:
        self._pipeline = pipeline
        self._filter = flt

    async def acontext(self, query: str, **options: Any) -> Any:
        return await self._pipeline.acontext(query, filter=self._filter, **options)

    def __repr__(self) -> str:
        return repr(self._pipeline)


@dataclass(frozen=True)
class Limits:
    """What one request may ask for; larger requests get a 413 or a 422 naming the field.

    ``max_body_bytes`` bounds an ingest body, ``max_request_bytes`` every other body (a query,
    its options and filter). ``request_timeout`` bounds all the work a read request causes
    (building a preset's pipeline and waiting for a run slot included), ``write_timeout`` an
    ingest or a delete: past it the answer is a 504. ``max_concurrent_runs`` pipeline runs
    (retrieve, context, compare) are in progress at once; more wait their turn.
    ``body_timeout`` bounds the time to receive a whole request body, from the end of its
    headers, however slowly it trickles in: past it the answer is a 408 and the connection closes.
    """

    max_body_bytes: int = 8 * 1024 * 1024
    max_request_bytes: int = 64 * 1024
    max_query_chars: int = 2000
    max_top_k: int = 100
    max_budget: int = 32_000
    max_documents: int = 1000
    max_stages: int = 16
    max_filter_conditions: int = 32
    max_filter_values: int = 256
    max_filter_chars: int = 1024
    request_timeout: float = 60.0
    write_timeout: float = 600.0
    max_concurrent_runs: int = 4
    body_timeout: float = 60.0

    def check_query(self, query: str, field: str = "query") -> str:
        if not query.strip():
            raise Problem.invalid(field, f"{field} must not be empty")
        if len(query) > self.max_query_chars:
            raise Problem.invalid(field, f"{field} has {len(query)} characters; the limit is {self.max_query_chars}")
        return query

    def check_top_k(self, top_k: int, field: str = "top_k") -> int:
        if top_k < 1 or top_k > self.max_top_k:
            raise Problem.invalid(field, f"{field} must be between 1 and {self.max_top_k}, got {top_k}")
        return top_k

    def check_budget(self, budget: int, field: str = "budget") -> int:
        if budget < 1 or budget > self.max_budget:
            raise Problem.invalid(field, f"{field} must be between 1 and {self.max_budget} tokens, got {budget}")
        return budget

    def check_filter(self, spec: Any, field: str = "filter") -> Any:
        check_filter_size(
            spec,
            max_conditions=self.max_filter_conditions,
            max_values=self.max_filter_values,
            max_chars=self.max_filter_chars,
            field=field,
        )
        return spec


@dataclass
class _Built:
    pipeline: Pipeline
    generation: tuple[int, int | None] | None  # the corpus it read (Service._corpus_generation), or None


@dataclass
class _Writer:
    indexer: Indexer
    linker: TitleLinker


@dataclass
class Service:
    """One store's components and what the endpoints do with them.

    ``entity_graph``: whether ingest builds entity nodes from the text (``Indexer(entity_graph=True)``,
    each tenant's inside its own scope); ``None`` (the default) decides by the store: yes when
    it already holds entity nodes (it was indexed with an entity graph).

    ``corpus_cache`` (a :class:`~graphfuse.multihop.CorpusCache` of the store directory) lets
    presets that read the corpus (``multihop``) load their BM25 index and title linker from the
    persisted file, refreshed incrementally after ingests, instead of re-reading the whole
    corpus; ``graphfuse serve`` passes one for the embedded store.

    ``result_cache`` (a :class:`~graphfuse.ResultCache` over this store) keeps the results of the
    presets' pipelines (named ``preset:<name>``); a request may skip it (``no_cache``). Requests
    naming their own ``stages`` are never cached.

    ``work``: the loop all component work runs on (default: a :class:`WorkLoop` of its own
    allowing ``limits.max_concurrent_runs`` pipeline runs at once). Call the coroutine methods
    through :meth:`run` when calling from another loop; :meth:`aclose` stops the loop.
    """

    graph: GraphStore
    vectors: VectorStore
    embedder: Embedder
    reranker: Reranker | None = None
    default_preset: str = "standard"
    limits: Limits = field(default_factory=Limits)
    description: Mapping[str, str] = field(default_factory=dict)
    _generation: int = 0
    _pipelines: dict[str, _Built] = field(default_factory=dict)
    _build_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _building: dict[str, asyncio.Future[Pipeline]] = field(default_factory=dict)
    _preset_names: tuple[str, ...] = field(default_factory=lambda: tuple(presets.names()))
    _write_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _writers: dict[str | None, _Writer] = field(default_factory=dict)
    _positions: tuple[Sequence[str], dict[str, int]] | None = None
    _part_of_columns: tuple[Any, Any] | None = None
    session: SessionStats = field(default_factory=SessionStats)
    generator: Any = None
    judge: Any = None
    basic_preset: str = "minimal"
    graph_preset: str = "multihop"
    max_answer_tokens: int = 256
    corpus_cache: CorpusCache | None = None
    entity_graph: bool | None = None
    work: WorkLoop | None = None
    result_cache: ResultCache | None = None
    _warming: tuple[str, ...] = ()
    _warm_up_task: Any = None

    def __post_init__(self) -> None:
        if self.work is None:
            self.work = WorkLoop(self.limits.max_concurrent_runs)

    # -- the work loop ---------------------------------------------------------------------

    def _loop(self) -> WorkLoop:
        assert self.work is not None  # set in __post_init__
        return self.work

    async def run(self, coro: Coroutine[Any, Any, T], *, limited: bool = False) -> T:
        """``coro`` run on the work loop; ``limited``: as one of the ``max_concurrent_runs`` pipeline runs."""
        return await self._loop().run(coro, limited=limited)

    async def aclose(self) -> None:
        """Stop the work loop (what still runs on it is cancelled)."""
        await self._loop().aclose()

    @property
    def ready(self) -> bool:
        """Whether the warm-up :meth:`start_warm_up` began is over (True when none was started)."""
        return not self._warming

    def start_warm_up(self) -> None:
        """Begin :meth:`warm_up` on the work loop, in the background; :attr:`ready` says when it is over."""
        presets_ = tuple(
            n
            for n in dict.fromkeys((self.default_preset, self.basic_preset, self.graph_preset))
            if n in self._preset_names
        )
        self._warming = ("model", "token counter", *presets_)
        self._warm_up_task = self._loop().submit(self._warm_up(presets_))

    async def _warm_up(self, names: Sequence[str]) -> None:
        try:
            await self.warm_up(names)
        except Exception:  # logged: requests still work, they pay what the warm-up could not
            logger.exception("warm-up failed")
        finally:
            self._warming = ()

    async def warm_up(self, names: Sequence[str] = ()) -> None:
        """Pay now what a first request would pay: the embedding model, the token counter, and each
        preset of ``names`` built and run once (retrieval and a context), so its lazily built parts
        exist. A preset that cannot serve this store is logged and skipped (requests naming it get the
        error); nothing is recorded in the session statistics.
        """
        started = time.perf_counter()
        await self.embedder.embed_query(_WARM_UP_QUERY)  # a local model loads on its first call
        self._warming = tuple(w for w in self._warming if w != "model")
        await asyncio.to_thread(get_token_counter)
        self._warming = tuple(w for w in self._warming if w != "token counter")
        for name in names:
            try:
                pipeline = await self.pipeline(name)
                await pipeline.acontext(_WARM_UP_QUERY, budget=500, format="passages", top_k=5, cache=False)
            except (GraphFuseError, Problem) as exc:
                logger.warning("warm-up of preset %r failed: %s", name, exc)
            self._warming = tuple(w for w in self._warming if w != name)
        logger.info("warmed up in %.1f s (presets: %s)", time.perf_counter() - started, ", ".join(names) or "none")

    # -- pipelines -------------------------------------------------------------------------

    def _reranker(self) -> Reranker:
        if self.reranker is None:
            # Presets that rerank get one from the store's own embedder: offline, no extra model.
            self.reranker = EmbeddingReranker(self.embedder, vector_store=self.vectors)
        return self.reranker

    def _reads_corpus(self, name: str) -> bool:
        return "corpus_indexes" in presets.get(name).inputs

    async def _corpus_generation(self) -> tuple[int, int | None]:
        """Which corpus a preset that reads it up front would read: this service's writes, and the
        graph store's own write counter when it keeps one (``generation()``: moved by every write,
        ``graphfuse index`` in another process included)."""
        counter = getattr(self.graph, "generation", None)
        store = await counter() if callable(counter) else None
        return self._generation, store if isinstance(store, int) else None

    async def _build_preset(self, name: str, generation: tuple[int, int | None] | None) -> _Built:
        preset = presets.get(name)
        reads_corpus = "corpus_indexes" in preset.inputs
        reranker = self._reranker() if "reranker" in preset.inputs else None
        options: dict[str, Any] = {}
        if reads_corpus and self.corpus_cache is not None:
            options.update(await corpus_inputs(self.graph, cache=self.corpus_cache))
        pipeline = await presets.abuild(
            name,
            graph_store=self.graph,
            vector_store=self.vectors,
            embedder=self.embedder,
            reranker=reranker,
            **options,
        )
        if self.result_cache is not None:
            pipeline = pipeline.with_result_cache(self.result_cache, name=f"preset:{name}")
        return _Built(pipeline, generation)

    @property
    def preset_names(self) -> tuple[str, ...]:
        """The presets a request may name: those registered when this service was made."""
        return self._preset_names

    async def pipeline(self, name: str) -> Pipeline:
        """The shared pipeline of preset ``name`` (built on first use, rebuilt after writes if it reads the corpus).

        ``name`` must be one of the presets registered when this service was made. A preset that
        reads the corpus up front (``bm25``, ``hybrid``, ``multihop``) is rebuilt when the store was
        written since, by this service or by another process (``graphfuse index``), as far as the
        graph store counts its writes (``generation()``). A build runs once per preset and
        generation, in a task of its own: a request that stops waiting for it (its deadline
        passed) leaves it to finish for the next one.
        """
        if name not in self._preset_names:
            known = ", ".join(self._preset_names)
            raise Problem.invalid("preset", f"unknown preset {name[:64]!r}; known presets: {known}")
        generation = await self._corpus_generation() if self._reads_corpus(name) else None
        built = self._pipelines.get(name)
        if built is not None and built.generation == generation:
            return built.pipeline
        async with self._build_lock:
            built = self._pipelines.get(name)
            if built is not None and built.generation == generation:
                return built.pipeline
            task = self._building.get(name)
            if task is None or task.done():
                task = self._building[name] = asyncio.ensure_future(self._build_and_keep(name, generation))
                # Retrieved here when no request is left waiting for it (no "never retrieved" warning).
                task.add_done_callback(lambda t: t.cancelled() or t.exception())
        return await asyncio.shield(task)

    async def _build_and_keep(self, name: str, generation: tuple[int, int | None] | None) -> Pipeline:
        try:
            built = await self._build_preset(name, generation)
        except InvalidInput as exc:
            raise Problem.invalid("preset", f"preset {name!r} cannot serve this store: {exc}") from exc
        finally:
            self._building.pop(name, None)
        self._pipelines[name] = built
        return built.pipeline

    async def spec_pipeline(self, stages: Sequence[Any], scorer: Any) -> Pipeline:
        """A pipeline from a request's ``stages`` (and ``scorer``), allow-listed (built per request, off the loop).

        Only the stages and options of :data:`graphfuse.server._options.STAGES` (and the
        scorers of ``SCORERS``) pass; anything else is a 422 naming the entry.
        """
        spec: dict[str, Any] = {"stages": check_stages(stages, self.limits.max_stages)}
        if scorer is not None:
            spec["scorer"] = check_scorer(scorer)
        reranker = self._reranker() if any(s["name"] == "rerank" for s in spec["stages"]) else self.reranker
        components = Components(
            graph_store=self.graph, vector_store=self.vectors, embedder=self.embedder, reranker=reranker
        )
        try:
            return await asyncio.to_thread(build_pipeline, spec, components)
        except InvalidInput as exc:
            where = "stages"
            text = str(exc)
            if text.startswith("stages["):
                where = text.split(":", 1)[0]
            elif text.startswith("scorer"):
                where = "scorer"
            raise Problem.invalid(where, text) from exc
        except GraphFuseError as exc:
            raise Problem.invalid("stages", str(exc)) from exc

    # -- retrieval -------------------------------------------------------------------------

    async def retrieve(
        self,
        scope: Scope,
        pipeline: Pipeline,
        query: str,
        *,
        top_k: int,
        client_filter: Any,
        granularity: str | None = None,
        max_per_document: int | None = None,
        cache: bool = True,
    ) -> tuple[list[Result], list[dict[str, Any]]]:
        """Run ``pipeline`` inside ``scope``; returns the results and their JSON form.

        ``granularity`` and ``max_per_document`` shape the results (:meth:`Pipeline.aretrieve`);
        ``max_per_document`` must be between 1 and ``top_k``.
        """
        flt = scope.filter(client_filter)
        if max_per_document is not None and not 1 <= max_per_document <= top_k:
            raise Problem.invalid("max_per_document", f"max_per_document must be between 1 and top_k ({top_k})")
        shape: dict[str, Any] = {}
        if granularity is not None:
            shape["granularity"] = granularity
        if max_per_document is not None:
            shape["max_per_document"] = max_per_document
        try:
            results = await pipeline.aretrieve(
                query, top_k=top_k, filter=flt, timeout=self.limits.request_timeout, cache=cache, **shape
            )
        except InvalidInput as exc:
            if isinstance(exc, StageFailed):
                raise  # bad data a stage met is the server's fault (500), not the request's
            raise Problem.invalid("query", str(exc)) from exc
        results = await self._complete(scope, results, flt)
        return results, [self.result_json(scope, r) for r in results]

    async def _complete(self, scope: Scope, results: list[Result], flt: MetadataFilter | None) -> list[Result]:
        """Load documents a pipeline left without content (same filter), and keep only the scope's."""
        missing = [r.id for r in results if r.document.content is None]
        loaded = await self.graph.get_documents(missing, filter=flt) if missing else {}
        out = []
        for r in results:
            doc = loaded.get(r.id, r.document) if r.document.content is None else r.document
            if doc.content is None and r.id not in loaded:
                continue  # not visible in this scope (or gone)
            if not scope.visible(doc.id, doc.metadata):
                logger.error(
                    "dropped result %r outside tenant %r: a stage ignored the query filter", r.id, scope.tenant
                )
                continue
            out.append(Result(doc, r.score, r.signals, r.contributions))
        return out

    @staticmethod
    def result_json(scope: Scope, r: Result) -> dict[str, Any]:
        title = r.document.metadata.get("title")
        parent = r.document.metadata.get("parent_id")
        out: dict[str, Any] = {
            "id": scope.external(r.id),
            "score": r.score,
            "signals": dict(r.signals),
            "title": title if isinstance(title, str) else None,
            "text": r.document.content,
        }
        if isinstance(parent, str):
            out["parent_id"] = scope.external(parent)
        return out

    # -- context ---------------------------------------------------------------------------

    async def context(
        self,
        scope: Scope,
        pipeline: Pipeline,
        label: str,
        query: str,
        *,
        budget: int,
        format: str,
        top_k: int | None,
        client_filter: Any,
        cache: bool = True,
        history: Sequence[Mapping[str, Any]] = (),
    ) -> dict[str, Any]:
        """Retrieve inside ``scope`` and assemble a context of at most ``budget`` tokens (the last
        turns of ``history`` in their share of it)."""
        if format not in FORMATS:
            raise Problem.invalid("format", f"format must be one of {', '.join(FORMATS)}, got {format!r}")
        flt = scope.filter(client_filter)
        try:
            ctx = await pipeline.acontext(
                query,
                budget=budget,
                format=format,
                top_k=top_k,
                filter=flt,
                timeout=self.limits.request_timeout,
                cache=cache,
                history=history,
            )
        except InvalidInput as exc:
            if isinstance(exc, StageFailed):
                raise  # bad data a stage met is the server's fault (500), not the request's
            raise Problem.invalid("query", str(exc)) from exc
        data: dict[str, Any] = ctx.to_dict()
        text: str = data["text"]
        for entry in (*data["sources"], *data["dropped"]):
            external = scope.external(entry["id"])
            if external is None:
                logger.error("context for tenant %r held %r: refused", scope.tenant, entry["id"])
                raise Problem(500, "internal error; the server's log has the details")
            if external != entry["id"]:
                text = text.replace(entry["id"], external)
            entry["id"] = external
        if "prompt_text" in data:  # the history block, then the text: with the ids the tenant knows
            data["prompt_text"] = data["prompt_text"][: len(data["prompt_text"]) - len(data["text"])] + text
        data["text"] = text
        self.session.record(scope.tenant, f"{label}:{format}", int(data["tokens"]))
        return data

    # -- compare ---------------------------------------------------------------------------

    async def compare(self, scope: Scope, question: str, *, gold: str | None, budget: int) -> dict[str, Any]:
        """LLM only, basic RAG and GraphRAG answers to ``question`` (and verdicts with ``gold``)."""
        if self.generator is None:
            raise Problem(
                503,
                "no LLM is configured on this server (start it with --llm NAME:MODEL): answers and judge scores "
                "need one; /v1/retrieve, /v1/context and the graph work without",
                extra={"llm": False},
            )
        flt = scope.filter(None)
        pipelines = {
            "llm_only": llm_only(),
            "basic": basic_rag(_Scoped(await self.pipeline(self.basic_preset), flt), budget=budget),
            "graph": graphrag(_Scoped(await self.pipeline(self.graph_preset), flt), budget=budget, format="graph"),
        }
        outcomes = await asyncio.gather(
            *(p.aanswer(question, self.generator, max_tokens=self.max_answer_tokens) for p in pipelines.values()),
            return_exceptions=True,
        )
        answers: dict[str, Any] = {}
        texts: dict[str, str] = {}
        for name, outcome in zip(pipelines, outcomes, strict=True):
            if isinstance(outcome, GraphFuseError):
                answers[name] = {"error": str(outcome)}
                continue
            if isinstance(outcome, BaseException):
                raise outcome
            data = outcome.to_dict()
            context = data.get("context")
            if isinstance(context, dict):
                for entry in (*context.get("sources", ()), *context.get("dropped", ())):
                    external = scope.external(entry["id"])
                    if external is None:
                        logger.error("answer context for tenant %r held %r: refused", scope.tenant, entry["id"])
                        raise Problem(500, "internal error; the server's log has the details")
                    if isinstance(context.get("text"), str):
                        context["text"] = context["text"].replace(entry["id"], external)
                    entry["id"] = external
            answers[name] = {**data, "latency_s": data["retrieval_latency_s"] + data["generation_latency_s"]}
            texts[name] = outcome.text
            self.session.record(scope.tenant, f"compare:{name}", int(outcome.prompt_tokens))
        verdicts: dict[str, Any] = {}
        if self.judge is not None and gold:
            judged = await asyncio.gather(
                *(self.judge.ajudge(question, text, gold) for text in texts.values()), return_exceptions=True
            )
            for name, verdict in zip(texts, judged, strict=True):
                if isinstance(verdict, GraphFuseError):
                    verdicts[name] = {"error": str(verdict)}
                elif isinstance(verdict, BaseException):
                    raise verdict
                else:
                    verdicts[name] = verdict.to_dict()
        notes = [] if self.judge is not None and gold else ["no judge verdicts: give 'answer' (the expected answer)"]
        return {"question": question, "answers": answers, "verdicts": verdicts, "notes": notes}

    # -- writes ----------------------------------------------------------------------------

    async def _store_has_entity_graph(self) -> bool:
        """Whether the store was built with an entity graph: it holds an entity node (of anyone)."""
        if self.entity_graph is None:
            found = False
            if isinstance(self.graph, DocumentListing):
                kind = MetadataFilter.parse({KIND_KEY: "entity"})
                async for _ in self.graph.iter_documents(filter=kind, batch_size=1):
                    found = True
                    break
            self.entity_graph = found
        return self.entity_graph

    async def _writer(self, scope: Scope) -> _Writer:
        writer = self._writers.get(scope.tenant)
        if writer is None:
            # One title linker per tenant: a document only ever mentions its own tenant's titles.
            linker = TitleLinker()
            if isinstance(self.graph, DocumentListing):
                async for doc in self.graph.iter_documents(filter=scope.base_filter):
                    if not scope.visible(doc.id, doc.metadata):
                        continue
                    if doc.metadata.get(KIND_KEY) in ("chunk", "entity"):
                        continue
                    title = doc.metadata.get("title")
                    titles = [title] if isinstance(title, str) and title.strip() else []
                    for name in (*titles, *metadata_aliases(doc.metadata)):  # as the indexer learns them
                        linker.add(name, doc.id)
            # A store built with an entity graph keeps one: new documents get their entity nodes
            # too, inside the tenant's scope (ids under the tenant, its tenant metadata), so the
            # same name in two tenants is two nodes that the tenant filter keeps apart.
            indexer = Indexer.for_records(
                [],
                self.graph,
                self.vectors,
                self.embedder,
                entity_graph=await self._store_has_entity_graph(),
                linker=linker,
                entity_namespace=scope.prefix,
                entity_metadata=None if scope.tenant is None else {TENANT_KEY: scope.tenant},
            )
            writer = self._writers[scope.tenant] = _Writer(indexer, linker)
        return writer

    async def ingest(self, scope: Scope, records: Sequence[SourceRecord]) -> dict[str, Any]:
        """Index ``records`` (already stamped for ``scope``); durable once this returns."""
        async with self._write_lock:
            local = {r.id for r in records}
            outside = sorted({x for r in records for x in r.links if x not in local})
            found = await self.graph.get_documents(outside, filter=scope.base_filter) if outside else {}
            unknown = [x for x in outside if x not in found]
            warnings: list[str] = []
            if unknown:
                shown = ", ".join(repr(scope.external(x)) for x in unknown[:10])
                more = " ..." if len(unknown) > 10 else ""
                warnings.append(f"links to {len(unknown)} unknown document id(s) skipped: {shown}{more}")
                gone = set(unknown)
                records = [dataclasses.replace(r, links=tuple(x for x in r.links if x not in gone)) for r in records]
            writer = await self._writer(scope)
            try:
                report = await writer.indexer.aindex(records)
            finally:
                self._generation += 1
        return {
            "documents": report.documents,
            "chunks": report.chunks,
            "relations": report.relations,
            "skipped": report.skipped,
            "warnings": warnings + [w for w in report.warnings if scope.prefix not in w or not scope.prefix],
        }

    async def delete(self, scope: Scope, doc_id: str) -> dict[str, Any]:
        """Delete one of the scope's documents (with its chunks and relations); 404 otherwise."""
        stored = scope.internal(doc_id)
        async with self._write_lock:
            found = await self.graph.get_documents([stored], filter=scope.base_filter)
            doc = found.get(stored)
            if doc is None or not scope.visible(doc.id, doc.metadata) or doc.metadata.get(KIND_KEY) == "chunk":
                raise Problem(404, f"no document {doc_id!r}")
            writer = await self._writer(scope)
            try:
                await writer.indexer.adelete([stored])
            finally:
                self._generation += 1
        return {"deleted": doc_id}

    # -- graph -----------------------------------------------------------------------------

    async def _typed_adjacency(self) -> tuple[Sequence[str], dict[str, int], dict[str, Any], Any] | None:
        if not isinstance(self.graph, AdjacencySource):
            return None
        ids, untyped = await self.graph.adjacency()
        typed = {t: (await self.graph.adjacency(relation_types=[t]))[1] for t in KNOWN_RELATION_TYPES}
        cached = self._positions
        if cached is None or cached[0] is not ids:
            cached = self._positions = (ids, {x: i for i, x in enumerate(ids)})
        return ids, cached[1], typed, untyped

    async def subgraph(self, scope: Scope, results: Sequence[Result]) -> dict[str, Any]:
        """The relations among ``results`` (all in ``scope``): nodes and typed edges.

        A node is a result; a passage's node also names its page (``page``). Two results are
        joined by every relation between them, and by every relation between their pages: from
        the page itself or from any of its passages (``PART_OF`` it) to the other page or its
        passages, as the graph context relates them. Such an edge names the two ``pages``;
        relations inside one page are not edges.
        """
        nodes = []
        for rank, r in enumerate(results, 1):
            node: dict[str, Any] = {"id": scope.external(r.id), "title": _title(r), "score": r.score, "rank": rank}
            parent = r.document.metadata.get("parent_id")
            if isinstance(parent, str) and parent:
                node["page"] = scope.external(parent)
            nodes.append(node)
        view = await self._typed_adjacency()
        if view is None:
            return {"nodes": nodes, "edges": [], "note": "this graph store offers no adjacency snapshot"}
        _, position, typed, untyped = view
        pages: dict[str, list[int]] = {}  # page id -> the results (indexes) on it
        for i, r in enumerate(results):
            parent = r.document.metadata.get("parent_id")
            pages.setdefault(parent if isinstance(parent, str) and parent else r.id, []).append(i)
        heads = {page: position.get(page) for page in pages}
        own = {
            page: [p for p in (heads[page], *(position.get(results[i].id) for i in members)) if p is not None]
            for page, members in pages.items()
        }
        if not any(own.values()):
            return {"nodes": nodes, "edges": []}
        names = [str(n["id"]) for n in nodes]
        external = {page: scope.external(page) for page in pages}
        part_of = typed.get(PART_OF)
        cached = self._part_of_columns
        if part_of is not None and (cached is None or cached[0] is not part_of):
            # The passages of each page, by column: converted once per snapshot of the graph.
            cached = self._part_of_columns = (part_of, await asyncio.to_thread(part_of.tocsc))
        columns = cached[1] if part_of is not None and cached is not None else None
        edges = await asyncio.to_thread(_edges_among_pages, heads, own, pages, names, external, columns, typed, untyped)
        return {"nodes": nodes, "edges": edges}

    async def graph_stats(self, scope: Scope) -> dict[str, Any]:
        """Documents, chunks, entity nodes, relations by type and the degree distribution of ``scope``."""
        view = await self._typed_adjacency()
        if not isinstance(self.graph, DocumentListing) or view is None:
            raise Problem(501, "this graph store cannot list its documents or relations, so it has no graph statistics")
        _, position, typed, untyped = view
        documents = chunks = entities = 0
        mine: list[int] = []
        async for doc in self.graph.iter_documents(filter=scope.base_filter):
            if not scope.visible(doc.id, doc.metadata):
                continue
            kind = doc.metadata.get(KIND_KEY)
            if kind == "chunk":
                chunks += 1
            elif kind == "entity":
                entities += 1
            else:
                documents += 1
            if doc.id in position:
                mine.append(position[doc.id])
        numbers = await asyncio.to_thread(_graph_numbers, sorted(mine), typed, untyped)
        return {"documents": documents, "chunks": chunks, "entities": entities, **numbers}

    # -- health ----------------------------------------------------------------------------

    async def _probe_stores(self, begun: list[bool]) -> dict[str, str]:
        begun.append(True)
        checks: dict[str, str] = {}
        probes: tuple[tuple[str, Callable[[], Awaitable[Any]]], ...] = (
            ("graph_store", lambda: self.graph.get_documents(["graphfuse-health-probe"])),
            ("vector_store", self.vectors.count),
        )
        for name, probe in probes:
            try:
                await asyncio.wait_for(probe(), timeout=_HEALTH_PROBE)
                checks[name] = "ok"
            except Exception as exc:  # reported, not raised: health says what is down
                logger.warning("health check %s failed: %s", name, exc)
                checks[name] = "unreachable"
        return checks

    async def health(self) -> dict[str, Any]:
        """Version, whether the graph store, vector store and embedder answer, and whether the server is ready.

        Call it from the HTTP loop: the store probes run on the work loop; when that loop does not
        take them up within a second (a long computation holds it) they say ``busy``, and so does
        ``status``. ``ready`` is False while the start-up warm-up runs (``warming`` says what is
        left); ``work`` counts the pipeline runs in progress and waiting.
        """
        started = time.perf_counter()
        begun: list[bool] = []
        probes = asyncio.ensure_future(self.run(self._probe_stores(begun)))
        done, _ = await asyncio.wait({probes}, timeout=_HEALTH_START)
        if not done and not begun:
            probes.cancel()
            checks = {"graph_store": "busy", "vector_store": "busy"}
        else:
            try:
                checks = await asyncio.wait_for(probes, timeout=2 * _HEALTH_PROBE)
            except asyncio.TimeoutError:
                checks = {"graph_store": "busy", "vector_store": "busy"}
        checks["embedder"] = "ok" if self.embedder.dimension > 0 else "unreachable"
        values = set(checks.values())
        status = "degraded" if "unreachable" in values else "busy" if "busy" in values else "ok"
        work = self._loop()
        return {
            "status": status,
            "ready": self.ready,
            "warming": list(self._warming),
            "version": __version__,
            "checks": checks,
            "work": {"running": work.running, "waiting": work.waiting, "max_concurrent_runs": work.max_runs},
            "components": dict(self.description),
            "tenant_key": TENANT_KEY,
            "took_ms": round((time.perf_counter() - started) * 1000, 3),
        }


def _edges_among_pages(
    heads: Mapping[str, int | None],
    own: Mapping[str, list[int]],
    pages: Mapping[str, list[int]],
    names: Sequence[str],
    external: Mapping[str, str | None],
    columns: Any,
    typed: Mapping[str, Any],
    untyped: Any,
) -> list[dict[str, Any]]:
    """Typed edges between the results, from the relations among their pages (CPU: off the loop).

    ``heads[page]`` is the page's adjacency position, ``own[page]`` the positions of the page
    and of its results, ``pages[page]`` the indexes of its results (``names`` are the results'
    client ids). The page's other passages (the sources of ``PART_OF`` relations to it) are
    found in ``columns``, the ``PART_OF`` matrix by column (or ``None``).
    """
    owner: dict[int, str] = {}
    for page, positions in own.items():
        for p in positions:
            owner.setdefault(p, page)
        head = heads[page]
        if columns is not None and head is not None:
            start, stop = columns.indptr[head], columns.indptr[head + 1]
            for p in columns.indices[start:stop].tolist():
                owner.setdefault(int(p), page)
    rows = np.array(sorted(owner), dtype=np.int64)
    found: dict[tuple[str, str, str], float] = {}
    seen: set[tuple[str, str]] = set()

    def collect(rel_type: str, matrix: Any, skip_seen: bool) -> None:
        sub = matrix[rows][:, rows].tocoo()
        for s, t, w in zip(sub.row.tolist(), sub.col.tolist(), sub.data.tolist(), strict=True):
            a, b = owner[int(rows[s])], owner[int(rows[t])]
            if a == b or (skip_seen and (a, b) in seen):
                continue
            if not skip_seen:
                seen.add((a, b))
            key = (a, b, rel_type)
            found[key] = max(found.get(key, 0.0), float(w))

    for rel_type, matrix in typed.items():
        collect(rel_type, matrix, skip_seen=False)
    collect("OTHER", untyped, skip_seen=True)  # related by types this server does not know by name
    edges: list[dict[str, Any]] = []
    for (a, b, rel_type), weight in sorted(found.items(), key=lambda kv: (min(pages[kv[0][0]]), kv[0])):
        for i in pages[a]:
            for j in pages[b]:
                edge: dict[str, Any] = {"source": names[i], "target": names[j], "type": rel_type, "weight": weight}
                if names[i] != external[a] or names[j] != external[b]:
                    edge["pages"] = [external[a], external[b]]
                edges.append(edge)
    return edges


def _graph_numbers(positions: Sequence[int], typed: Mapping[str, Any], untyped: Any) -> dict[str, Any]:
    """Relations by type and the degree distribution among ``positions`` (CPU: off the loop)."""
    rows = np.array(positions, dtype=np.int64)
    by_type: dict[str, int] = {}
    for rel_type, matrix in typed.items():
        n = int(matrix[rows][:, rows].nnz) if len(rows) else 0
        if n:
            by_type[rel_type] = n
    sub = untyped[rows][:, rows] if len(rows) else None
    relations = sum(by_type.values())
    if sub is not None:
        # Pairs related only by types this server does not know by name.
        present = (sub != 0).astype(np.int8)
        for t in typed:
            present = present - (typed[t][rows][:, rows] != 0).astype(np.int8)
        other = int((present.tocsr().data > 0).sum())
        if other:
            by_type["OTHER"] = other
            relations += other
        sym = (sub != 0).astype(np.int8)
        sym = ((sym + sym.T) != 0).astype(np.int8)
        degrees = np.asarray(sym.sum(axis=1)).ravel()
    else:
        degrees = np.zeros(0, dtype=np.int64)
    distribution = {}
    for low, high in _DEGREE_BUCKETS:
        mask = degrees >= low if high is None else (degrees >= low) & (degrees <= high)
        label = f"{low}+" if high is None else (str(low) if low == high else f"{low}-{high}")
        distribution[label] = int(mask.sum())
    return {
        "relations": relations,
        "relations_by_type": dict(sorted(by_type.items())),
        "degree": {
            "distribution": distribution,
            "max": int(degrees.max()) if len(degrees) else 0,
            "mean": float(degrees.mean()) if len(degrees) else 0.0,
        },
    }

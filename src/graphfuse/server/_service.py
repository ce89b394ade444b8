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

from .. import __version__, presets
from .._core._capabilities import DocumentListing
from .._core._errors import GraphFuseError, InvalidInput, StageFailed
from .._core._filters import MetadataFilter
from .._core._protocols import Embedder, GraphStore, Reranker, VectorStore
from .._core._types import KIND_KEY, Result
from .._retrieval._pipeline import Pipeline
from .._retrieval._result_cache import ResultCache
from ..compare import basic_rag, graphrag, llm_only
from ..context import FORMATS, aretrieve_context, get_token_counter
from ..indexing import (
    Indexer,
    SourceRecord,
    TitleLinker,
    metadata_aliases,
)
from ..multihop import CorpusCache, acorpus_inputs
from ..plugins import Components, build_pipeline
from ..rerankers import EmbeddingReranker
from ._graph_view import GraphView
from ._limits import Limits
from ._options import check_scorer, check_stages
from ._problems import Problem
from ._scope import TENANT_KEY, Scope
from ._session import SessionStats
from ._work import WorkLoop

__all__ = ["Service"]

T = TypeVar("T")

logger = logging.getLogger("graphfuse.server")

_WARM_UP_QUERY = "How do I get started?"
_HEALTH_START = 1.0  # seconds /health waits for the work loop to take its store probes up
_HEALTH_PROBE = 5.0  # seconds each store probe may take


class _Scoped:
    """A pipeline whose contexts are always assembled within one tenant's filter."""

    def __init__(self, pipeline: Pipeline, flt: MetadataFilter | None) -> None:
        self._pipeline = pipeline
        self._filter = flt

    async def acontext(self, query: str, **options: Any) -> Any:
        return await aretrieve_context(self._pipeline, query, filter=self._filter, **options)

    def __repr__(self) -> str:
        return repr(self._pipeline)


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
    default_preset: str = presets.DEFAULT_PRESET
    limits: Limits = field(default_factory=Limits)
    description: Mapping[str, str] = field(default_factory=dict)
    _generation: int = 0
    _pipelines: dict[str, _Built] = field(default_factory=dict)
    _build_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _building: dict[str, asyncio.Future[Pipeline]] = field(default_factory=dict)
    _preset_names: tuple[str, ...] = field(default_factory=lambda: tuple(presets.names()))
    _write_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _writers: dict[str | None, _Writer] = field(default_factory=dict)
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
        self._graph_view = GraphView(self.graph)
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
                await aretrieve_context(pipeline, _WARM_UP_QUERY, budget=500, format="passages", top_k=5, cache=False)
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
            options.update(await acorpus_inputs(self.graph, cache=self.corpus_cache))
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
            ctx = await aretrieve_context(
                pipeline,
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

    async def subgraph(self, scope: Scope, results: Sequence[Result]) -> dict[str, Any]:
        """The relations among ``results`` (all in ``scope``): :meth:`GraphView.subgraph`."""
        return await self._graph_view.subgraph(scope, results)

    async def graph_stats(self, scope: Scope) -> dict[str, Any]:
        """Documents, chunks, entity nodes, relations by type and degrees of ``scope``: :meth:`GraphView.stats`."""
        return await self._graph_view.stats(scope)

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

"""The FastAPI application: its routes, authentication and the answers to errors raised in them.

The guards before routing (body limits, host names) are in ``_guards``; the problem documents
the answers are, in ``_problems``.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import PurePath
from typing import Annotated, Any, TypeVar

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import __version__
from .._core._errors import GraphFuseError, InvalidInput
from .._keys import KeyFile
from .._retrieval._pipeline import Pipeline
from ..indexing import SourceRecord, reserved_key
from ._guards import BodyLimit, LoopbackHosts, loopback_host
from ._metrics import HttpMetrics, render
from ._problems import Problem, field_of, from_graphfuse, problem_response
from ._samples import store_questions
from ._schemas import CompareRequest, ContextRequest, IngestRequest, IngestResponse, RetrieveRequest, RetrieveResponse
from ._scope import Scope
from ._service import Service

__all__ = ["create_app", "loopback_host"]

T = TypeVar("T")

logger = logging.getLogger("graphfuse.server")


async def _within(seconds: float, work: Awaitable[T]) -> T:
    """``work`` with a deadline of ``seconds``: past it, a 504 (work already in a thread may finish later)."""
    try:
        return await asyncio.wait_for(work, timeout=seconds)
    except asyncio.TimeoutError as exc:
        raise Problem(504, f"the request did not finish within {seconds:g} s") from exc


def _scope_of(request: Request) -> Scope:
    """The tenant of the request's key (401 without a valid one); the whole store without keys."""
    keys: KeyFile | None = request.app.state.keys
    if keys is None:
        return Scope(None)
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    unauthorized = {"WWW-Authenticate": 'Bearer realm="graphfuse"'}
    if scheme.lower() != "bearer" or not token.strip():
        raise Problem(401, "an API key is required: send 'Authorization: Bearer <key>'", headers=unauthorized)
    tenant = keys.tenant_for(token.strip())
    if tenant is None:
        raise Problem(401, "the API key is not valid", headers=unauthorized)
    return Scope(tenant)


Tenant = Annotated[Scope, Depends(_scope_of)]


def _has_key(request: Request) -> bool:
    """Whether the request carries a current API key (never on a server without keys)."""
    keys: KeyFile | None = request.app.state.keys
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if keys is None or scheme.lower() != "bearer":
        return False
    try:
        return keys.tenant_for(token.strip()) is not None
    except GraphFuseError:  # a damaged key file: /health still answers, without the path
        return False


def create_app(
    service: Service,
    *,
    keys: KeyFile | None = None,
    sample_questions: Sequence[str] = (),
    on_shutdown: Callable[[], Awaitable[None]] | None = None,
) -> FastAPI:
    """The HTTP API (and dashboard) over ``service``.

    Routes answer on the server's loop; the work a request causes runs on the service's work
    loop (:meth:`Service.run`), retrieval, context and compare as one of its
    ``limits.max_concurrent_runs`` pipeline runs.

    With ``keys``, every ``/v1`` route needs ``Authorization: Bearer <key>`` and acts for the
    key's tenant only; without, the whole store is served (bind such a server to loopback
    only: ``graphfuse serve`` refuses anything else). ``on_shutdown`` runs after the last
    request in flight finished (close the store there).
    """

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        if on_shutdown is not None:
            done = on_shutdown

            async def shut_down() -> None:
                await done()

            await service.run(shut_down())
        await service.aclose()

    app = FastAPIOffline(
        title="GraphFuse",
        version=__version__,
        description="Graph-aware retrieval over one store. Every `/v1` route acts for the tenant of the API key.",
        lifespan=lifespan,
        redoc_url=None,
    )
    metrics = HttpMetrics()
    limits = service.limits

    # -- errors ----------------------------------------------------------------------------

    @app.exception_handler(Problem)
    async def on_problem(request: Request, exc: Problem) -> JSONResponse:
        return problem_response(exc)

    @app.exception_handler(RequestValidationError)
    async def on_validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [{"field": field_of(e.get("loc", ())), "message": str(e.get("msg", "invalid"))} for e in exc.errors()]
        first = errors[0] if errors else {"field": "body", "message": "invalid request"}
        problem = Problem(422, f"{first['field']}: {first['message']}", field=first["field"], extra={"errors": errors})
        return problem_response(problem)

    @app.exception_handler(StarletteHTTPException)
    async def on_http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = exc.detail if isinstance(exc.detail, str) else "error"
        return problem_response(Problem(exc.status_code, detail, headers=dict(exc.headers or {})))

    @app.exception_handler(GraphFuseError)
    async def on_graphfuse(request: Request, exc: GraphFuseError) -> JSONResponse:
        problem = from_graphfuse(exc)
        if problem.status >= 500:
            problem.extra["error_id"] = uuid.uuid4().hex[:12]
            logger.error("request %s failed [%s]", request.url.path, problem.extra["error_id"], exc_info=exc)
        return problem_response(problem)

    @app.exception_handler(Exception)
    async def on_unexpected(request: Request, exc: Exception) -> JSONResponse:
        error_id = uuid.uuid4().hex[:12]
        logger.error("request %s failed [%s]", request.url.path, error_id, exc_info=exc)
        problem = Problem(500, "internal error; the server's log has the details", extra={"error_id": error_id})
        return problem_response(problem)

    # -- metrics middleware ----------------------------------------------------------------

    @app.middleware("http")
    async def observe(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        started = time.perf_counter()
        status = 500
        try:
            response = await call_next(request)
            status = response.status_code
            return response
        finally:
            route = request.scope.get("route")
            path = getattr(route, "path", None)
            metrics.observe(
                request.method, path if isinstance(path, str) else None, status, time.perf_counter() - started
            )

    # -- authentication --------------------------------------------------------------------

    app.state.keys = keys

    # -- routes ----------------------------------------------------------------------------

    @app.get("/health", tags=["server"])
    async def health(request: Request) -> dict[str, Any]:
        """Version, and whether the store's backends answer (the store's path only to a valid key)."""
        report = await service.health()
        report["auth"] = "api-keys" if keys is not None else "none (loopback only)"
        components = report.get("components")
        if isinstance(components, dict) and isinstance(components.get("store"), str) and not _has_key(request):
            # Where the store lives tells a caller about the machine: a key-less server names
            # only the directory, a server with keys nothing without a valid one.
            if keys is None:
                components["store"] = PurePath(components["store"]).name
            else:
                del components["store"]
        return report

    @app.get("/metrics", tags=["server"], response_class=Response)
    async def prometheus() -> Response:
        """Prometheus metrics: the pipeline's stage and run metrics, HTTP requests."""
        return Response(render(metrics), media_type="text/plain; version=0.0.4; charset=utf-8")

    @app.get("/v1/samples", tags=["dashboard"])
    async def samples(scope: Tenant) -> dict[str, Any]:
        """Sample questions for the dashboard (made from the tenant's documents when the server was
        given none), and the server's presets."""
        questions = list(sample_questions) or await service.run(store_questions(service.graph, scope))
        return {
            "questions": questions,
            "presets": list(service.preset_names),
            "default_preset": service.default_preset,
            "tenant": scope.tenant,
        }

    @app.post("/v1/retrieve", tags=["retrieval"], response_model=RetrieveResponse)
    async def retrieve(body: RetrieveRequest, scope: Tenant) -> dict[str, Any]:
        """Ranked results with every signal, for the key's tenant only."""
        limits.check_query(body.query)
        limits.check_top_k(body.top_k)
        limits.check_filter(body.filter)
        return await _within(limits.request_timeout, service.run(run_retrieve(body, scope), limited=True))

    async def run_retrieve(body: RetrieveRequest, scope: Scope) -> dict[str, Any]:
        started = time.perf_counter()
        pipeline, name = await chosen_pipeline(body)
        results, out = await service.retrieve(
            scope,
            pipeline,
            body.query,
            top_k=body.top_k,
            client_filter=body.filter,
            granularity=body.granularity,
            max_per_document=body.max_per_document,
            cache=not body.no_cache,
        )
        response: dict[str, Any] = {
            "results": out,
            "pipeline": name,
            "took_ms": round((time.perf_counter() - started) * 1000, 3),
        }
        if body.graph:
            response["graph"] = await service.subgraph(scope, results)
        return response

    @app.post("/v1/ingest", tags=["documents"], response_model=IngestResponse)
    async def ingest(body: IngestRequest, scope: Tenant) -> dict[str, Any]:
        """Index documents (idempotent by id); stored durably when this answers 200."""
        if not body.documents:
            raise Problem.invalid("documents", "documents must not be empty")
        if len(body.documents) > limits.max_documents:
            raise Problem.invalid(
                "documents", f"at most {limits.max_documents} documents per request, got {len(body.documents)}"
            )
        records = []
        seen: set[str] = set()
        for i, doc in enumerate(body.documents):
            where = f"documents[{i}]"
            if doc.id in seen:
                raise Problem.invalid(f"{where}.id", f"document id {doc.id!r} appears twice in this request")
            seen.add(doc.id)
            for key in doc.metadata:
                if reserved_key(key):
                    raise Problem.invalid(
                        f"{where}.metadata.{key}",
                        "metadata keys 'parent_id' and 'graphfuse_*' are reserved for GraphFuse's bookkeeping",
                    )
            try:
                record = SourceRecord(
                    id=doc.id,
                    text=doc.text,
                    title=doc.title or None,
                    metadata=doc.metadata,
                    created_at=doc.created_at,
                    links=tuple(doc.links),
                )
            except InvalidInput as exc:
                raise Problem.invalid(where, str(exc)) from exc
            if "#" in doc.id and doc.id.rsplit("#", 1)[1].isdigit():
                raise Problem.invalid(f"{where}.id", f"id {doc.id!r} looks like a chunk id ('<id>#<n>' is reserved)")
            records.append(scope.stamp(record, where))
        return await _within(limits.write_timeout, service.run(service.ingest(scope, records)))

    async def chosen_pipeline(body: RetrieveRequest | ContextRequest) -> tuple[Pipeline, str]:
        if body.preset is not None and body.stages is not None:
            raise Problem.invalid("stages", "give either 'preset' or 'stages', not both")
        if body.scorer is not None and body.stages is None:
            raise Problem.invalid("scorer", "'scorer' goes with 'stages'")
        if body.stages is not None:
            return await service.spec_pipeline(body.stages, body.scorer), "stages"
        name = body.preset or service.default_preset
        return await service.pipeline(name), name

    @app.post("/v1/context", tags=["retrieval"])
    async def context(body: ContextRequest, scope: Tenant) -> dict[str, Any]:
        """The context an LLM would read: retrieved, then assembled within ``budget`` tokens."""
        limits.check_query(body.query)
        limits.check_budget(body.budget)
        limits.check_filter(body.filter)
        if body.top_k is not None:
            limits.check_top_k(body.top_k)
        return await _within(limits.request_timeout, service.run(run_context(body, scope), limited=True))

    async def run_context(body: ContextRequest, scope: Scope) -> dict[str, Any]:
        started = time.perf_counter()
        pipeline, name = await chosen_pipeline(body)
        out = await service.context(
            scope,
            pipeline,
            name,
            body.query,
            budget=body.budget,
            format=body.format,
            top_k=body.top_k,
            client_filter=body.filter,
            cache=not body.no_cache,
            history=[t.model_dump() for t in body.history or ()],
        )
        out["pipeline"] = name
        out["took_ms"] = round((time.perf_counter() - started) * 1000, 3)
        return out

    @app.get("/v1/stats/session", tags=["comparison"])
    async def session_stats(scope: Tenant) -> dict[str, Any]:
        """Tokens per pipeline since the server started, and tokens saved against basic RAG."""
        return service.session.snapshot(scope.tenant)

    @app.post("/v1/compare", tags=["comparison"])
    async def compare(body: CompareRequest, scope: Tenant) -> dict[str, Any]:
        """LLM only, basic RAG and GraphRAG answers side by side, judged (needs an LLM configured at start)."""
        limits.check_query(body.question, "question")
        limits.check_budget(body.budget)
        work = service.compare(scope, body.question, gold=body.answer, budget=body.budget)
        return await _within(limits.request_timeout, service.run(work, limited=True))

    @app.delete("/v1/documents/{doc_id:path}", tags=["documents"])
    async def delete(doc_id: str, scope: Tenant) -> dict[str, Any]:
        """Delete a document with its chunks, vectors and relations (404 if it is not the tenant's)."""
        return await _within(limits.write_timeout, service.run(service.delete(scope, doc_id)))

    @app.get("/v1/graph/stats", tags=["graph"])
    async def graph_stats(scope: Tenant) -> dict[str, Any]:
        """Documents, relations by type and the degree distribution of the tenant's graph."""
        return await _within(limits.request_timeout, service.run(service.graph_stats(scope)))

    static = resources.files("graphfuse.server") / "static"
    with resources.as_file(static) as directory:
        app.mount("/", StaticFiles(directory=str(directory), html=True), name="dashboard")

    # Metric labels name only the routes that exist (an invented path is "unmatched").
    metrics.routes = frozenset(p for r in app.routes if isinstance(p := getattr(r, "path", None), str) and p)
    app.add_middleware(
        BodyLimit,
        limit=limits.max_request_bytes,
        ingest_limit=limits.max_body_bytes,
        timeout=limits.body_timeout,
    )
    if keys is None:
        app.add_middleware(LoopbackHosts)
    return app

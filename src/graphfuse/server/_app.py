"""The FastAPI application: routes, authentication, limits and error answers."""

from __future__ import annotations

import asyncio
import ipaddress
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
from starlette.types import ASGIApp, Message, Receive, Send
from starlette.types import Scope as AsgiScope

from .. import __version__
from .._core._errors import (
    AuthenticationFailed,
    ConnectionFailed,
    DeadlineExceeded,
    GraphFuseError,
    InvalidInput,
    NotFound,
    PermissionDenied,
    RateLimited,
    StageFailed,
    StoreCorrupted,
)
from .._keys import KeyFile, KeyFileDamaged
from .._retrieval._pipeline import Pipeline
from ..indexing import SourceRecord, reserved_key
from ._metrics import HttpMetrics, render
from ._problems import PROBLEM_JSON, Problem
from ._samples import store_questions
from ._schemas import CompareRequest, ContextRequest, IngestRequest, IngestResponse, RetrieveRequest, RetrieveResponse
from ._scope import Scope
from ._service import Service

__all__ = ["create_app", "loopback_host"]

T = TypeVar("T")

logger = logging.getLogger("graphfuse.server")


def _problem_response(problem: Problem) -> JSONResponse:
    return JSONResponse(problem.body(), status_code=problem.status, media_type=PROBLEM_JSON, headers=problem.headers)


def _field(loc: Sequence[Any]) -> str:
    parts = list(loc)
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:]
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + str(p)
    return out or "body"


def _from_graphfuse(exc: GraphFuseError) -> Problem:
    # Server-side faults, never the client's (also when a stage met them): the details (file
    # names) go to the server's log only.
    cause = exc.cause if isinstance(exc, StageFailed) else exc
    if isinstance(cause, KeyFileDamaged):
        return Problem(500, "the server's API key file is damaged; the server's log names it")
    if isinstance(cause, StoreCorrupted):
        return Problem(500, "store damaged: run `graphfuse check` on the server's store (its log names the file)")
    if isinstance(cause, PermissionDenied):
        return Problem(500, "the server may not read or write a file it needs (permission denied); its log names it")
    if isinstance(exc, StageFailed) and isinstance(exc, (InvalidInput, NotFound)):
        # Data a stage met (a store's, a provider's), not the request: a fault of the server.
        return Problem(500, "the request failed inside the retrieval pipeline")
    if isinstance(exc, InvalidInput):
        return Problem(422, str(exc))
    if isinstance(exc, NotFound):
        return Problem(404, str(exc))
    if isinstance(exc, DeadlineExceeded):
        return Problem(504, "the request did not finish in time")
    if isinstance(exc, RateLimited):
        headers = {} if exc.retry_after is None else {"Retry-After": str(max(1, round(exc.retry_after)))}
        return Problem(503, "a backend is rate limiting this server; try again later", headers=headers)
    if isinstance(exc, (ConnectionFailed, AuthenticationFailed)):
        return Problem(503, "a backend of this server is unavailable")
    return Problem(500, "the request failed inside the retrieval pipeline")


class _BodyLimit:
    """Answer 413 to a body larger than the route's limit (declared or streamed), 408 to a slow one.

    ``/v1/ingest`` may send ``ingest_limit`` bytes (documents), every other route ``limit``
    (a query and its options). The whole body must arrive within ``timeout`` seconds of the
    headers, however slowly it trickles in (a deadline for the body, not a timer each byte
    resets). Both answers close the connection: the rest of the body is not read.
    """

    def __init__(self, app: ASGIApp, limit: int, ingest_limit: int, timeout: float) -> None:
        self.app = app
        self.limit = limit
        self.ingest_limit = ingest_limit
        self.timeout = timeout

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.ingest_limit if scope.get("path") == "/v1/ingest" else self.limit
        too_large = Problem(413, f"the request body is larger than {limit} bytes", field="body", headers=_CLOSE)
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > limit:
                    await _problem_response(too_large)(scope, receive, send)
                    return
        # Read the body here, up to the limit, then hand it on: a body cut off part-way
        # must be a 413, not a parse error further in.
        deadline = asyncio.get_running_loop().time() + self.timeout
        chunks: list[bytes] = []
        seen = 0
        more = True
        while more:
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - asyncio.get_running_loop().time()))
            except asyncio.TimeoutError:
                slow = Problem(
                    408, f"the request body did not arrive within {self.timeout:g} s", field="body", headers=_CLOSE
                )
                await _problem_response(slow)(scope, receive, send)
                return
            if message["type"] == "http.disconnect":
                return  # the client left: nobody to answer
            if message["type"] != "http.request":
                await self.app(scope, _replay([], message), send)
                return
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > limit:
                await _problem_response(too_large)(scope, receive, send)
                return
            chunks.append(chunk)
            more = bool(message.get("more_body", False))
        await self.app(scope, _replay(chunks, None, receive), send)


_CLOSE = {"Connection": "close"}


def loopback_host(host: str) -> bool:
    """Whether a ``Host`` header names this machine's loopback: ``localhost``, 127.0.0.0/8, ``[::1]``, any port."""
    host = host.strip().lower()
    if host.startswith("["):
        name, bracket, rest = host[1:].partition("]")
        if not bracket or (rest and not (rest.startswith(":") and rest[1:].isdigit())):
            return False
    else:
        name, colon, port = host.partition(":")
        if colon and not port.isdigit():
            return False
    if name.rstrip(".") == "localhost":
        return True
    try:
        # A literal address cannot be rebound: any loopback one (127.0.0.0/8, ::1) is this machine.
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class _LoopbackHosts:
    """Without keys, answer only requests addressed to a loopback name (DNS rebinding).

    A web page can make its own host name resolve to 127.0.0.1 and so reach a local server
    from the user's browser; the browser still sends the page's name as ``Host``. A server
    without keys serves the whole store, so it refuses any other ``Host`` with a 421.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        hosts = [value.decode("latin-1") for name, value in scope.get("headers", []) if name == b"host"]
        if len(hosts) == 1 and loopback_host(hosts[0]):
            await self.app(scope, receive, send)
            return
        problem = Problem(
            421,
            "this server has no API keys and answers only requests addressed to localhost or a loopback address "
            "(127.0.0.1, [::1]); "
            "start it with --keys to serve other host names",
            field="host",
        )
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        await _problem_response(problem)(scope, receive, send)


async def _within(seconds: float, work: Awaitable[T]) -> T:
    """``work`` with a deadline of ``seconds``: past it, a 504 (work already in a thread may finish later)."""
    try:
        return await asyncio.wait_for(work, timeout=seconds)
    except asyncio.TimeoutError as exc:
        raise Problem(504, f"the request did not finish within {seconds:g} s") from exc


def _replay(chunks: list[bytes], final: Message | None, receive: Receive | None = None) -> Receive:
    """A ``receive`` that gives the buffered body once, then what the client sends next."""
    pending: list[Message] = (
        [{"type": "http.request", "body": b"".join(chunks), "more_body": False}] if chunks or final is None else []
    )
    if final is not None:
        pending.append(final)

    async def replay() -> Message:
        if pending:
            return pending.pop(0)
        if receive is not None:
            return await receive()
        return {"type": "http.disconnect"}

    return replay


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
        return _problem_response(exc)

    @app.exception_handler(RequestValidationError)
    async def on_validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [{"field": _field(e.get("loc", ())), "message": str(e.get("msg", "invalid"))} for e in exc.errors()]
        first = errors[0] if errors else {"field": "body", "message": "invalid request"}
        problem = Problem(422, f"{first['field']}: {first['message']}", field=first["field"], extra={"errors": errors})
        return _problem_response(problem)

    @app.exception_handler(StarletteHTTPException)
    async def on_http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = exc.detail if isinstance(exc.detail, str) else "error"
        return _problem_response(Problem(exc.status_code, detail, headers=dict(exc.headers or {})))

    @app.exception_handler(GraphFuseError)
    async def on_graphfuse(request: Request, exc: GraphFuseError) -> JSONResponse:
        problem = _from_graphfuse(exc)
        if problem.status >= 500:
            problem.extra["error_id"] = uuid.uuid4().hex[:12]
            logger.error("request %s failed [%s]", request.url.path, problem.extra["error_id"], exc_info=exc)
        return _problem_response(problem)

    @app.exception_handler(Exception)
    async def on_unexpected(request: Request, exc: Exception) -> JSONResponse:
        error_id = uuid.uuid4().hex[:12]
        logger.error("request %s failed [%s]", request.url.path, error_id, exc_info=exc)
        problem = Problem(500, "internal error; the server's log has the details", extra={"error_id": error_id})
        return _problem_response(problem)

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
        _BodyLimit,
        limit=limits.max_request_bytes,
        ingest_limit=limits.max_body_bytes,
        timeout=limits.body_timeout,
    )
    if keys is None:
        app.add_middleware(_LoopbackHosts)
    return app

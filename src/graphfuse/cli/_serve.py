"""``graphfuse serve``: the HTTP API and dashboard over one store (needs ``graphfuse[server]``)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib.util
import ipaddress
import json
import os
import socket
from pathlib import Path
from typing import Annotated, Any

import typer

from .. import ResultCache
from .._core._errors import InvalidInput
from ..plugins import get_registry
from ..stores import DEFAULT_STORE, aopen_store
from ._errors import err_console, reports_errors

__all__ = ["is_loopback", "register"]


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _read_questions(path: Path) -> list[str]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"--questions {str(path)!r} is unreadable ({exc})") from exc
    out = []
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line:
            continue
        if line.startswith("{"):
            try:
                row: Any = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"{path}:{n}: not valid JSON ({exc.msg})") from exc
            if not isinstance(row, dict) or not isinstance(row.get("question"), str):
                raise InvalidInput(f"{path}:{n}: a JSON line needs a 'question' string")
            line = row["question"]
        out.append(line)
    return out


_RESERVED_FILES = 64  # descriptors kept for the store, the model, the log and the work loop's threads
_OPEN_FILES = 65536  # the soft open-file limit `graphfuse serve` raises itself to, when the hard one allows


def _fit_open_files(max_connections: int | None) -> None:
    """Raise the soft open-file limit toward the hard one (as Go's runtime does), then refuse a
    --max-connections that the limit cannot hold.

    Past the limit, accepting a connection fails, and nobody, /health included, is answered.
    The default connection limit (a quarter of the soft limit) always fits.
    """
    try:
        import resource
    except ImportError:  # not on POSIX: nothing to check
        return
    from ..server import ConnectionLimits

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or soft < hard):
        raised = _OPEN_FILES if hard == resource.RLIM_INFINITY else min(hard, _OPEN_FILES)
        if raised > soft:
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            soft = raised
    if max_connections is None or soft == resource.RLIM_INFINITY:
        return
    needed = ConnectionLimits(max_connections=max_connections).descriptors_needed() + _RESERVED_FILES
    if needed > soft:
        raise InvalidInput(
            f"--max-connections {max_connections} needs about {needed} open files, "
            f"more than this process may open (ulimit -n: {soft}); lower it or raise the limit"
        )


async def _bundled_questions(graph: Any) -> list[str]:
    """The bundled sample's questions, when the store holds the bundled sample (the demo store)."""
    from ..data import sample_questions

    questions = sample_questions()
    gold = sorted({g for q in questions[:3] for g in q.gold_ids})
    found = await graph.get_documents(gold)
    return [q.question for q in questions] if len(found) == len(gold) else []


_MEMORY_RESULTS = 1024  # entries of the in-process result cache


def _result_cache(name: str, ttl: float, unversioned: bool, store: Any) -> tuple[Any, str]:
    """The ResultCache ``--result-cache`` asks for (``None`` for ``off``) and a line saying what it is."""

    if name == "off":
        return None, "result cache off"
    stores = [store.graph, store.vectors]
    if not unversioned and not all(callable(getattr(s, "generation", None)) for s in stores):
        return None, (
            "result cache off: this store's backends cannot say when they were written to; "
            "--result-cache-unversioned caches anyway, for --result-cache-ttl seconds at most"
        )
    options: dict[str, Any] = {"max_items": _MEMORY_RESULTS} if name == "memory" else {}
    cache_store = get_registry().create("cache_store", name, **options)
    # Processes serving this directory on this host share entries (through Redis); no one else does.
    place = f"{socket.gethostname()}:{os.path.realpath(store.path)}"
    namespace = "serve-" + hashlib.sha256(place.encode("utf-8")).hexdigest()[:16]
    cache = ResultCache(cache_store, stores, ttl=ttl, namespace=namespace, allow_unversioned=unversioned)
    bound = "" if cache.versioned else ", writes not seen until then"
    return cache, f"result cache {name!r} (ttl {ttl:g} s{bound})"


async def _serve(
    store_dir: str,
    host: str,
    port: int,
    keys_path: str | None,
    preset: str | None,
    questions: list[str] | None,
    llm: str | None,
    judge: str | None,
    limits: Any,
    connections: Any,
    result_cache: tuple[str, float, bool] = ("memory", 300.0, False),
    llm_base_url: str | None = None,
    llm_timeout: float | None = None,
) -> None:
    from ..multihop import CorpusCache
    from ..server import KeyFile, Service, WorkLoop, create_app, http_server, install_prometheus_exporter

    keys = KeyFile(keys_path) if keys_path is not None else None
    if keys is not None and not keys.tenants():
        raise InvalidInput(
            f"key file {keys_path!r} holds no keys: add one with `graphfuse keys add --keys {keys_path} --tenant NAME`"
        )
    generator = judge_generator = None
    if llm is not None:
        from ..compare import Judge
        from ._compare import build_generator

        generator = build_generator(llm, "--llm", base_url=llm_base_url, timeout=llm_timeout)
        if judge is not None:
            judge_generator = Judge(build_generator(judge, "--judge", base_url=llm_base_url, timeout=llm_timeout))
        else:
            judge_generator = Judge(generator)
    elif judge is not None:
        raise InvalidInput("--judge needs --llm: the judge grades the answers the --llm model gives")
    install_prometheus_exporter()
    # Everything that touches the store runs on the service's work loop, from opening it on:
    # components whose clients belong to the loop that first used them always see that one.
    work = WorkLoop(limits.max_concurrent_runs)
    store = await work.run(aopen_store(store_dir, create=False))
    try:

        async def prepare() -> tuple[Service, list[str]]:
            # The embedded store keeps multihop's BM25/title indexes on disk; plugin stores are read back.
            cache = CorpusCache(store.path) if await store.arefresh_corpus_indexes() else None
            results, results_note = _result_cache(*result_cache, store)
            err_console.print(results_note, markup=False)
            service = Service(
                store.graph,
                store.vectors,
                store.embedder,
                default_preset=preset or store.default_preset,
                limits=limits,
                generator=generator,
                judge=judge_generator,
                description={"store": str(store.path), **store.components, "result_cache": results_note},
                corpus_cache=cache,
                work=work,
                result_cache=results,
            )
            await service.pipeline(service.default_preset)  # fail before listening
            found = questions if questions is not None else await _bundled_questions(store.graph)
            return service, found

        service, samples = await work.run(prepare())
    except BaseException:
        await work.run(store.aclose())
        await work.aclose()
        raise
    # The model, the token counter and the dashboard's presets load while the server listens:
    # /health says "ready": false until they have.
    service.start_warm_up()

    async def close() -> None:
        try:
            if service.result_cache is not None:
                await service.result_cache.cache_store.close()
        finally:
            await store.aclose()

    app = create_app(service, keys=keys, sample_questions=samples, on_shutdown=close)
    server = http_server(
        app,
        limits=connections,
        host=host,
        port=port,
        log_level="info",
        timeout_graceful_shutdown=30,
        server_header=False,
    )
    err_console.print(
        f"serving {store_dir} on http://{host}:{port}/ (dashboard at /, API docs at /docs); "
        f"{'API keys from ' + str(keys_path) if keys else 'no API keys: loopback only'}; "
        f"at most {connections.connection_limit()} connections, request headers within "
        f"{connections.header_timeout:g} s and bodies within {limits.body_timeout:g} s",
        markup=False,
    )
    await server.serve()


@reports_errors
def serve(
    store: Annotated[str, typer.Option("--store", help="Store directory to serve.")] = DEFAULT_STORE,
    host: Annotated[str, typer.Option("--host", help="Address to bind (non-loopback needs --keys).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to listen on.")] = 8000,
    keys: Annotated[
        str | None, typer.Option("--keys", help="Key file (`graphfuse keys add`); every /v1 request then needs a key.")
    ] = None,
    preset: Annotated[
        str | None,
        typer.Option(
            "--preset",
            help="Default preset of /v1/retrieve (default: multihop, or standard on a store whose graph store "
            "cannot list its documents).",
            show_default=False,
        ),
    ] = None,
    questions: Annotated[
        str | None, typer.Option("--questions", help="Sample questions for the dashboard: one per line, or JSONL.")
    ] = None,
    llm: Annotated[
        str | None, typer.Option("--llm", help="Answer model for /v1/compare, NAME:MODEL (e.g. openai:gpt-4o-mini).")
    ] = None,
    judge: Annotated[
        str | None, typer.Option("--judge", help="Judge model, NAME:MODEL (default: the --llm model).")
    ] = None,
    header_timeout: Annotated[
        float,
        typer.Option(
            "--header-timeout",
            min=0.1,
            max=3600,
            help="Seconds a client has to send a request's headers, however slowly (then 408, closed).",
        ),
    ] = 10.0,
    body_timeout: Annotated[
        float,
        typer.Option(
            "--body-timeout",
            min=0.1,
            max=3600,
            help="Seconds a client has to send a request's whole body after its headers (then 408, closed).",
        ),
    ] = 60.0,
    max_connections: Annotated[
        int | None,
        typer.Option(
            "--max-connections",
            min=1,
            help="Connections open at once; one more gets a 503 (default: a quarter of `ulimit -n`, at most 1000).",
            show_default=False,
        ),
    ] = None,
    result_cache: Annotated[
        str,
        typer.Option(
            "--result-cache",
            help="Where preset results are cached: memory (in-process, 1024 entries), off, or a registered "
            "cache store (redis: URL from GRAPHFUSE_REDIS_URL).",
        ),
    ] = "memory",
    result_cache_ttl: Annotated[
        float, typer.Option("--result-cache-ttl", min=0.001, help="Seconds a cached result list lives.")
    ] = 300.0,
    result_cache_unversioned: Annotated[
        bool,
        typer.Option(
            "--result-cache-unversioned",
            help="Also cache over backends without a generation (Neo4j, Qdrant): writes show after the TTL.",
        ),
    ] = False,
    llm_base_url: Annotated[
        str | None,
        typer.Option("--llm-base-url", help="API root of an OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1."),
    ] = None,
    llm_timeout: Annotated[
        float | None, typer.Option("--llm-timeout", min=0.001, help="Seconds one model request may take.")
    ] = None,
) -> None:
    """Serve a store over HTTP: retrieval, ingest, graph statistics, metrics and a dashboard."""
    if importlib.util.find_spec("fastapi") is None or importlib.util.find_spec("uvicorn") is None:
        raise InvalidInput("`graphfuse serve` needs the server extra: pip install 'graphfuse[server]'")
    if keys is None and not is_loopback(host):
        raise InvalidInput(
            f"refusing to listen on {host!r} without API keys: anyone who can reach it could read every document; "
            "pass --keys FILE (see `graphfuse keys add`) or bind to 127.0.0.1"
        )
    qs = _read_questions(Path(questions)) if questions is not None else None
    from ..server import ConnectionLimits, Limits

    _fit_open_files(max_connections)  # before the default connection limit is read from it
    connections = ConnectionLimits(header_timeout=header_timeout, max_connections=max_connections)
    limits = Limits(body_timeout=body_timeout)
    # asyncio.run on the main thread: uvicorn installs its SIGINT/SIGTERM handlers there and
    # shuts down gracefully (requests in flight finish, then the store is closed).
    with contextlib.suppress(KeyboardInterrupt, asyncio.CancelledError):
        asyncio.run(
            _serve(
                store,
                host,
                port,
                keys,
                preset,
                qs,
                llm,
                judge,
                limits,
                connections,
                (result_cache, result_cache_ttl, result_cache_unversioned),
                llm_base_url=llm_base_url,
                llm_timeout=llm_timeout,
            )
        )


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)

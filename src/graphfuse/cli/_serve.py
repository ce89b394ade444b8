"""``graphfuse serve``: the HTTP API and dashboard over one store (needs ``graphfuse[server]``)."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import ipaddress
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from .._errors import InvalidInput
from ..stores import DEFAULT_STORE, open_store
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


async def _bundled_questions(graph: Any) -> list[str]:
    """The bundled sample's questions, when the store holds the bundled sample (the demo store)."""
    from ..data import sample_questions

    questions = sample_questions()
    gold = sorted({g for q in questions[:3] for g in q.gold_ids})
    found = await graph.get_documents(gold)
    return [q.question for q in questions] if len(found) == len(gold) else []


async def _serve(
    store_dir: str,
    host: str,
    port: int,
    keys_path: str | None,
    preset: str | None,
    questions: list[str] | None,
    llm: str | None,
    judge: str | None,
    llm_base_url: str | None = None,
    llm_timeout: float | None = None,
) -> None:
    import uvicorn

    from ..multihop import CorpusCache
    from ..server import KeyFile, Limits, Service, WorkLoop, create_app, install_prometheus_exporter

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
    work = WorkLoop(Limits().max_concurrent_runs)
    store = await work.run(open_store(store_dir, create=False))
    try:

        async def prepare() -> tuple[Service, list[str]]:
            # The embedded store keeps multihop's BM25/title indexes on disk; plugin stores are read back.
            cache = CorpusCache(store.path) if await store.refresh_corpus_indexes() else None
            service = Service(
                store.graph,
                store.vectors,
                store.embedder,
                default_preset=preset or store.default_preset,
                limits=Limits(),
                generator=generator,
                judge=judge_generator,
                description={"store": str(store.path), **store.components},
                corpus_cache=cache,
                work=work,
            )
            await service.pipeline(service.default_preset)  # fail before listening
            found = questions if questions is not None else await _bundled_questions(store.graph)
            return service, found

        service, samples = await work.run(prepare())
    except BaseException:
        await work.run(store.close())
        await work.aclose()
        raise
    # The model, the token counter and the dashboard's presets load while the server listens:
    # /health says "ready": false until they have.
    service.start_warm_up()
    app = create_app(service, keys=keys, sample_questions=samples, on_shutdown=store.close)
    config = uvicorn.Config(
        app, host=host, port=port, log_level="info", timeout_graceful_shutdown=30, server_header=False
    )
    err_console.print(
        f"serving {store_dir} on http://{host}:{port}/ (dashboard at /, API docs at /docs); "
        f"{'API keys from ' + str(keys_path) if keys else 'no API keys: loopback only'}",
        markup=False,
    )
    await uvicorn.Server(config).serve()


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
    # asyncio.run on the main thread: uvicorn installs its SIGINT/SIGTERM handlers there and
    # shuts down gracefully (requests in flight finish, then the store is closed).
    with contextlib.suppress(KeyboardInterrupt, asyncio.CancelledError):
        asyncio.run(_serve(store, host, port, keys, preset, qs, llm, judge, llm_base_url, llm_timeout))


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)

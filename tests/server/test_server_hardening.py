"""Requests cannot name server files, hold the event loop, rebind DNS or grow metrics."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
uvicorn = pytest.importorskip("uvicorn")

import httpx  # noqa: E402
from _server_world import served, uvicorn_served  # noqa: E402

from graphfuse import presets  # noqa: E402
from graphfuse.server import Limits  # noqa: E402

PROBLEM = "application/problem+json"

# Every stage that reads files takes ``corpus``; every route that takes a pipeline spec gets each.
FILE_STAGES = ("bm25", "bridge", "entity_seeds", "time")
SPEC_ROUTES = (("/v1/retrieve", {"query": "apple"}), ("/v1/context", {"query": "apple", "budget": 200}))


def _without_path(body: dict[str, Any], *paths: str) -> str:
    text = json.dumps(body, sort_keys=True)
    for p in paths:
        text = text.replace(p, "<path>")
    return text


async def test_a_spec_naming_a_server_file_is_refused_alike_whether_it_exists_or_not(tmp_path: Path) -> None:
    secret = tmp_path / "secret.jsonl"
    secret.write_text('{"id": "hidden-id-1", "text": "t"}\n')
    missing = tmp_path / "no-such-file.jsonl"
    folder = tmp_path / "private"
    folder.mkdir()
    for name in ("alpha-report.md", "beta-salaries.txt"):
        (folder / name).write_text("x\n")
    async with served(tmp_path) as w:
        for route, base in SPEC_ROUTES:
            for stage in FILE_STAGES:
                answers = []
                for path in (secret, missing, folder, "/etc/passwd", "/etc"):
                    spec = {**base, "stages": ["semantic", {"name": stage, "corpus": str(path)}]}
                    r = await w.client.post(route, json=spec, headers=w.auth("acme"))
                    assert r.status_code == 422, (route, stage, r.text)
                    assert r.headers["content-type"] == PROBLEM
                    assert r.json()["field"] == "stages[1]"
                    for leak in ("hidden-id-1", "alpha-report", "beta-salaries", "root:", "passwd", "exist"):
                        assert leak not in r.text, (route, stage, path, r.text)
                    answers.append(_without_path(r.json(), str(path)))
                # The answer is the same for a file, a missing path and a folder: it tells nothing.
                assert len(set(answers)) == 1, answers
            # Plugin, class or module names are no stage or scorer of the allow-list either.
            for stages, field in (
                (["semantic", "graphfuse._builtins:_bm25"], "stages[1]"),
                (["semantic", {"name": "graph", "pass_through": None}], "stages[1].pass_through"),
                (["semantic", {"name": "semantic", "filter": {"tenant": "globex"}}], "stages[1].filter"),
                ([{"name": "semantic", "limit": 10**9}], "stages[0].limit"),
                ([{"name": "graph", "depth": 50}], "stages[0].depth"),
            ):
                r = await w.client.post(route, json={**base, "stages": stages}, headers=w.auth("acme"))
                assert r.status_code == 422, (stages, r.text)
                assert r.json()["field"] == field
            for scorer in (
                "os:system",
                {"name": "weighted", "weights": {"semantic": "1; rm"}},
                {"name": "rrf", "k": -1},
            ):
                body = {**base, "stages": ["semantic", "hydrate"], "scorer": scorer}
                r = await w.client.post(route, json=body, headers=w.auth("acme"))
                assert r.status_code == 422, (scorer, r.text)
                assert r.json()["field"].startswith("scorer")
            r = await w.client.post(route, json={**base, "preset": str(secret)}, headers=w.auth("acme"))
            assert r.status_code == 422
            assert "hidden-id-1" not in r.text
        # What the allow-list does accept still works, bounded options included.
        spec = {
            "query": "apple orchard",
            "top_k": 5,
            "stages": [{"name": "semantic", "limit": 20}, "hydrate", {"name": "graph", "depth": 1}],
            "scorer": {"name": "weighted", "weights": {"semantic": 0.7, "graph": 0.3}},
        }
        r = await w.client.post("/v1/retrieve", json=spec, headers=w.auth("acme"))
        assert r.status_code == 200, r.text
        assert r.json()["results"]


async def test_filters_are_bounded_plain_values(tmp_path: Path) -> None:
    async with served(tmp_path, corpus=False, limits=Limits(max_filter_conditions=4, max_filter_values=3)) as w:
        for flt, field in (
            ({f"k{i}": i for i in range(5)}, "filter"),
            ({"lang": {"$in": ["a", "b", "c", "d"]}}, "filter.lang"),
            ({"lang": "x" * 2000}, "filter.lang"),
        ):
            r = await w.client.post("/v1/retrieve", json={"query": "apple", "filter": flt}, headers=w.auth("acme"))
            assert r.status_code == 422, r.text
            assert r.json()["field"] == field


async def test_oversized_bodies_get_413_on_every_route(tmp_path: Path) -> None:
    async with served(tmp_path, corpus=False) as w:
        limit = Limits().max_request_bytes
        padding = "apple " * (limit // 6 + 10)
        for route, body in (
            ("/v1/retrieve", {"query": "apple", "filter": {"note": padding}}),
            ("/v1/context", {"query": padding}),
            ("/v1/compare", {"question": padding}),
        ):
            r = await w.client.post(route, json=body, headers=w.auth("acme"))
            assert r.status_code == 413, (route, r.status_code)
            assert r.headers["content-type"] == PROBLEM
        # Ingest has its own, larger limit: documents are bigger than queries.
        r = await w.ingest("acme", [{"id": "big", "text": padding}])
        assert r.status_code == 200, r.text


# -- off the event loop, within the deadline ---------------------------------------------------


@contextmanager
def _slow_preset(name: str) -> Iterator[tuple[threading.Event, threading.Event]]:
    """A preset whose (synchronous) build blocks until ``release`` is set, as a slow model load does."""
    building, release = threading.Event(), threading.Event()

    def factory(vector_store: Any, embedder: Any) -> Any:
        building.set()
        release.wait(20)
        return presets.minimal(vector_store, embedder)

    presets.register(name, factory, needs=("vector_store", "embedder"))
    try:
        yield building, release
    finally:
        release.set()
        presets.unregister(name)


async def test_health_answers_while_a_pipeline_builds(tmp_path: Path) -> None:
    with _slow_preset("slow_build_probe") as (building, release):
        async with (
            served(tmp_path) as w,
            uvicorn_served(w.app) as base,
            httpx.AsyncClient(base_url=base, timeout=30) as client,
        ):
            body = {"query": "apple", "preset": "slow_build_probe"}
            slow = asyncio.create_task(client.post("/v1/retrieve", json=body, headers=w.auth("acme")))
            assert await asyncio.to_thread(building.wait, 20)
            # The build is under way in the server; the server's loop still answers.
            health = await client.get("/health", timeout=5)
            assert health.status_code == 200
            other = await client.post(
                "/v1/retrieve", json={"query": "apple", "preset": "minimal"}, headers=w.auth("globex"), timeout=5
            )
            assert other.status_code == 200
            assert not slow.done()
            release.set()
            r = await slow
            assert r.status_code == 200, r.text


async def test_a_build_past_the_deadline_is_a_504_and_finishes_for_the_next_request(tmp_path: Path) -> None:
    with _slow_preset("slow_deadline_probe") as (building, release):
        async with served(tmp_path, limits=Limits(request_timeout=0.5)) as w:
            body = {"query": "apple", "preset": "slow_deadline_probe"}
            r = await w.client.post("/v1/retrieve", json=body, headers=w.auth("acme"))
            assert r.status_code == 504, r.text
            assert r.headers["content-type"] == PROBLEM
            assert building.is_set()
            release.set()
            # The build goes on without the request and is kept: a later request gets it.
            for _ in range(40):
                r = await w.client.post("/v1/retrieve", json=body, headers=w.auth("acme"))
                if r.status_code != 504:
                    break
            assert r.status_code == 200, r.text
            assert r.json()["pipeline"] == "slow_deadline_probe"


# -- DNS rebinding -------------------------------------------------------------------------------


# Host headers and whether they name this machine's loopback.
HOSTS = [
    ("localhost", True),
    ("LOCALHOST:8000", True),
    ("127.0.0.1", True),
    ("127.0.0.1:65535", True),
    ("[::1]", True),
    ("[::1]:8000", True),
    ("localhost.", True),
    ("evil.example", False),
    ("evil.example:8000", False),
    ("localhost.evil.example", False),
    ("127.0.0.1.nip.io", False),
    ("127.0.0.2:8000", True),
    ("[0:0:0:0:0:0:0:1]", True),
    ("::1", False),
    ("10.0.0.1", False),
    ("0.0.0.0", False),
    ("[::1]x", False),
    ("localhost:80:80", False),
    ("localhost:", False),
    ("", False),
]


async def test_without_keys_the_host_header_must_name_the_loopback(tmp_path: Path) -> None:
    async with served(tmp_path, with_keys=False, corpus=False) as w:
        for host, loopback in HOSTS:
            r = await w.client.get("/health", headers={"host": host})
            assert r.status_code == (200 if loopback else 421), (host, r.status_code)


async def test_without_keys_only_loopback_host_headers_are_answered(tmp_path: Path) -> None:
    async with served(tmp_path, with_keys=False, corpus=False) as w:
        for host in ("evil.example", "evil.example:8000", "192.168.1.20:8000", "localhost.evil.example"):
            for method, path, body in (
                ("POST", "/v1/retrieve", {"query": "apple"}),
                ("GET", "/v1/graph/stats", None),
                ("GET", "/health", None),
                ("GET", "/", None),
            ):
                r = await w.client.request(method, path, json=body, headers={"host": host})
                assert r.status_code == 421, (host, path, r.status_code)
                assert r.headers["content-type"] == PROBLEM
                assert "localhost" in r.json()["detail"]
        for host in ("localhost:8000", "127.0.0.1", "[::1]:9000"):
            r = await w.client.post("/v1/retrieve", json={"query": "apple"}, headers={"host": host})
            assert r.status_code == 200, (host, r.text)


async def test_with_keys_any_host_is_answered(tmp_path: Path) -> None:
    async with served(tmp_path, corpus=False) as w:
        for host in ("search.example.com", "10.0.0.5:8443", "localhost"):
            r = await w.client.post("/v1/retrieve", json={"query": "apple"}, headers={**w.auth("acme"), "host": host})
            assert r.status_code == 200, (host, r.text)
            r = await w.client.post("/v1/retrieve", json={"query": "apple"}, headers={"host": host})
            assert r.status_code == 401


# -- metric labels -------------------------------------------------------------------------------


def _series(text: str) -> set[str]:
    return {line.rsplit(" ", 1)[0] for line in text.splitlines() if line.startswith("graphfuse_http_")}


@pytest.mark.slow
async def test_invented_methods_and_paths_add_no_metric_series(tmp_path: Path) -> None:
    async with served(tmp_path, corpus=False) as w:
        # One of each kind first, so that "other" and "unmatched" exist.
        await w.client.request("BREW", "/v1/retrieve")
        await w.client.get("/no/such/path")
        await w.client.request("BREW", "/no/such/path")
        await w.client.request("BREW", "/health")
        await w.client.get("/metrics")
        before = _series((await w.client.get("/metrics")).text)
        for i in range(500):
            await w.client.request(f"M{i}", f"/v1/invented-{i}")
            await w.client.get(f"/invented/{i}/path")
            await w.client.request(f"X{i}", "/health")
        after = _series((await w.client.get("/metrics")).text)
        assert after == before, sorted(after - before)[:10]
        labels = {line.split("{", 1)[1] for line in after if "{" in line}
        assert not any("M1" in x or "invented" in x for x in labels)


async def test_presets_are_the_ones_registered_when_the_server_started(tmp_path: Path) -> None:
    async with served(tmp_path, corpus=False) as w:
        presets.register("late_probe", lambda vector_store, embedder: presets.minimal(vector_store, embedder))
        try:
            listed = (await w.client.get("/v1/samples", headers=w.auth("acme"))).json()["presets"]
            assert "minimal" in listed
            assert "late_probe" not in listed
            r = await w.client.post("/v1/retrieve", json={"query": "a", "preset": "late_probe"}, headers=w.auth("acme"))
            assert r.status_code == 422
            assert r.json()["field"] == "preset"
        finally:
            presets.unregister("late_probe")


async def test_health_shows_the_store_path_only_to_a_valid_key(tmp_path: Path) -> None:
    from graphfuse.server import Service, create_app

    async with served(tmp_path) as w:
        secret_path = str(tmp_path / "store")
        service = Service(
            w.store.graph, w.store.vectors, w.service.embedder, description={"store": secret_path, "embedder": "hash"}
        )
        try:
            for keys in (w.keys, None):
                app = create_app(service, keys=keys)
                transport = httpx.ASGITransport(app=app)
                async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
                    for headers in ({}, {"Authorization": "Bearer gfk_00000000_" + "x" * 43}):
                        r = await client.get("/health", headers=headers)
                        assert r.status_code == 200
                        assert secret_path not in r.text
                        assert r.json()["components"]["embedder"] == "hash"
                    if keys is None:  # a key-less (loopback) server names only the directory
                        assert (await client.get("/health")).json()["components"]["store"] == "store"
                    else:
                        assert "store" not in (await client.get("/health")).json()["components"]
                        r = await client.get("/health", headers=w.auth("acme"))
                        assert r.json()["components"]["store"] == secret_path
        finally:
            await service.aclose()


@pytest.mark.slow
async def test_corpus_presets_see_what_graphfuse_index_wrote_to_a_served_store(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from graphfuse.multihop import CorpusCache
    from graphfuse.server import Scope, Service
    from graphfuse.stores import aopen_store

    env = {**os.environ, "GRAPHFUSE_LOAD_PLUGINS": ""}
    first = tmp_path / "first.jsonl"
    first.write_text(json.dumps({"id": "apples", "title": "Apples", "text": "Apples grow in orchards."}) + "\n")
    second = tmp_path / "second.jsonl"
    second.write_text(json.dumps({"id": "zebras", "title": "Zebras", "text": "Zebras graze on the savanna."}) + "\n")
    directory = tmp_path / "store"

    def index(path: Path) -> None:
        cli = [sys.executable, "-m", "graphfuse.cli", "index", str(path), "--store", str(directory)]
        done = subprocess.run([*cli, "--embedder", "hashing"], capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr

    await asyncio.to_thread(index, first)
    store = await aopen_store(directory)
    service = Service(store.graph, store.vectors, store.embedder, corpus_cache=CorpusCache(store.path))
    try:
        for preset in ("bm25", "hybrid", "multihop"):

            async def ids(preset: str = preset) -> list[str]:
                pipeline = await service.run(service.pipeline(preset))
                _, out = await service.run(
                    service.retrieve(Scope(None), pipeline, "zebras savanna", top_k=5, client_filter=None)
                )
                return [r["id"] for r in out]

            assert "zebras" not in await ids()
        await asyncio.to_thread(index, second)  # another process writes the served store
        for preset in ("bm25", "hybrid", "multihop"):
            pipeline = await service.run(service.pipeline(preset))
            _, out = await service.run(
                service.retrieve(Scope(None), pipeline, "zebras savanna", top_k=5, client_filter=None)
            )
            assert "zebras" in [r["id"] for r in out], f"{preset} did not see the document graphfuse index added"
    finally:
        await service.run(store.aclose())
        await service.aclose()

"""Abuse cases for ``graphfuse serve``: the real app over a real store, on loopback only.

Loaded by ``benchmarks/abuse_probe.py`` (by path: this file imports nothing from the others).
Each case builds its own store in the temporary directory it is given, talks to the app
through httpx (in-process ASGI transport, or a real uvicorn server on 127.0.0.1 where the
event loop itself is what is probed) and raises ``AssertionError`` naming what did not hold.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from graphfuse.embedders import HashingEmbedder
from graphfuse.server import KeyFile, Limits, Service, create_app
from graphfuse.stores import LocalStore

PROBLEM = "application/problem+json"
TENANTS = ("acme", "globex")
MARKER = {"acme": "ACMEWORD", "globex": "GLOBEXWORD"}
DOCS: dict[str, list[dict[str, Any]]] = {
    "acme": [
        {"id": "a1", "title": "Apple Orchard", "text": "ACMEWORD apple orchard harvest by the Apple Orchard team."},
        {"id": "a2", "title": "Banana Coast", "text": "ACMEWORD banana coast; see Apple Orchard.", "links": ["a1"]},
        {"id": "same", "title": "Same Id", "text": "ACMEWORD a document id both tenants use."},
    ],
    "globex": [
        {"id": "g1", "title": "Merger Plans", "text": "GLOBEXWORD apple merger plans for the Merger Plans board."},
        {"id": "g2", "title": "Harvest Forecast", "text": "GLOBEXWORD orchard harvest forecast.", "links": ["g1"]},
        {"id": "same", "title": "Same Id", "text": "GLOBEXWORD the same id, another tenant."},
    ],
}


@dataclass
class World:
    store: LocalStore
    service: Service
    keys: KeyFile
    key: dict[str, str]
    client: httpx.AsyncClient
    app: Any

    def auth(self, tenant: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key[tenant]}"}


@asynccontextmanager
async def world(
    tmp: Path, *, with_keys: bool = True, limits: Limits | None = None, ingest: bool = True
) -> AsyncIterator[World]:
    store = LocalStore.open(tmp / "store")
    embedder = HashingEmbedder(dimension=64)
    await store.ause_embedder(embedder)
    service = Service(store.graph, store.vectors, embedder, limits=limits or Limits())
    keys = KeyFile(tmp / "keys.json")
    key = {t: keys.add(t)[1] for t in TENANTS} if with_keys else {}
    app = create_app(service, keys=keys if with_keys else None)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=30) as client:
            w = World(store, service, keys, key, client, app)
            if ingest and with_keys:
                for tenant in TENANTS:
                    r = await client.post("/v1/ingest", json={"documents": DOCS[tenant]}, headers=w.auth(tenant))
                    assert r.status_code == 200, f"ingest for {tenant} answered {r.status_code}: {r.text[:300]}"
            yield w
    finally:
        await store.aclose()


def sync(fn: Callable[[Path], Coroutine[Any, Any, None]]) -> Callable[[Path], None]:
    """A case function from a coroutine function."""

    def run(tmp: Path) -> None:
        asyncio.run(fn(tmp))

    run.__name__ = fn.__name__
    return run


def expect_problem(r: httpx.Response, statuses: tuple[int, ...], what: str) -> dict[str, Any]:
    assert r.status_code in statuses, f"{what}: expected {statuses}, got {r.status_code}: {r.text[:300]}"
    assert r.headers.get("content-type") == PROBLEM, f"{what}: not a problem body: {r.headers.get('content-type')}"
    body: dict[str, Any] = r.json()
    assert isinstance(body.get("detail"), str), f"{what}: no detail in {body}"
    assert body["detail"], f"{what}: an empty detail"
    assert "Traceback" not in r.text, f"{what}: a traceback reached the client"
    return body


# -- cases that held in the first probe and must keep holding ---------------------------------


async def _tenants_on_every_route(tmp: Path) -> None:
    async with world(tmp) as w:
        for me, other in (("acme", "globex"), ("globex", "acme")):
            auth = w.auth(me)
            own = {d["id"] for d in DOCS[me]}
            theirs = {d["id"] for d in DOCS[other]} - own
            texts: list[str] = []
            for preset in ("minimal", "standard", "multihop", "bm25", "hybrid"):
                for q in [d["text"] for d in DOCS[other]] + ["apple orchard harvest"]:
                    body = {"query": q, "top_k": 20, "preset": preset, "graph": True}
                    r = await w.client.post("/v1/retrieve", json=body, headers=auth)
                    assert r.status_code in (200, 422), f"retrieve {preset}: {r.status_code} {r.text[:200]}"
                    texts.append(r.text)
                    if r.status_code == 200:
                        got = {x["id"] for x in r.json()["results"]}
                        assert got <= own, f"{me} got {sorted(got - own)} from preset {preset}"
                for fmt in ("passages", "evidence", "graph"):
                    body = {"query": DOCS[other][0]["text"], "budget": 400, "format": fmt, "preset": preset}
                    r = await w.client.post("/v1/context", json=body, headers=auth)
                    assert r.status_code in (200, 422), f"context {preset}/{fmt}: {r.status_code} {r.text[:200]}"
                    texts.append(r.text)
            for method, path in (
                ("GET", "/v1/graph/stats"),
                ("GET", "/v1/stats/session"),
                ("GET", "/v1/samples"),
                ("POST", "/v1/compare"),
            ):
                r = await w.client.request(
                    method, path, json={"question": "apple"} if method == "POST" else None, headers=auth
                )
                assert r.status_code in (200, 503), f"{path}: {r.status_code}"
                texts.append(r.text)
            stats = (await w.client.get("/v1/graph/stats", headers=auth)).json()
            assert stats["documents"] == len(own), f"{me} graph stats count {stats['documents']} documents"
            for doc_id in sorted(theirs):
                r = await w.client.delete(f"/v1/documents/{doc_id}", headers=auth)
                assert r.status_code == 404, f"{me} deleting {other}'s {doc_id}: {r.status_code}"
                r = await w.client.delete(f"/v1/documents/{other}/{doc_id}", headers=auth)
                assert r.status_code == 404, f"{me} deleting {other}/{doc_id}: {r.status_code}"
            r = await w.client.post(
                "/v1/ingest",
                json={"documents": [{"id": "n", "text": f"{MARKER[me]} new", "links": sorted(theirs)[:1]}]},
                headers=auth,
            )
            assert r.status_code == 200, f"{me} ingest: {r.status_code} {r.text[:200]}"
            assert r.json()["warnings"], "a link to another tenant's id must be an unknown id"
            for text in texts:
                assert MARKER[other] not in text, f"{other}'s text reached {me}"
                assert f"{other}/" not in text, f"{other}'s stored id reached {me}"


async def _credentials(tmp: Path) -> None:
    routes = [
        ("POST", "/v1/retrieve", {"query": "apple"}),
        ("POST", "/v1/context", {"query": "apple", "budget": 100}),
        ("POST", "/v1/ingest", {"documents": [{"id": "z", "text": "t"}]}),
        ("POST", "/v1/compare", {"question": "apple"}),
        ("DELETE", "/v1/documents/a1", None),
        ("GET", "/v1/graph/stats", None),
        ("GET", "/v1/samples", None),
        ("GET", "/v1/stats/session", None),
    ]
    async with world(tmp, ingest=False) as w:
        bad: list[dict[str, str]] = [
            {},
            {"Authorization": "Bearer "},
            {"Authorization": "Bearer not-a-key"},
            {"Authorization": f"Basic {w.key['acme']}"},
            {"Authorization": f"Bearer {w.key['acme']}x"},
            {"Authorization": w.key["acme"]},
        ]
        for method, path, body in routes:
            for headers in bad:
                r = await w.client.request(method, path, json=body, headers=headers)
                expect_problem(r, (401,), f"{method} {path} with {sorted(headers.values())}")
                assert r.headers.get("www-authenticate", "").startswith("Bearer"), f"{path}: no WWW-Authenticate"
        w.keys.revoke(next(k.key_id for k in w.keys.records() if k.tenant == "acme"))
        for method, path, body in routes:
            r = await w.client.request(method, path, json=body, headers=w.auth("acme"))
            expect_problem(r, (401,), f"{method} {path} with a revoked key")
            r = await w.client.request(method, path, json=body, headers=w.auth("globex"))
            assert r.status_code != 401, f"{path}: revoking acme's key locked out globex"


async def _bad_input(tmp: Path) -> None:
    async with world(tmp, ingest=False) as w:
        auth = w.auth("acme")
        cases: list[tuple[str, str, Any]] = [
            ("POST", "/v1/retrieve", {"query": "apple", "top_k": 0}),
            ("POST", "/v1/retrieve", {"query": "apple", "top_k": 10**12}),
            ("POST", "/v1/retrieve", {"query": "apple", "top_k": "5"}),
            ("POST", "/v1/retrieve", {"query": ""}),
            ("POST", "/v1/retrieve", {"query": "x" * 5000}),
            ("POST", "/v1/retrieve", {"query": "apple", "preset": "../../etc"}),
            ("POST", "/v1/retrieve", {"query": "apple", "filter": {"a": {"$where": "1"}}}),
            ("POST", "/v1/retrieve", {"query": "apple", "filter": "tenant = 'x'"}),
            ("POST", "/v1/retrieve", {"query": "apple", "unknown": 1}),
            ("POST", "/v1/retrieve", ["not", "an", "object"]),
            ("POST", "/v1/context", {"query": "apple", "budget": -1}),
            ("POST", "/v1/context", {"query": "apple", "budget": 10**9}),
            ("POST", "/v1/context", {"query": "apple", "format": "xml"}),
            ("POST", "/v1/ingest", {"documents": []}),
            ("POST", "/v1/ingest", {"documents": [{"id": "a", "text": ""}]}),
            ("POST", "/v1/ingest", {"documents": [{"id": "a#1", "text": "t"}]}),
            ("POST", "/v1/ingest", {"documents": [{"id": "a", "text": "t", "metadata": {"graphfuse_kind": "x"}}]}),
            ("POST", "/v1/ingest", {"documents": [{"id": "a", "text": "t", "created_at": "yesterday"}]}),
            ("POST", "/v1/ingest", b'{"documents": [{"id": "a", "text": "t", "metadata": {"x": NaN}}]}'),
            ("POST", "/v1/compare", {"question": ""}),
        ]
        for method, path, body in cases:
            if isinstance(body, bytes):
                headers = {**auth, "content-type": "application/json"}
                r = await w.client.request(method, path, content=body, headers=headers)
            else:
                r = await w.client.request(method, path, json=body, headers=auth)
            expect_problem(r, (400, 413, 422), f"{method} {path} {str(body)[:80]}")
        r = await w.client.post(
            "/v1/retrieve", content=b"{not json", headers={**auth, "content-type": "application/json"}
        )
        expect_problem(r, (400, 422), "a body that is not JSON")


INJECTIONS = [
    "'; DROP TABLE documents; --",
    '" OR 1=1 --',
    "x') UNION SELECT id, content FROM documents --",
    "MATCH (n) DETACH DELETE n",
    "}) RETURN n UNION MATCH (m) RETURN m //",
    "$where: function() { return true }",
]


async def _injection_stored_inertly(tmp: Path) -> None:
    async with world(tmp) as w:
        auth = w.auth("acme")
        docs = [
            {
                "id": f"inj{i}",
                "title": payload,
                "text": f"ACMEWORD payload {payload}",
                "metadata": {"note": payload, payload[:20]: "value"},
            }
            for i, payload in enumerate(INJECTIONS)
        ]
        r = await w.client.post("/v1/ingest", json={"documents": docs}, headers=auth)
        assert r.status_code == 200, f"ingest of injection-looking text: {r.status_code} {r.text[:300]}"
        for payload in INJECTIONS:
            r = await w.client.post(
                "/v1/retrieve", json={"query": payload, "top_k": 50, "preset": "minimal"}, headers=auth
            )
            assert r.status_code == 200, f"query {payload!r}: {r.status_code} {r.text[:200]}"
            for flt in ({"note": payload}, {"note": {"$in": [payload]}}):
                r = await w.client.post(
                    "/v1/retrieve", json={"query": "payload", "top_k": 50, "filter": flt}, headers=auth
                )
                assert r.status_code in (200, 422), f"filter {flt!r}: {r.status_code}"
                if r.status_code == 200:
                    got = {x["id"] for x in r.json()["results"]}
                    assert got <= {f"inj{i}" for i in range(len(INJECTIONS))}, f"filter {flt!r} matched {got}"
            r = await w.client.delete(f"/v1/documents/{payload}", headers=auth)
            assert r.status_code in (404, 422), f"delete {payload!r}: {r.status_code}"
        r = await w.client.post(
            "/v1/retrieve", json={"query": "payload", "top_k": 50, "preset": "minimal"}, headers=auth
        )
        stored = {x["id"]: x for x in r.json()["results"]}
        for i, payload in enumerate(INJECTIONS):
            found = stored.get(f"inj{i}")
            assert found is not None, f"inj{i} is missing after the queries"
            assert found["title"] == payload, f"title of inj{i} changed: {found['title']!r}"
        for tenant in TENANTS:
            stats = (await w.client.get("/v1/graph/stats", headers=w.auth(tenant))).json()
            expected = len(DOCS[tenant]) + (len(INJECTIONS) if tenant == "acme" else 0)
            assert stats["documents"] == expected, f"{tenant} has {stats['documents']} documents, not {expected}"


# -- request fields, body sizes, a slow build, Host headers, metric labels, tenant entity graphs

FILE_STAGES = ("bm25", "bridge", "entity_seeds", "time")


async def _spec_naming_server_files(tmp: Path) -> None:
    secret = tmp / "secret.jsonl"
    secret.write_text('{"id": "hidden-id-7", "text": "t"}\n')
    folder = tmp / "private"
    folder.mkdir()
    (folder / "payroll-2026.md").write_text("x\n")
    (folder / "keys-backup.txt").write_text("x\n")
    paths = [str(secret), str(tmp / "missing.jsonl"), str(folder), "/etc/passwd", "/etc", "/proc/self/environ"]
    async with world(tmp) as w:
        for route, base in (("/v1/retrieve", {"query": "apple"}), ("/v1/context", {"query": "apple", "budget": 200})):
            for stage in FILE_STAGES:
                answers = set()
                for path in paths:
                    body = {**base, "stages": ["semantic", {"name": stage, "corpus": path}]}
                    r = await w.client.post(route, json=body, headers=w.auth("acme"))
                    expect_problem(r, (400, 422), f"{route} {stage} corpus={path}")
                    for leak in ("hidden-id-7", "payroll", "keys-backup", "root:", "exist"):
                        assert leak not in r.text, f"{route} {stage} corpus={path} told {leak!r}: {r.text[:200]}"
                    answers.add(r.text.replace(path, "<path>"))
                assert len(answers) == 1, f"{route} {stage}: answers differ by path: {sorted(answers)}"
            for stages in (["semantic", "graphfuse._builtins:_bm25"], [{"name": "semantic", "limit": 10**9}]):
                r = await w.client.post(route, json={**base, "stages": stages}, headers=w.auth("acme"))
                expect_problem(r, (422,), f"{route} stages={stages}")
            r = await w.client.post(route, json={**base, "preset": str(secret)}, headers=w.auth("acme"))
            expect_problem(r, (422,), f"{route} preset=<path>")


async def _oversized_bodies(tmp: Path) -> None:
    async with world(tmp, ingest=False) as w:
        padding = "apple " * 20_000  # 120 KB: over the 64 KiB bound of a query body
        for route, body in (
            ("/v1/retrieve", {"query": "apple", "filter": {"note": padding}}),
            ("/v1/context", {"query": padding}),
            ("/v1/compare", {"question": padding}),
        ):
            r = await w.client.post(route, json=body, headers=w.auth("acme"))
            expect_problem(r, (413,), f"{route} with a 120 KB body")
        r = await w.client.post(
            "/v1/ingest",
            content=b"[" + b" " * (9 * 1024 * 1024),
            headers={**w.auth("acme"), "content-type": "application/json"},
        )
        expect_problem(r, (413,), "ingest with a 9 MiB body")


async def _health_during_slow_build(tmp: Path) -> None:
    import socket
    import threading

    import uvicorn

    from graphfuse import presets

    building, release = threading.Event(), threading.Event()

    def factory(vector_store: Any, embedder: Any) -> Any:
        building.set()
        release.wait(20)
        return presets.minimal(vector_store, embedder)

    presets.register("abuse_slow_build", factory, needs=("vector_store", "embedder"))
    try:
        async with world(tmp) as w:
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
            server = uvicorn.Server(uvicorn.Config(w.app, log_level="warning", lifespan="off"))
            thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
            thread.start()
            try:
                for _ in range(200):
                    if server.started:
                        break
                    await asyncio.sleep(0.05)
                assert server.started, "uvicorn did not start"
                async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
                    body = {"query": "apple", "preset": "abuse_slow_build"}
                    slow = asyncio.create_task(client.post("/v1/retrieve", json=body, headers=w.auth("acme")))
                    try:
                        assert await asyncio.to_thread(building.wait, 20), "the slow build never started"
                        try:
                            health = await client.get("/health", timeout=5)
                        except httpx.TimeoutException:
                            raise AssertionError("/health did not answer while a pipeline was being built") from None
                        assert health.status_code == 200, f"/health answered {health.status_code}"
                        assert not slow.done(), "the slow request finished before the build was released"
                        release.set()
                        r = await slow
                        assert r.status_code == 200, f"the slow request answered {r.status_code}: {r.text[:200]}"
                    finally:
                        release.set()
                        if not slow.done():
                            slow.cancel()
                        await asyncio.gather(slow, return_exceptions=True)
            finally:
                release.set()
                server.should_exit = True
                await asyncio.to_thread(thread.join, 10)
    finally:
        release.set()
        presets.unregister("abuse_slow_build")


async def _foreign_host_without_keys(tmp: Path) -> None:
    async with world(tmp, with_keys=False, ingest=False) as w:
        for host in ("attacker.example", "attacker.example:8000", "localhost.attacker.example", "127.0.0.1.nip.io"):
            for method, path in (("POST", "/v1/retrieve"), ("GET", "/v1/graph/stats"), ("GET", "/")):
                body = {"query": "apple"} if method == "POST" else None
                r = await w.client.request(method, path, json=body, headers={"host": host})
                expect_problem(r, (400, 421), f"{method} {path} with Host {host}")
        for host in ("localhost:8000", "127.0.0.1:8000", "[::1]:8000"):
            r = await w.client.post("/v1/retrieve", json={"query": "apple"}, headers={"host": host})
            assert r.status_code == 200, f"Host {host} refused: {r.status_code}"


async def _any_host_with_keys(tmp: Path) -> None:
    async with world(tmp, ingest=False) as w:
        for host in ("search.example.com", "10.1.2.3:8443"):
            r = await w.client.post("/v1/retrieve", json={"query": "apple"}, headers={**w.auth("acme"), "host": host})
            assert r.status_code == 200, f"with keys, Host {host} got {r.status_code}"


async def _metric_labels_bounded(tmp: Path) -> None:
    def series(text: str) -> set[str]:
        return {line.rsplit(" ", 1)[0] for line in text.splitlines() if line.startswith("graphfuse_http_")}

    async with world(tmp, ingest=False) as w:
        for method, path in (("BREW", "/v1/retrieve"), ("GET", "/nope"), ("BREW", "/nope"), ("BREW", "/health")):
            await w.client.request(method, path)
        await w.client.get("/metrics")
        before = series((await w.client.get("/metrics")).text)
        for i in range(500):
            await w.client.request(f"INVENT{i}", f"/v1/made-up-{i}")
            await w.client.get(f"/made/up/{i}")
        after = series((await w.client.get("/metrics")).text)
        assert after == before, f"{len(after - before)} new metric series, e.g. {sorted(after - before)[:3]}"


async def _tenant_entity_graph(tmp: Path) -> None:
    from graphfuse.indexing import ENTITY_PREFIX, Indexer, SourceRecord, TextEntityExtractor

    async with world(tmp, ingest=False) as w:
        extractors = [TextEntityExtractor()]
        base = Indexer(w.store.graph, w.store.vectors, w.service.embedder, extractors=extractors, entity_graph=True)
        await base.aindex([SourceRecord(id="base", text="Operators of Kestrel Dynamics met in Lisbon.")])
        docs = {
            "acme": [
                {"id": "x1", "text": "The Zorblax Industries plant opened in Tarvin. acmeword"},
                {"id": "x2", "text": "Budget notes: Zorblax Industries paid the invoice. acmeword"},
            ],
            "globex": [
                {"id": "x1", "text": "Zorblax Industries bought a warehouse in Quuxville. globexword"},
                {"id": "x3", "text": "Minutes: Zorblax Industries will move. globexword"},
            ],
        }
        for tenant in TENANTS:
            r = await w.client.post("/v1/ingest", json={"documents": docs[tenant]}, headers=w.auth(tenant))
            assert r.status_code == 200, f"ingest {tenant}: {r.status_code} {r.text[:200]}"
        for tenant, other in (("acme", "globex"), ("globex", "acme")):
            stats = (await w.client.get("/v1/graph/stats", headers=w.auth(tenant))).json()
            assert stats["entities"] > 0, f"{tenant} has no entity nodes after ingest into an entity-graph store"
            spec = {
                "query": docs[tenant][0]["text"],
                "top_k": 10,
                "stages": [{"name": "semantic", "limit": 1}, "hydrate", {"name": "graph", "depth": 3}],
            }
            r = await w.client.post("/v1/retrieve", json=spec, headers=w.auth(tenant))
            assert r.status_code == 200, f"{tenant} graph walk: {r.status_code}"
            got = {x["id"] for x in r.json()["results"]}
            assert docs[tenant][1]["id"] in got, f"{tenant}: the hop through its entity node found nothing: {got}"
            assert f"{other}word" not in r.text, f"a hop through an entity node reached {other}'s document"
            for preset in ("multihop", "standard"):
                body = {"query": "What did Zorblax Industries do?", "preset": preset, "top_k": 10, "graph": True}
                r = await w.client.post("/v1/retrieve", json=body, headers=w.auth(tenant))
                assert r.status_code == 200, f"{tenant} {preset}: {r.status_code}"
                assert f"{other}word" not in r.text, f"{preset} gave {tenant} {other}'s document"
                assert not any(x["id"].startswith(ENTITY_PREFIX) for x in r.json()["results"]), "entity node as result"
        names: dict[str, list[str]] = {}
        async for d in w.store.graph.iter_documents():
            if d.metadata.get("graphfuse_kind") == "entity":
                names.setdefault(str(d.metadata.get("name")), []).append(d.id)
        shared = names.get("zorblax industries", [])
        assert len(shared) == 2, f"the shared name should be one node per tenant, got {shared}"


# -- slow clients, connection limits, the log ------------------------------


@asynccontextmanager
async def guarded(app: Any, limits: Any = None) -> AsyncIterator[int]:
    """``app`` served as ``graphfuse serve`` serves it (``http_server``) on a loopback port; yields the port."""
    import socket
    import threading

    from graphfuse.server import http_server

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = http_server(app, limits=limits, log_level="warning", lifespan="off")
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(200):
            if server.started:
                break
            await asyncio.sleep(0.05)
        assert server.started, "uvicorn did not start"
        yield port
    finally:
        server.should_exit = True
        await asyncio.to_thread(thread.join, 10)
        sock.close()


def trickle(port: int, head: bytes, piece: bytes, bound: float = 20.0) -> tuple[bytes, bool]:
    """Send ``head``, then ``piece`` every 0.2 s; what came back, and whether the server closed within ``bound``."""
    import contextlib
    import socket
    import time

    answer = b""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.settimeout(0.2)
        s.sendall(head)
        stop = time.monotonic() + bound
        while time.monotonic() < stop:
            try:
                data = s.recv(65536)
            except TimeoutError:
                data = None
            except ConnectionResetError:
                return answer, True
            if data == b"":
                return answer, True
            answer += data or b""
            with contextlib.suppress(OSError):
                s.sendall(piece)
    return answer, False


async def _slow_headers(tmp: Path) -> None:
    from graphfuse.server import ConnectionLimits

    async with world(tmp) as w, guarded(w.app, ConnectionLimits(header_timeout=1.0)) as port:
        for head in (
            b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n",
            f"POST /v1/retrieve HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {w.key['acme']}\r\n".encode(),
        ):
            answer, closed = await asyncio.to_thread(trickle, port, head, b"X-Slow: 1\r\n")
            assert closed, f"a client trickling header lines after {head[:20]!r} was not cut off in 20 s"
            assert answer.startswith(b"HTTP/1.1 408"), f"not a 408: {answer[:100]!r}"


async def _slow_body(tmp: Path) -> None:
    async with world(tmp, limits=Limits(body_timeout=1.0)) as w, guarded(w.app) as port:
        for path, key in (("/v1/ingest", w.key["acme"]), ("/v1/retrieve", "not-a-key")):
            head = (
                f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n"
                "Content-Type: application/json\r\nContent-Length: 9000\r\n\r\n{"
            ).encode()
            answer, closed = await asyncio.to_thread(trickle, port, head, b" ")
            assert closed, f"{path}: a client trickling its body was not cut off in 20 s"
            assert answer.startswith(b"HTTP/1.1 408"), f"{path}: not a 408: {answer[:100]!r}"


async def _connection_cap(tmp: Path) -> None:
    import socket

    from graphfuse.server import ConnectionLimits

    async with world(tmp) as w, guarded(w.app, ConnectionLimits(header_timeout=2.0, max_connections=5)) as port:
        held = []
        try:
            for _ in range(4):
                s = socket.create_connection(("127.0.0.1", port), timeout=5)
                s.sendall(b"GET /health HTTP/1.1\r\n")
                held.append(s)
            base = f"http://127.0.0.1:{port}"
            async with httpx.AsyncClient(base_url=base, timeout=10) as kept, httpx.AsyncClient(base_url=base) as new:
                r = await kept.get("/health")
                assert r.status_code == 200, f"/health with 4 of 5 places taken: {r.status_code}"
                # Five are open now (the kept-alive one too): a new connection is refused, clearly.
                expect_problem(await new.get("/health", timeout=10), (503,), "a new connection over the limit")
                r = await kept.get("/health")
                assert r.status_code == 200, f"/health on the kept connection: {r.status_code}"
        finally:
            for s in held:
                s.close()


async def _small_server_items(tmp: Path) -> None:
    import os

    from graphfuse import InvalidInput
    from graphfuse.server import check_tenant

    for name in ("acme\n", "acme\r\n", "a/b"):
        try:
            check_tenant(name)
        except InvalidInput:
            continue
        raise AssertionError(f"tenant name {name!r} was accepted")
    async with world(tmp) as w:
        w.service.description = {"store": str(tmp / "store")}
        for headers in ({}, {"Authorization": "Bearer gfk_00000000_" + "x" * 43}):
            r = await w.client.get("/health", headers=headers)
            assert str(tmp) not in r.text, "/health showed the store's path without a valid key"
        # A key file restored in place with its old size and modification time is read again.
        old_key = w.key["acme"]
        path = w.keys.path
        old = path.read_bytes()
        w.keys.revoke(old_key)
        _, new_key = w.keys.add("acme")
        st = path.stat()
        assert (await w.client.get("/v1/samples", headers={"Authorization": f"Bearer {new_key}"})).status_code == 200
        new = path.read_bytes()
        if len(new) == len(old):
            with path.open("r+b") as f:
                f.write(old)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
            r = await w.client.get("/v1/samples", headers={"Authorization": f"Bearer {new_key}"})
            assert r.status_code == 401, "a key file restored with the same size and mtime was not re-read"


async def _chunked_subgraph(tmp: Path) -> None:
    def long(subject: str, extra: str = "") -> str:
        lines = [f"{subject} note {i}: the crew records step {i} of the season." for i in range(45)]
        return " ".join([*lines[:22], extra, *lines[22:]])

    docs = [
        {"id": "orchard", "title": "Apple Orchard Guide", "text": long("Orchard")},
        {
            "id": "cider",
            "title": "Cider Making",
            "text": long("Cider", "See the Apple Orchard Guide."),
            "links": ["orchard"],
        },
    ]
    async with world(tmp, ingest=False) as w:
        r = await w.client.post("/v1/ingest", json={"documents": docs}, headers=w.auth("acme"))
        assert r.status_code == 200, f"ingest: {r.status_code} {r.text[:200]}"
        assert r.json()["chunks"] >= 4, f"the pages were not split into passages: {r.text[:200]}"
        body = {"query": "orchard cider crew season", "top_k": 4, "preset": "minimal", "graph": True}
        r = await w.client.post("/v1/retrieve", json=body, headers=w.auth("acme"))
        got = r.json()
        pages = {x.get("parent_id") for x in got["results"]}
        assert pages == {"orchard", "cider"}, f"results' pages: {pages}"
        assert got["graph"]["edges"], "no relation between the pages of the passages in the subgraph"


def _accept_failures_logged_once(tmp: Path) -> None:
    import contextlib
    import socket
    import subprocess
    import sys
    import textwrap
    import time

    server = textwrap.dedent(
        """
        import resource, sys
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
        from graphfuse.server import ConnectionLimits, http_server

        async def app(scope, receive, send):
            if scope["type"] == "http":
                await send({"type": "http.response.start", "status": 200, "headers": []})
                await send({"type": "http.response.body", "body": b"ok"})

        limits = ConnectionLimits(header_timeout=3, max_connections=1000)  # more than 64 files allow
        http_server(app, limits=limits, port=int(sys.argv[1]), log_level="info", lifespan="off").run()
        """
    )
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-c", server, str(port)], stdout=out, stderr=out)
    held = []
    try:
        for _ in range(100):
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"http://127.0.0.1:{port}/", timeout=1).status_code == 200:
                    break
            time.sleep(0.1)
        for _ in range(100):
            c = socket.create_connection(("127.0.0.1", port), timeout=5)
            c.sendall(b"GET / HTTP/1.1\r\n")
            held.append(c)
        time.sleep(5)  # accepting fails until the header deadline frees descriptors
    finally:
        for c in held:
            c.close()
        proc.terminate()
        proc.wait(timeout=30)
    text = log.read_text(errors="replace")
    n = text.count("out of system resource")
    assert 1 <= n <= 3, f"{n} accept-failure lines (the probe saw 299,000)"


CASES = [
    ("server/tenants-kept-apart-on-every-route", True, sync(_tenants_on_every_route)),
    ("server/401-on-bad-missing-revoked-keys", True, sync(_credentials)),
    ("server/clear-4xx-on-bad-input", True, sync(_bad_input)),
    ("server/injection-payloads-stored-inertly", True, sync(_injection_stored_inertly)),
    ("server/spec-naming-server-files-refused-alike", True, sync(_spec_naming_server_files)),
    ("server/oversized-bodies-413", True, sync(_oversized_bodies)),
    ("server/health-answers-during-slow-build", True, sync(_health_during_slow_build)),
    ("server/no-keys-refuses-foreign-host", True, sync(_foreign_host_without_keys)),
    ("server/keys-accept-any-host", True, sync(_any_host_with_keys)),
    ("server/metric-labels-bounded", True, sync(_metric_labels_bounded)),
    ("server/tenant-entity-graph-in-scope", True, sync(_tenant_entity_graph)),
    ("server/slow-headers-cut-off-at-the-header-deadline", True, sync(_slow_headers)),
    ("server/slow-body-cut-off-at-the-body-deadline", True, sync(_slow_body)),
    ("server/connection-limit-refuses-with-503", True, sync(_connection_cap)),
    ("server/tenant-newline-health-path-key-file-restore", True, sync(_small_server_items)),
    ("server/subgraph-relates-pages-of-passages", True, sync(_chunked_subgraph)),
    ("server/accept-failures-logged-once", False, _accept_failures_logged_once),
]

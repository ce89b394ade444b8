"""A served two-tenant store for the server tests: the real app over a real store directory."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from graphfuse import Relation
from graphfuse.embedders import HashingEmbedder
from graphfuse.multihop import CorpusCache
from graphfuse.server import ConnectionLimits, KeyFile, Limits, Service, create_app, http_server
from graphfuse.stores import LocalStore

# Every text of a tenant carries its marker: a response to the other tenant must never hold it.
ACME = [
    {"id": "a1", "title": "Apple Orchard", "text": "ACMEWORD apple orchard harvest, picked by the Apple Orchard team."},
    {"id": "a2", "title": "Banana Coast", "text": "ACMEWORD banana plantation near the coast; see Apple Orchard."},
    {"id": "a3", "title": "Cherry Spring", "text": "ACMEWORD cherry blossom season in spring.", "links": ["a1"]},
    {"id": "shared", "title": "Shared Name", "text": "ACMEWORD a document id both tenants use."},
]
GLOBEX = [
    {"id": "g1", "title": "Merger Plans", "text": "GLOBEXWORD apple merger plans, secret, for the Merger Plans board."},
    {"id": "g2", "title": "Harvest Forecast", "text": "GLOBEXWORD orchard harvest forecast; Merger Plans attached."},
    {"id": "g3", "title": "Spring Budget", "text": "GLOBEXWORD cherry spring budget.", "links": ["g2"]},
    {"id": "shared", "title": "Shared Name", "text": "GLOBEXWORD the same id, another tenant."},
]


def _long(subject: str, extra: str = "", n: int = 45) -> str:
    """A page long enough to be split into passages (the chunker keeps 256 tokens whole)."""
    lines = [f"{subject} note {i}: the crew records step {i} of the {subject.lower()} season." for i in range(n)]
    return " ".join(lines[: n // 2] + ([extra] if extra else []) + lines[n // 2 :])


# Pages of several passages each; Cider Making links to and names Apple Orchard Guide in its second
# half, Harvest Calendar names Cider Making: relations between pages that passages are results of.
CHUNKED = [
    {"id": "orchard", "title": "Apple Orchard Guide", "text": _long("Orchard")},
    {
        "id": "cider",
        "title": "Cider Making",
        "text": _long("Cider", "Pressing starts when the Apple Orchard Guide says the fruit is ripe."),
        "links": ["orchard"],
    },
    {"id": "calendar", "title": "Harvest Calendar", "text": _long("Calendar", "Cider Making follows the harvest.")},
]
# Relations across tenants, made behind the API's back (as a shared store could hold them).
CROSS = [
    Relation("acme/a1", "globex/g1", "LINKS_TO"),
    Relation("globex/g2", "acme/a2", "MENTIONS"),
    Relation("acme/a3", "globex/g3", "CO_MENTION"),
    Relation("globex/g1", "acme/shared", "LINKS_TO"),
    Relation("acme/shared", "globex/shared", "MENTIONS"),
]


@dataclass
class Served:
    store: LocalStore
    service: Service
    client: httpx.AsyncClient
    keys: KeyFile
    key: dict[str, str]
    app: Any

    def auth(self, tenant: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key[tenant]}"}

    async def ingest(self, tenant: str, documents: list[dict[str, Any]]) -> httpx.Response:
        return await self.client.post("/v1/ingest", json={"documents": documents}, headers=self.auth(tenant))


@asynccontextmanager
async def served(
    tmp_path: Path,
    *,
    with_keys: bool = True,
    limits: Limits | None = None,
    corpus: bool = True,
    corpus_cache: bool = False,
    sample_questions: Sequence[str] = ("what is harvested?",),
) -> AsyncIterator[Served]:
    store = LocalStore.open(tmp_path / "store")
    embedder = HashingEmbedder(dimension=64)
    await store.ause_embedder(embedder)
    cache = CorpusCache(tmp_path / "store") if corpus_cache else None
    service = Service(store.graph, store.vectors, embedder, limits=limits or Limits(), corpus_cache=cache)
    keys = KeyFile(tmp_path / "keys.json")
    key = {}
    if with_keys:
        for tenant in ("acme", "globex"):
            key[tenant] = keys.add(tenant)[1]
    app = create_app(service, keys=keys if with_keys else None, sample_questions=sample_questions)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        world = Served(store, service, client, keys, key, app)
        if corpus and with_keys:
            for tenant, docs in (("acme", ACME), ("globex", GLOBEX)):
                r = await world.ingest(tenant, docs)
                assert r.status_code == 200, r.text
            await store.graph.create_relations(CROSS)
        try:
            yield world
        finally:
            await service.aclose()
            await store.aclose()


@asynccontextmanager
async def uvicorn_served(app: Any, connections: ConnectionLimits | None = None) -> AsyncIterator[str]:
    """``app`` served as ``graphfuse serve`` serves it (uvicorn with :func:`http_server`'s guards) on a
    loopback port, in a thread with its own event loop."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = http_server(app, limits=connections, log_level="warning", lifespan="off")
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(200):
            if server.started:
                break
            await asyncio.sleep(0.05)
        assert server.started
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await asyncio.to_thread(thread.join, 10)
        sock.close()

"""Two tenants, cross-tenant links, every route and every preset: nothing of one reaches the other."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from _server_world import ACME, GLOBEX, served

from graphfuse import presets

MARKER = {"acme": "ACMEWORD", "globex": "GLOBEXWORD"}
OWN_IDS = {"acme": {d["id"] for d in ACME}, "globex": {d["id"] for d in GLOBEX}}
TITLES = {"acme": {d["title"] for d in ACME}, "globex": {d["title"] for d in GLOBEX}}


@pytest.mark.slow
async def test_every_route_and_preset_keeps_tenants_apart(tmp_path: Path) -> None:
    async with served(tmp_path) as w:
        for me, other in (("acme", "globex"), ("globex", "acme")):
            auth = w.auth(me)
            bodies: list[str] = []
            # Retrieval with every preset, with queries made of the other tenant's own words.
            queries = [d["text"] for d in (GLOBEX if other == "globex" else ACME)] + ["apple orchard harvest"]
            for preset in presets.names():
                for q in queries:
                    r = await w.client.post(
                        "/v1/retrieve", json={"query": q, "top_k": 20, "preset": preset, "graph": True}, headers=auth
                    )
                    assert r.status_code in (200, 422), (preset, r.text)
                    bodies.append(r.text)
                    if r.status_code == 200:
                        got = r.json()
                        ids = {x["id"] for x in got["results"]}
                        parents = {x["parent_id"] for x in got["results"] if x["parent_id"]}
                        assert ids | parents <= OWN_IDS[me], (preset, q, ids)
                        nodes = {n["id"] for n in got["graph"]["nodes"]}
                        ends = {e[k] for e in got["graph"]["edges"] for k in ("source", "target")}
                        assert nodes | ends <= OWN_IDS[me]
            # Our own documents are found (the isolation is not an empty answer).
            r = await w.client.post("/v1/retrieve", json={"query": "apple orchard harvest", "top_k": 5}, headers=auth)
            assert r.status_code == 200
            assert r.json()["results"], r.text
            # Contexts in every format, with every preset: sources and text stay in the tenant.
            for preset in presets.names():
                for fmt in ("passages", "evidence", "graph"):
                    body = {"query": queries[0], "budget": 500, "format": fmt, "preset": preset, "top_k": 10}
                    r = await w.client.post("/v1/context", json=body, headers=auth)
                    assert r.status_code in (200, 422), (preset, fmt, r.text)
                    bodies.append(r.text)
                    if r.status_code == 200:
                        got = r.json()
                        assert {x["id"] for x in got["sources"] + got["dropped"]} <= OWN_IDS[me] | {
                            f"{i}#{n}" for i in OWN_IDS[me] for n in range(50)
                        }
            r = await w.client.get("/v1/stats/session", headers=auth)
            assert r.status_code == 200
            bodies.append(r.text)
            r = await w.client.post("/v1/compare", json={"question": queries[0]}, headers=auth)
            assert r.status_code == 503
            bodies.append(r.text)
            # A declarative pipeline: semantic, hydrate and a 3-hop graph walk over the cross links.
            spec = {"query": "apple", "top_k": 20, "stages": ["semantic", "hydrate", {"name": "graph", "depth": 3}]}
            r = await w.client.post("/v1/retrieve", json=spec, headers=auth)
            assert r.status_code == 200, r.text
            bodies.append(r.text)
            # A client filter can narrow, never widen.
            for flt in ({"tenant": other}, {"tenant": {"$ne": me}}, {"tenant": {"$in": [me, other]}}):
                r = await w.client.post("/v1/retrieve", json={"query": "apple", "filter": flt}, headers=auth)
                assert r.status_code == 422
                assert r.json()["field"] == "filter.tenant"
                bodies.append(r.text)
            r = await w.client.post(
                "/v1/retrieve", json={"query": "apple", "filter": {"title": {"$exists": True}}}, headers=auth
            )
            assert r.status_code == 200
            bodies.append(r.text)
            # Graph statistics count only our own graph (cross-tenant relations excluded).
            r = await w.client.get("/v1/graph/stats", headers=auth)
            assert r.status_code == 200
            stats = r.json()
            assert stats["documents"] == len(OWN_IDS[me])
            own_links = 1  # a3 -> a1, g3 -> g2
            assert stats["relations_by_type"].get("LINKS_TO", 0) == own_links
            bodies.append(r.text)
            # Deleting another tenant's document: it does not exist for us.
            for doc_id in OWN_IDS[other] - OWN_IDS[me]:
                r = await w.client.delete(f"/v1/documents/{doc_id}", headers=auth)
                assert r.status_code == 404
                bodies.append(r.text)
            r = await w.client.delete(f"/v1/documents/{other}/{next(iter(OWN_IDS[other] - OWN_IDS[me]))}", headers=auth)
            assert r.status_code == 404
            # Ingest cannot stamp another tenant, nor reach its documents by id or by link.
            r = await w.ingest(me, [{"id": "x", "text": "t", "metadata": {"tenant": other}}])
            assert r.status_code == 422
            assert r.json()["field"] == "documents[0].metadata.tenant"
            link_to_other = sorted(OWN_IDS[other] - OWN_IDS[me])[0]
            r = await w.ingest(me, [{"id": f"{me}-new", "text": f"{MARKER[me]} new", "links": [link_to_other]}])
            assert r.status_code == 200
            assert r.json()["warnings"], "a link to another tenant's id must be an unknown id"
            bodies.append(r.text)
            for path in ("/v1/samples", "/health"):
                r = await w.client.get(path, headers=auth)
                assert r.status_code == 200
                bodies.append(r.text)
            for body in bodies:
                assert MARKER[other] not in body
                for title in TITLES[other] - TITLES[me]:
                    assert title not in body
                assert f"{other}/" not in body
        # The shared id: each tenant has its own document under it, untouched by the other's ingest.
        for me in ("acme", "globex"):
            r = await w.client.post(
                "/v1/retrieve",
                json={"query": "document id both tenants same id another tenant", "top_k": 10, "preset": "minimal"},
                headers=w.auth(me),
            )
            shared = [x for x in r.json()["results"] if x["id"] == "shared"]
            assert len(shared) == 1
            assert MARKER[me] in shared[0]["text"]
        # Deleting our "shared" leaves the other tenant's.
        r = await w.client.delete("/v1/documents/shared", headers=w.auth("acme"))
        assert r.status_code == 200
        r = await w.client.post(
            "/v1/retrieve", json={"query": "the same id", "preset": "minimal"}, headers=w.auth("globex")
        )
        assert "shared" in {x["id"] for x in r.json()["results"]}


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/v1/retrieve", {"query": "apple"}),
        ("POST", "/v1/ingest", {"documents": [{"id": "z", "text": "t"}]}),
        ("DELETE", "/v1/documents/a1", None),
        ("GET", "/v1/graph/stats", None),
        ("GET", "/v1/samples", None),
        ("POST", "/v1/context", {"query": "apple", "budget": 100}),
        ("GET", "/v1/stats/session", None),
        ("POST", "/v1/compare", {"question": "apple"}),
    ],
)
async def test_every_v1_route_needs_a_valid_key(tmp_path: Path, method: str, path: str, body: object) -> None:
    async with served(tmp_path, corpus=False) as w:
        for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": f"Basic {w.key['acme']}"}):
            r = await w.client.request(method, path, json=body, headers=headers)
            assert r.status_code == 401
            assert r.headers["content-type"] == "application/problem+json"
            assert r.headers["www-authenticate"].startswith("Bearer")
        # A key that was valid stops working as soon as it is revoked (the file is re-read).
        r = await w.client.request(method, path, json=body, headers=w.auth("acme"))
        assert r.status_code != 401
        w.keys.revoke(w.keys.records()[0].key_id)
        r = await w.client.request(method, path, json=body, headers=w.auth("acme"))
        assert r.status_code == 401


async def test_tenants_get_their_own_entity_graph(tmp_path: Path) -> None:
    """A store with an entity graph builds each tenant's entity nodes in its scope."""
    from graphfuse.indexing import ENTITY_PREFIX, Indexer, SourceRecord, TextEntityExtractor

    async with served(tmp_path, corpus=False) as w:
        # The store was indexed with an entity graph (as `graphfuse index` does for untitled text).
        indexer = Indexer(
            w.store.graph, w.store.vectors, w.service.embedder, extractors=[TextEntityExtractor()], entity_graph=True
        )
        await indexer.aindex([SourceRecord(id="base", text="Operators of Kestrel Dynamics met in Lisbon.")])
        acme = [
            {"id": "a1", "text": "The Zorblax Industries plant opened in Tarvin. acmeword"},
            {"id": "a2", "text": "Quarterly budget notes: Zorblax Industries paid the invoice. acmeword"},
        ]
        globex = [{"id": "g1", "text": "Zorblax Industries bought a warehouse in Quuxville. globexword"}]
        assert (await w.ingest("acme", acme)).status_code == 200
        assert (await w.ingest("globex", globex)).status_code == 200
        stats = {t: (await w.client.get("/v1/graph/stats", headers=w.auth(t))).json() for t in ("acme", "globex")}
        assert stats["acme"]["entities"] == 2  # zorblax industries, tarvin
        assert stats["globex"]["entities"] == 2  # zorblax industries, quuxville
        assert stats["acme"]["relations_by_type"]["MENTIONED_IN"] == 3
        # The same name is two nodes, each under its tenant, with its tenant's metadata.
        nodes = {
            d.id: d.metadata
            async for d in w.store.graph.iter_documents()
            if d.metadata.get("graphfuse_kind") == "entity" and d.metadata.get("name") == "zorblax industries"
        }
        assert nodes.keys() == {f"{ENTITY_PREFIX}acme/zorblax industries", f"{ENTITY_PREFIX}globex/zorblax industries"}
        for node_id, metadata in nodes.items():
            tenant = node_id[len(ENTITY_PREFIX) :].split("/", 1)[0]
            assert metadata["tenant"] == tenant
            # Unfiltered, one hop: the node leads to its own tenant's documents only.
            related = {r.id for r in await w.store.graph.related([node_id], depth=1)}
            own_entities = {x for x in related if x.startswith(f"{ENTITY_PREFIX}{tenant}/")}
            assert related - own_entities == {f"{tenant}/{d['id']}" for d in (acme + globex) if tenant in d["text"]}
        # A hop through acme's entity node reaches acme's other document, never globex's.
        spec = {
            "query": "plant opened in Tarvin",
            "top_k": 10,
            "stages": [{"name": "semantic", "limit": 1}, "hydrate", {"name": "graph", "depth": 2}],
        }
        r = await w.client.post("/v1/retrieve", json=spec, headers=w.auth("acme"))
        assert r.status_code == 200, r.text
        got = {x["id"]: x for x in r.json()["results"]}
        assert set(got) == {"a1", "a2"}
        assert got["a2"]["signals"]["graph"] > 0
        assert "globexword" not in r.text
        for preset in ("multihop", "standard"):
            for tenant, other in (("acme", "globexword"), ("globex", "acmeword")):
                body = {"query": "What did Zorblax Industries do?", "top_k": 10, "preset": preset, "graph": True}
                r = await w.client.post("/v1/retrieve", json=body, headers=w.auth(tenant))
                assert r.status_code == 200, r.text
                assert other not in r.text
                assert r.json()["results"]
                assert not any(x["id"].startswith(ENTITY_PREFIX) for x in r.json()["results"])

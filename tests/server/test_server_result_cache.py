"""The server's result cache: preset results cached per tenant, invalidated by ingest, skippable."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from _server_world import served

from graphfuse import ResultCache
from graphfuse.stores import InMemoryCacheStore


async def test_presets_are_cached_per_tenant_and_ingest_invalidates(tmp_path: Path) -> None:
    async with served(tmp_path) as w:
        rc = ResultCache(InMemoryCacheStore(), [w.store.graph, w.store.vectors])
        w.service.result_cache = rc  # before the first request builds a pipeline
        body = {"query": "orchard harvest", "top_k": 5, "preset": "no_rerank"}
        answers = {}
        for _ in range(2):
            for tenant in ("acme", "globex"):
                r = await w.client.post("/v1/retrieve", json=body, headers=w.auth(tenant))
                assert r.status_code == 200, r.text
                answers.setdefault(tenant, []).append([x["id"] for x in r.json()["results"]])
        assert rc.counts == {"hits": 2, "misses": 2, "errors": 0}
        for tenant, marker in (("acme", "a"), ("globex", "g")):
            first, second = answers[tenant]
            assert first == second
            assert first
            assert all(i.startswith(marker) or i == "shared" for i in first), first

        # no_cache: the pipeline runs, nothing is counted.
        r = await w.client.post("/v1/retrieve", json={**body, "no_cache": True}, headers=w.auth("acme"))
        assert r.status_code == 200
        assert rc.counts["hits"] == 2
        assert rc.counts["misses"] == 2

        # An ingest between two identical requests: the second sees the new document.
        doc = {"id": "a9", "title": "Orchard Harvest", "text": "ACMEWORD orchard harvest orchard harvest."}
        assert (await w.ingest("acme", [doc])).status_code == 200
        r = await w.client.post("/v1/retrieve", json=body, headers=w.auth("acme"))
        assert "a9" in [x["id"] for x in r.json()["results"]]
        assert rc.counts["hits"] == 2

        # Contexts go through the same cache, and may skip it too.
        ctx = {"query": "orchard harvest", "budget": 400, "preset": "no_rerank", "top_k": 5}
        for extra in ({}, {}, {"no_cache": True}):
            r = await w.client.post("/v1/context", json={**ctx, **extra}, headers=w.auth("globex"))
            assert r.status_code == 200, r.text
        # The ingest moved the store generation: the first is a miss (for every tenant), the second a hit.
        assert rc.counts["hits"] == 3
        r = await w.client.post("/v1/retrieve", json={**body, "no_cache": "yes"}, headers=w.auth("acme"))
        assert r.status_code == 422


async def test_requests_with_their_own_stages_are_not_cached(tmp_path: Path) -> None:
    async with served(tmp_path) as w:
        rc = ResultCache(InMemoryCacheStore(), [w.store.graph, w.store.vectors])
        w.service.result_cache = rc
        body = {"query": "orchard harvest", "stages": ["semantic", "hydrate"]}
        for _ in range(2):
            r = await w.client.post("/v1/retrieve", json=body, headers=w.auth("acme"))
            assert r.status_code == 200, r.text
        assert rc.counts == {"hits": 0, "misses": 0, "errors": 0}

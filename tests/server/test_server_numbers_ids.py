"""The server's doors for numbers and reserved ids.

Ingest refuses NaN, infinity and integers beyond 64 bits in metadata, naming the field; a
filter with an out-of-range integer is a 422; a value stored by other means breaks no
tenant's filter; entity ids (``graphfuse:entity:...``) are refused by ingest and delete.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from _server_world import served

from graphfuse.stores._vector_file import row_checksum


@pytest.mark.parametrize("with_keys", [False, True])
@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e400", "9223372036854775808", "9" * 400])
async def test_ingest_refuses_numbers_no_store_keeps(tmp_path: Path, value: str, with_keys: bool) -> None:
    async with served(tmp_path, with_keys=with_keys, corpus=False) as w:
        body = '{"documents": [{"id": "a", "text": "apples", "metadata": {"year": ' + value + "}}]}"
        headers = w.auth("acme") if with_keys else {}
        r = await w.client.post("/v1/ingest", content=body, headers={"Content-Type": "application/json", **headers})
        assert r.status_code == 422, r.text
        detail = r.json()
        assert detail["field"].startswith("documents[0]"), detail
        assert "year" in detail["detail"], detail
        assert await w.store.graph.count_documents() == 0


async def test_filter_with_an_out_of_range_integer_is_a_422(tmp_path: Path) -> None:
    async with served(tmp_path) as w:
        body = '{"query": "apple", "filter": {"year": {"$gte": ' + "9" * 30 + "}}}"
        headers = {"Content-Type": "application/json", **w.auth("acme")}
        r = await w.client.post("/v1/retrieve", content=body, headers=headers)
        assert r.status_code == 422, r.text
        assert "64 bits" in r.json()["detail"]


async def test_a_stored_big_integer_breaks_no_tenants_filter(tmp_path: Path) -> None:
    async with served(tmp_path) as w:
        docs = [{"id": f"y{i}", "text": f"apple orchard year {i}", "metadata": {"year": 2020}} for i in range(3)]
        for tenant in ("acme", "globex"):
            assert (await w.ingest(tenant, docs)).status_code == 200
        # Written into the file by other means (no writer lets it in): an integer beyond float range.
        path = Path(w.store.directory)
        with sqlite3.connect(path / "graph.sqlite") as c:
            meta = json.loads(c.execute("SELECT metadata FROM documents WHERE id = 'acme/y0'").fetchone()[0])
            meta["year"] = 10**400
            c.execute("UPDATE documents SET metadata = ? WHERE id = 'acme/y0'", (json.dumps(meta),))
            c.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
        with sqlite3.connect(path / "vectors.sqlite") as c:
            vector, text = c.execute("SELECT vector, metadata FROM vectors WHERE id = 'acme/y0'").fetchone()
            meta = json.loads(text)
            meta["year"] = 10**400
            text = json.dumps(meta)
            c.execute(
                "UPDATE vectors SET metadata = ?, checksum = ? WHERE id = 'acme/y0'",
                (text, row_checksum("acme/y0", vector, text)),
            )
            c.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
        for tenant in ("acme", "globex"):
            for preset in ("minimal", "standard", "multihop"):
                body = {"query": "apple orchard", "preset": preset, "filter": {"year": {"$gte": 2000}}}
                r = await w.client.post("/v1/retrieve", json=body, headers=w.auth(tenant))
                assert r.status_code == 200, (tenant, preset, r.text)
                # acme's y0 holds 10**400 >= 2000; globex's own y0 holds 2020.
                assert {x["id"] for x in r.json()["results"]} == {"y0", "y1", "y2"}, (tenant, preset)


@pytest.mark.parametrize("with_keys", [False, True])
async def test_entity_ids_are_refused_by_ingest_and_delete(tmp_path: Path, with_keys: bool) -> None:
    async with served(tmp_path, with_keys=with_keys, corpus=False) as w:
        headers = w.auth("acme") if with_keys else {}
        r = await w.client.post(
            "/v1/ingest",
            json={"documents": [{"id": "graphfuse:entity:apple", "text": "not an entity"}]},
            headers=headers,
        )
        assert r.status_code == 422, r.text
        assert r.json()["field"] == "documents[0]"
        assert "graphfuse:entity:apple" in r.json()["detail"]
        assert await w.store.graph.count_documents() == 0
        if with_keys:
            return
        # Keyless: the store's own entity node may not be deleted through the API either.
        from graphfuse import Document

        entity = Document("graphfuse:entity:apple", "apple", {"graphfuse_kind": "entity", "name": "apple"})
        await w.store.graph.store_documents([entity])
        r = await w.client.delete("/v1/documents/graphfuse:entity:apple")
        assert r.status_code == 422, r.text
        assert "graphfuse:entity:apple" in r.json()["detail"]
        assert (await w.store.graph.get_documents(["graphfuse:entity:apple"])) != {}

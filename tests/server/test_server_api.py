"""The HTTP API through httpx against the real app: limits, errors, ingest, delete, concurrency."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from _server_world import ACME, served

from graphfuse.embedders import HashingEmbedder
from graphfuse.server import KeyFile, Limits
from graphfuse.stores import LocalStore

PROBLEM = "application/problem+json"


def _problem(r: Any, status: int, field: str | None) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == PROBLEM
    body: dict[str, Any] = r.json()
    assert body["status"] == status
    if field is not None:
        assert body["field"] == field, body
    return body


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": "apple", "top_k": 0}, "top_k"),
        ({"query": "apple", "top_k": 101}, "top_k"),
        ({"query": "apple", "top_k": "5"}, "top_k"),
        ({"query": "apple", "top_k": True}, "top_k"),
        ({"query": ""}, "query"),
        ({"query": "   "}, "query"),
        ({"query": "x" * 2001}, "query"),
        ({"query": 5}, "query"),
        ({}, "query"),
        ({"query": "apple", "preset": "nope"}, "preset"),
        ({"query": "apple", "preset": "minimal", "stages": ["semantic"]}, "stages"),
        ({"query": "apple", "scorer": "weighted"}, "scorer"),
        ({"query": "apple", "stages": ["semantic", "no_such_stage"]}, "stages[1]"),
        ({"query": "apple", "stages": ["semantic"] * 17}, "stages"),
        ({"query": "apple", "filter": {"lang": {"$near": 1}}}, "filter"),
        ({"query": "apple", "filter": ["lang"]}, "filter"),
        ({"query": "apple", "unknown": 1}, "unknown"),
        ({"query": "apple", "granularity": "page"}, "granularity"),
        ({"query": "apple", "max_per_document": 0}, "max_per_document"),
        ({"query": "apple", "top_k": 3, "max_per_document": 4}, "max_per_document"),
        ({"query": "apple", "max_per_document": "2"}, "max_per_document"),
    ],
)
async def test_retrieve_bad_input_names_the_field(tmp_path: Path, body: dict[str, Any], field: str) -> None:
    async with served(tmp_path, corpus=False) as w:
        r = await w.client.post("/v1/retrieve", json=body, headers=w.auth("acme"))
        _problem(r, 422, field)


@pytest.mark.parametrize(
    ("documents", "field"),
    [
        ([{"id": "a", "text": ""}], "documents[0]"),
        ([{"id": "a"}], "documents[0].text"),
        ([{"id": "", "text": "t"}], "documents[0]"),
        ([{"id": "a", "text": "t"}, {"id": "a", "text": "u"}], "documents[1].id"),
        ([{"id": "a#3", "text": "t"}], "documents[0].id"),
        ([{"id": "a", "text": "t", "metadata": {"graphfuse_kind": "x"}}], "documents[0].metadata.graphfuse_kind"),
        ([{"id": "a", "text": "t", "created_at": "yesterday"}], "documents[0].created_at"),
        ([{"id": "a", "text": "t", "links": "b"}], "documents[0].links"),
        ([{"id": "a", "text": "t", "colour": "red"}], "documents[0].colour"),
        ([], "documents"),
        ([{"id": f"d{i}", "text": "t"} for i in range(6)], "documents"),
    ],
)
async def test_ingest_bad_input_names_the_field(tmp_path: Path, documents: list[Any], field: str) -> None:
    async with served(tmp_path, corpus=False, limits=Limits(max_documents=5)) as w:
        _problem(await w.ingest("acme", documents), 422, field)


async def test_body_too_large_and_bad_json(tmp_path: Path) -> None:
    async with served(tmp_path, corpus=False, limits=Limits(max_body_bytes=1000, max_request_bytes=1000)) as w:
        big = {"documents": [{"id": "a", "text": "word " * 500}]}
        _problem(await w.client.post("/v1/ingest", json=big, headers=w.auth("acme")), 413, "body")
        r = await w.client.post(
            "/v1/retrieve", content=b'{"query": ', headers={**w.auth("acme"), "content-type": "application/json"}
        )
        _problem(r, 422, None)
        # A streamed body without a length is cut off at the limit too.

        async def chunks() -> Any:
            for _ in range(20):
                yield b" " * 100

        r = await w.client.post("/v1/retrieve", content=chunks(), headers=w.auth("acme"))
        _problem(r, 413, "body")


async def test_unknown_route_and_method_are_problems(tmp_path: Path) -> None:
    async with served(tmp_path, corpus=False) as w:
        _problem(await w.client.get("/v1/nothing-here", headers=w.auth("acme")), 404, None)
        _problem(await w.client.put("/v1/retrieve", headers=w.auth("acme")), 405, None)


async def test_ingest_is_idempotent_durable_and_deletable(tmp_path: Path) -> None:
    async with served(tmp_path, corpus=False) as w:
        first = await w.ingest("acme", ACME)
        assert first.status_code == 200
        assert first.json()["documents"] == len(ACME)
        again = await w.ingest("acme", ACME)
        assert again.json() == {**again.json(), "documents": 0, "skipped": len(ACME)}
        # Durable: another connection to the same files sees it at once.
        other = LocalStore.open(tmp_path / "store", create=False)
        try:
            docs = await other.graph.get_documents(["acme/a1"])
            assert docs["acme/a1"].metadata["tenant"] == "acme"
            assert docs["acme/a1"].content == ACME[0]["text"]
        finally:
            await other.graph.close()
            await other.vectors.close()
        # A changed document is rewritten, an unchanged one skipped.
        changed = [{**ACME[0], "text": "ACMEWORD replanted orchard"}, ACME[1]]
        r = await w.ingest("acme", changed)
        assert (r.json()["documents"], r.json()["skipped"]) == (1, 1)
        r = await w.client.delete("/v1/documents/a1", headers=w.auth("acme"))
        assert r.json() == {"deleted": "a1"}
        _problem(await w.client.delete("/v1/documents/a1", headers=w.auth("acme")), 404, None)
        r = await w.client.post(
            "/v1/retrieve", json={"query": "replanted orchard", "preset": "minimal"}, headers=w.auth("acme")
        )
        assert "a1" not in {x["id"] for x in r.json()["results"]}


@pytest.mark.parametrize("corpus_cache", [False, True], ids=["corpus-read-back", "persisted-corpus-cache"])
async def test_ingest_while_querying(tmp_path: Path, corpus_cache: bool) -> None:
    async with served(tmp_path, corpus_cache=corpus_cache) as w:
        auth = w.auth("acme")

        async def query(i: int) -> int:
            r = await w.client.post(
                "/v1/retrieve",
                json={"query": f"apple orchard {i}", "preset": "multihop" if i % 2 else "standard"},
                headers=auth,
            )
            return r.status_code

        async def ingest(i: int) -> int:
            docs = [{"id": f"n{i}-{j}", "text": f"ACMEWORD note {i} {j} about the Apple Orchard"} for j in range(5)]
            return (await w.ingest("acme", docs)).status_code

        codes = await asyncio.gather(*[query(i) for i in range(20)], *[ingest(i) for i in range(5)])
        assert set(codes) == {200}
        r = await w.client.get("/v1/graph/stats", headers=auth)
        assert r.json()["documents"] == len(ACME) + 25
        r = await w.client.post(
            "/v1/retrieve", json={"query": "note 3 4", "preset": "multihop", "top_k": 50}, headers=auth
        )
        assert "n3-4" in {x["id"] for x in r.json()["results"]}
        cache_file = tmp_path / "store" / "corpus_index.npz"
        assert cache_file.exists() is corpus_cache
        if corpus_cache:
            # The multihop pipeline was rebuilt from the file after the ingests, which kept it current.
            stamp = cache_file.stat().st_mtime_ns
            r = await w.client.post(
                "/v1/retrieve", json={"query": "note 1 2", "preset": "multihop", "top_k": 50}, headers=auth
            )
            assert "n1-2" in {x["id"] for x in r.json()["results"]}
            assert cache_file.stat().st_mtime_ns == stamp


class _Failing:
    """A graph store whose lookups fail with an internal detail that must not reach clients."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def get_documents(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("SECRET-INTERNAL-DETAIL /var/lib/thing")


async def test_unexpected_errors_never_show_a_stack_trace(tmp_path: Path) -> None:
    async with served(tmp_path, corpus=False) as w:
        w.service.graph = _Failing(w.service.graph)
        r = await w.client.delete("/v1/documents/a1", headers=w.auth("acme"))
        body = _problem(r, 500, None)
        assert "SECRET" not in r.text
        assert "Traceback" not in r.text
        assert body["error_id"]
        health = (await w.client.get("/health")).json()
        assert health["checks"]["graph_store"] == "unreachable"
        assert health["status"] == "degraded"


async def test_without_keys_the_whole_store_is_served(tmp_path: Path) -> None:
    async with served(tmp_path, with_keys=False) as w:
        r = await w.client.post("/v1/ingest", json={"documents": ACME})
        assert r.status_code == 200
        r = await w.client.post("/v1/retrieve", json={"query": "apple orchard", "top_k": 3, "graph": True})
        assert r.status_code == 200
        results = r.json()["results"]
        assert results[0]["id"] in {"a1", "a2"}
        assert set(results[0]["signals"]) >= {"semantic"}
        # a3 links to a1 and a2 mentions "Apple Orchard": the subgraph shows those relations.
        r = await w.client.post(
            "/v1/retrieve", json={"query": "apple orchard cherry banana", "top_k": 4, "graph": True}
        )
        edges = {(e["source"], e["target"], e["type"]) for e in r.json()["graph"]["edges"]}
        assert ("a3", "a1", "LINKS_TO") in edges
        assert ("a2", "a1", "MENTIONS") in edges
        stats = (await w.client.get("/v1/graph/stats")).json()
        assert stats["documents"] == len(ACME)
        assert stats["relations_by_type"] == {"LINKS_TO": 1, "MENTIONS": 1}
        assert stats["degree"]["distribution"]["0"] == 1  # "shared" relates to nothing
        r = await w.client.post("/v1/retrieve", json={"query": "apple", "filter": {"tenant": "x"}})
        assert r.status_code == 200  # no tenants: the key is an ordinary metadata key


async def test_docs_openapi_and_dashboard_are_served_offline(tmp_path: Path) -> None:
    async with served(tmp_path, corpus=False) as w:
        spec = (await w.client.get("/openapi.json")).json()
        assert {"/v1/retrieve", "/v1/ingest", "/v1/documents/{doc_id}", "/v1/graph/stats", "/health"} <= set(
            spec["paths"]
        )
        page = await w.client.get("/docs")
        assert page.status_code == 200
        assert "cdn" not in page.text.lower()
        for line in page.text.splitlines():
            if ".js" in line or ".css" in line:
                assert "http" not in line
        r = await w.client.get("/")
        assert r.status_code == 200
        assert "text/html" in r.headers["content-type"]
        m = await w.client.get("/metrics")
        assert "graphfuse_http_requests_total" in m.text


def test_key_file_keeps_hashes_only(tmp_path: Path) -> None:
    keys = KeyFile(tmp_path / "k" / "keys.json")
    record, key = keys.add("acme")
    raw = (tmp_path / "k" / "keys.json").read_text()
    assert key not in raw
    assert key.split("_", 2)[2] not in raw  # the secret (it may itself hold "_")
    assert record.key_id in raw
    assert stat.S_IMODE(os.stat(tmp_path / "k" / "keys.json").st_mode) == 0o600
    assert keys.tenant_for(key) == "acme"
    assert keys.tenant_for(key[:-1] + ("A" if key[-1] != "A" else "B")) is None
    assert keys.tenant_for("") is None
    with pytest.raises(Exception, match="tenant name"):
        keys.add("no/slash")
    (tmp_path / "bad.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(Exception, match="not a GraphFuse key file"):
        KeyFile(tmp_path / "bad.json").tenant_for(key)


async def test_hashing_store_fixture_uses_its_embedder(tmp_path: Path) -> None:
    # The served store records its embedder: a second service with another one is refused.
    async with served(tmp_path, corpus=False) as w:
        with pytest.raises(Exception, match="embedder"):
            await w.store.ause_embedder(HashingEmbedder(dimension=32))


async def test_context_and_session_tokens(tmp_path: Path) -> None:
    async with served(tmp_path) as w:
        auth = w.auth("acme")
        budget = 60
        r = await w.client.post(
            "/v1/context",
            json={"query": "apple orchard", "budget": budget, "format": "passages", "preset": "minimal", "top_k": 5},
            headers=auth,
        )
        assert r.status_code == 200, r.text
        basic = r.json()
        assert 0 < basic["tokens"] <= budget
        assert basic["sources"]
        assert all(not s["id"].startswith("acme/") for s in basic["sources"])
        assert "acme/" not in basic["text"]
        r = await w.client.post(
            "/v1/context",
            json={"query": "apple orchard", "budget": budget, "format": "graph", "preset": "multihop"},
            headers=auth,
        )
        assert r.status_code == 200, r.text
        graph = r.json()
        stats = (await w.client.get("/v1/stats/session", headers=auth)).json()
        assert stats["baseline"] == "minimal:passages"
        assert stats["pipelines"]["minimal:passages"] == {
            "calls": 1,
            "tokens": basic["tokens"],
            "mean_tokens": float(basic["tokens"]),
            "tokens_saved": 0.0,
        }
        assert stats["pipelines"]["multihop:graph"]["tokens_saved"] == basic["tokens"] - graph["tokens"]
        # Per tenant: the other tenant's session is its own.
        other = (await w.client.get("/v1/stats/session", headers=w.auth("globex"))).json()
        assert other["pipelines"] == {}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": "apple", "budget": 0}, "budget"),
        ({"query": "apple", "budget": 32001}, "budget"),
        ({"query": "apple", "format": "prose"}, "format"),
        ({"query": "apple", "top_k": 0}, "top_k"),
        ({"query": ""}, "query"),
        ({"query": "apple", "preset": "nope"}, "preset"),
    ],
)
async def test_context_bad_input_names_the_field(tmp_path: Path, body: dict[str, Any], field: str) -> None:
    async with served(tmp_path, corpus=False) as w:
        _problem(await w.client.post("/v1/context", json=body, headers=w.auth("acme")), 422, field)


@pytest.mark.slow
async def test_compare_answers_three_ways_and_judges(tmp_path: Path) -> None:
    generator_module = pytest.importorskip("graphfuse_openai")
    from graphfuse.compare import Judge
    from graphfuse.testing import ChatCompletionsServer

    with ChatCompletionsServer(answers={"harvested": "Apples from the Apple Orchard"}) as chat:
        generator = generator_module.OpenAIGenerator("gpt-4o-mini", base_url=chat.url, api_key=chat.api_key)
        async with served(tmp_path) as w:
            w.service.generator = generator
            w.service.judge = Judge(generator)
            auth = w.auth("acme")
            r = await w.client.post(
                "/v1/compare", json={"question": "What is harvested?", "answer": "apples", "budget": 200}, headers=auth
            )
            assert r.status_code == 200, r.text
            got = r.json()
            assert set(got["answers"]) == {"llm_only", "basic", "graph"}
            for name, answer in got["answers"].items():
                assert answer["text"] == "Apples from the Apple Orchard", name
                assert answer["prompt_tokens"] > 0
            assert got["answers"]["llm_only"]["context"] is None
            sources = got["answers"]["basic"]["context"]["sources"]
            assert sources
            assert {s["id"] for s in sources} <= {d["id"] for d in ACME}
            assert "GLOBEXWORD" not in r.text
            assert "acme/" not in r.text
            assert set(got["verdicts"]) == {"llm_only", "basic", "graph"}
            assert all(v["correctness"] >= 9 for v in got["verdicts"].values())
            stats = (await w.client.get("/v1/stats/session", headers=auth)).json()["pipelines"]
            assert stats["compare:basic"]["tokens_saved"] == 0.0
            saved = stats["compare:llm_only"]["tokens_saved"]
            assert saved == got["answers"]["basic"]["prompt_tokens"] - got["answers"]["llm_only"]["prompt_tokens"]
            assert saved > 0
            # Without the expected answer there is nothing to judge against, and it says so.
            r = await w.client.post("/v1/compare", json={"question": "What is harvested?"}, headers=auth)
            assert r.json()["verdicts"] == {}
            assert r.json()["notes"]
        await generator.close()


async def test_ingest_into_a_store_with_an_entity_graph_keeps_building_it(tmp_path: Path) -> None:
    from graphfuse.indexing import ENTITY_PREFIX, Indexer, SourceRecord, TextEntityExtractor

    async with served(tmp_path, with_keys=False, corpus=False) as w:
        chats = [
            SourceRecord("c1", "Greta Berg: I moved to Hamburg last year."),
            SourceRecord("c2", "Wolfgang Schulz: My cousin Greta Berg plays drums."),
        ]
        indexer = Indexer(
            w.store.graph, w.store.vectors, w.service.embedder, extractors=[TextEntityExtractor()], entity_graph=True
        )
        await indexer.aindex(chats)
        r = await w.client.post("/v1/ingest", json={"documents": [{"id": "c3", "text": "Greta Berg sold her drums."}]})
        assert r.status_code == 200, r.text
        assert r.json()["relations"] > 0
        related = {x.id for x in await w.store.graph.related(["c3"], depth=1)}
        assert ENTITY_PREFIX + "greta berg" in related
        stats = (await w.client.get("/v1/graph/stats")).json()
        assert stats["documents"] == 3
        assert stats["entities"] >= 3  # greta berg, wolfgang schulz, hamburg
        assert "MENTIONED_IN" in stats["relations_by_type"]
        assert "OTHER" not in stats["relations_by_type"]


async def test_retrieve_returns_passages_naming_their_page_or_pages_on_request(tmp_path: Path) -> None:
    long_text = (
        " ".join(f"Paragraph {i} is about orchards and nothing else." for i in range(200)) + " Apples ripen in May."
    )
    async with served(tmp_path, corpus=False) as w:
        r = await w.client.post(
            "/v1/ingest",
            json={"documents": [{"id": "guide", "text": long_text, "title": "Guide"}]},
            headers=w.auth("acme"),
        )
        assert r.status_code == 200, r.text
        body = {"query": "when do apples ripen", "top_k": 3, "preset": "minimal"}
        passages = (await w.client.post("/v1/retrieve", json=body, headers=w.auth("acme"))).json()["results"]
        assert len(passages) == 1  # one passage of the page by default
        assert passages[0]["id"].startswith("guide#")
        assert passages[0]["parent_id"] == "guide"
        more = {**body, "max_per_document": 3}
        three = (await w.client.post("/v1/retrieve", json=more, headers=w.auth("acme"))).json()["results"]
        assert len(three) == 3
        assert {p["parent_id"] for p in three} == {"guide"}
        whole = {**body, "granularity": "document"}
        pages = (await w.client.post("/v1/retrieve", json=whole, headers=w.auth("acme"))).json()["results"]
        assert [p["id"] for p in pages] == ["guide"]


async def test_the_subgraph_of_passages_relates_their_pages(tmp_path: Path) -> None:
    from _server_world import CHUNKED

    async with served(tmp_path, corpus=False) as w:
        r = await w.ingest("acme", CHUNKED)
        assert r.status_code == 200, r.text
        assert r.json()["chunks"] >= 6  # every page is several passages
        for preset in ("minimal", "multihop"):
            body = {"query": "orchard cider calendar crew season", "top_k": 6, "preset": preset, "graph": True}
            r = await w.client.post("/v1/retrieve", json=body, headers=w.auth("acme"))
            assert r.status_code == 200, r.text
            got = r.json()
            results = got["results"]
            assert {x["parent_id"] for x in results} == {"orchard", "cider", "calendar"}, results
            by_page = {x["parent_id"]: x["id"] for x in results}
            nodes = {n["id"]: n for n in got["graph"]["nodes"]}
            assert {nodes[x["id"]]["page"] for x in results} == {"orchard", "cider", "calendar"}
            edges = {(e["source"], e["target"], e["type"]) for e in got["graph"]["edges"]}
            # The page-level link and the mentions in passages that may not be among the results.
            assert (by_page["cider"], by_page["orchard"], "LINKS_TO") in edges, edges
            assert (by_page["cider"], by_page["orchard"], "MENTIONS") in edges, edges
            assert (by_page["calendar"], by_page["cider"], "MENTIONS") in edges, edges
            for e in got["graph"]["edges"]:
                assert e["source"] in nodes
                assert e["target"] in nodes
                assert e["pages"][0] != e["pages"][1]
        # Another tenant sees none of it.
        r = await w.client.post(
            "/v1/retrieve", json={"query": "orchard cider", "graph": True}, headers=w.auth("globex")
        )
        assert r.json()["graph"]["nodes"] == []
        assert r.json()["graph"]["edges"] == []

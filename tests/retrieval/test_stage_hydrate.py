"""Hydrate: one batch, signals kept, hydrated candidates skipped, vanished or filtered documents dropped."""

from __future__ import annotations

import pytest
from _stage_fakes import FakeGraphStore
from conftest import World, corpus_documents

from graphfuse import Candidate, Document, InvalidInput, Query
from graphfuse.hosts import StageRunContext
from graphfuse.stages import Hydrate


def bare(*ids: str) -> list[Candidate]:
    return [Candidate(Document(i), {"semantic": 0.5 + i_ / 10}) for i_, i in enumerate(ids)]


async def test_loads_content_and_keeps_signals_and_order(world: World) -> None:
    before = bare("b", "a", "y")
    out = list(await Hydrate(world.graph).run(Query("q"), before, StageRunContext()))
    assert [c.id for c in out] == ["b", "a", "y"]
    assert out[1].document.content == "apple orchard harvest in autumn"
    assert out[1].document.metadata["tenant"] == "acme"
    assert [dict(c.signals) for c in out] == [dict(c.signals) for c in before]
    assert all(c.document.content is None for c in before)  # inputs untouched


async def test_drops_documents_that_no_longer_exist(world: World) -> None:
    await world.graph.delete_documents(["b"])
    out = await Hydrate(world.graph).run(Query("q"), bare("a", "b", "ghost"), StageRunContext())
    assert [c.id for c in out] == ["a"]


async def test_filter_drops_other_tenants_fetched_or_already_hydrated(world: World) -> None:
    acme = Query.of("q", filter={"tenant": "acme"})
    out = await Hydrate(world.graph).run(acme, bare("a", "x", "y"), StageRunContext())
    assert [c.id for c in out] == ["a", "y"]
    hydrated_x = Candidate(Document("x", "already here", {"tenant": "globex"}), {"semantic": 0.9})
    assert list(await Hydrate(world.graph).run(acme, [hydrated_x], StageRunContext())) == []


async def test_one_batch_and_hydrated_candidates_are_not_fetched() -> None:
    store = FakeGraphStore()
    await store.store_documents(corpus_documents())
    ready = Candidate(Document("a", "my own content"), {"semantic": 1.0})
    out = await Hydrate(store).run(Query("q"), [ready, *bare("b", "c")], StageRunContext())
    assert store.calls == [("get_documents", ("b", "c"))]
    assert out[0] is ready
    assert out[0].document.content == "my own content"


async def test_nothing_to_fetch_means_no_call() -> None:
    store = FakeGraphStore()
    assert list(await Hydrate(store).run(Query("q"), [], StageRunContext())) == []
    assert store.calls == []


def test_constructor_validation() -> None:
    with pytest.raises(InvalidInput, match="graph_store"):
        Hydrate(object())  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="name"):
        Hydrate(FakeGraphStore(), name="bad name")
    assert Hydrate(FakeGraphStore(), name="hydrate2").name == "hydrate2"


async def test_has_no_per_call_options() -> None:
    with pytest.raises(InvalidInput, match="hydrate"):
        Hydrate(FakeGraphStore()).check_options({"limit": 3})


async def test_a_document_is_read_once_per_run() -> None:
    store = FakeGraphStore()
    await store.store_documents(corpus_documents())
    context = StageRunContext()
    await Hydrate(store, name="first").run(Query("q"), bare("a", "b"), context)
    out = await Hydrate(store).run(Query("q"), bare("b", "c", "a"), context)
    assert store.calls == [("get_documents", ("a", "b")), ("get_documents", ("c",))]
    assert [c.id for c in out] == ["b", "c", "a"]
    assert out[0].document.content is not None
    await Hydrate(store, name="again").run(Query("q"), bare("c", "a"), context)
    assert len(store.calls) == 2  # everything loaded in this run already: no read
    await Hydrate(store).run(Query("q"), bare("a"), StageRunContext())  # another run reads again
    assert store.calls[-1] == ("get_documents", ("a",))


async def test_a_document_loaded_earlier_in_the_run_is_still_filtered(world: World) -> None:
    context = StageRunContext()
    await Hydrate(world.graph, name="first").run(Query("q"), bare("a", "x"), context)
    acme = Query.of("q", filter={"tenant": "acme"})
    out = await Hydrate(world.graph).run(acme, bare("a", "x"), context)
    assert [c.id for c in out] == ["a"]


async def test_another_stores_documents_are_not_taken() -> None:
    first, second = FakeGraphStore(), FakeGraphStore()
    await first.store_documents(corpus_documents())
    await second.store_documents([Document("a", "the second store's a")])
    context = StageRunContext()
    await Hydrate(first, name="first").run(Query("q"), bare("a"), context)
    out = await Hydrate(second).run(Query("q"), bare("a"), context)
    assert second.calls == [("get_documents", ("a",))]
    assert out[0].document.content == "the second store's a"


async def test_parents_are_read_ahead_in_the_same_call() -> None:
    store = FakeGraphStore()
    page = Document("page", "the whole page", {"graphfuse_chunks": 2})
    chunk = Document("page#0", "its first part", {"parent_id": "page"})
    await store.store_documents([page, chunk, *corpus_documents()])
    context = StageRunContext()
    stage = Hydrate(store, name="walk", parents="parent_id")
    out = await stage.run(Query("q"), [Candidate(chunk, {"ppr": 0.5}), *bare("a")], context)
    assert [c.id for c in out] == ["page#0", "a"]  # the page is read, not returned
    assert store.calls == [("get_documents", ("a", "page"))]
    folded = await Hydrate(store).run(Query("q"), [Candidate(Document("page"), {"ppr": 0.5})], context)
    assert folded[0].document.content == "the whole page"
    assert len(store.calls) == 1
    assert repr(stage) == "Hydrate(name='walk', parents='parent_id')"
    with pytest.raises(InvalidInput, match="parents"):
        Hydrate(store, parents="")

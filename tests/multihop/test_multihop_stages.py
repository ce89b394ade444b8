"""Multi-hop stages: BM25 (against hand-computed scores), entity seeds, Personalized PageRank, the preset."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pytest
import scipy.sparse as sp

from graphfuse import Candidate, Document, InvalidInput, MetadataFilter, Query, Relation, presets
from graphfuse.embedders import HashingEmbedder
from graphfuse.hosts import StageRunContext
from graphfuse.indexing import Indexer, SourceRecord, TitleLinker
from graphfuse.multihop import (
    BM25Index,
    BM25Search,
    BridgeSearch,
    EntitySeeds,
    PersonalizedPageRank,
    multihop,
    personalized_pagerank,
    subject_span,
)
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore


def _ctx() -> StageRunContext:
    return StageRunContext()


def test_bm25_matches_a_hand_computed_score() -> None:
    docs = [("d1", "apple banana apple"), ("d2", "banana cherry"), ("d3", "cherry cherry cherry date")]
    index = BM25Index(docs, k1=1.2, b=0.75)
    n, avgdl = 3, (3 + 2 + 4) / 3

    def idf(df: int) -> float:
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def term(tf: int, dl: int, df: int) -> float:
        return idf(df) * tf * 2.2 / (tf + 1.2 * (1 - 0.75 + 0.75 * dl / avgdl))

    scores = index.scores("apple cherry apple")  # a repeated query term counts once
    assert scores[0] == pytest.approx(term(2, 3, 1))
    assert scores[1] == pytest.approx(term(1, 2, 2))
    assert scores[2] == pytest.approx(term(3, 4, 2))
    assert [i for i, _ in index.search("apple cherry", limit=2)] == ["d1", "d3"]
    assert index.search("unknown words") == []


def test_bm25_filter_and_validation() -> None:
    index = BM25Index([("a", "red fox", {"lang": "en"}), ("b", "red fuchs", {"lang": "de"})])
    assert [i for i, _ in index.search("red", filter=MetadataFilter.parse({"lang": "de"}))] == ["b"]
    with pytest.raises(InvalidInput, match="twice"):
        BM25Index([("a", "x"), ("a", "y")])
    with pytest.raises(InvalidInput, match="b must be"):
        BM25Index([("a", "x")], b=2)


async def test_bm25_stage_adds_candidates_and_normalises() -> None:
    stage = BM25Search(BM25Index([("a", "graph retrieval"), ("b", "graph"), ("c", "other")]))
    existing = Candidate(Document("b"), {"semantic": 0.5})
    out = await stage.run(Query("graph retrieval"), [existing], _ctx())
    by_id = {c.id: c.signals for c in out}
    assert by_id["a"]["bm25"] == 1.0
    assert 0 < by_id["b"]["bm25"] < 1
    assert by_id["b"]["semantic"] == 0.5
    assert "c" not in by_id
    out = await stage.run(Query("graph", options={"bm25": {"limit": 1}}), [], _ctx())
    assert len(out) == 1
    with pytest.raises(InvalidInput, match="unknown per-call option"):
        await stage.run(Query("graph", options={"bm25": {"k": 1}}), [], _ctx())


async def _toy_store() -> InMemoryGraphStore:
    store = InMemoryGraphStore()
    docs = {
        "film": ("Gaby: A True Story is a film directed by Luis Mandoki.", "Gaby: A True Story"),
        "mandoki": ("Luis Mandoki was born in Mexico City.", "Luis Mandoki"),
        "mexico": ("Mexico City is the capital of Mexico.", "Mexico City"),
        "other": ("An unrelated passage.", "Other"),
        "dell1": ("Dell makes computers.", "Dell"),
        "dell2": ("Dell is based in Texas.", "Dell"),
    }
    await store.store_documents([Document(i, t, {"title": title}) for i, (t, title) in docs.items()])
    await store.create_relations(
        [Relation("film", "mandoki", "MENTIONS"), Relation("mandoki", "mexico", "MENTIONS", weight=0.5)]
    )
    return store


async def test_entity_seeds_find_titles_in_the_question() -> None:
    store = await _toy_store()
    linker = TitleLinker({"Gaby: A True Story": ["film"], "Dell": ["dell1", "dell2"], "Mexico City": ["mexico"]})
    stage = EntitySeeds(store, linker)
    out = await stage.run(Query("Where was the director of Gaby: A True Story born? Not Dell."), [], _ctx())
    signals = {c.id: c.signals["entity"] for c in out}
    assert signals == {"film": 1.0, "dell1": 0.3, "dell2": 0.3}  # one word: 0.6, shared by two passages
    assert all(c.document.content for c in out)
    filtered = await stage.run(Query("Gaby: A True Story", filter=MetadataFilter.parse({"title": "Other"})), [], _ctx())
    assert filtered == []
    kept = await stage.run(Query("nothing here"), [Candidate(Document("x"), {"semantic": 0.2})], _ctx())
    assert [c.id for c in kept] == ["x"]


def test_personalized_pagerank_on_a_toy_graph() -> None:
    # a - b - c, and d alone; restart at a.
    a = sp.csr_matrix(([1.0, 1.0], ([0, 1], [1, 2])), shape=(4, 4))
    x = personalized_pagerank(a, np.array([1.0, 0, 0, 0]), damping=0.5, iterations=200)
    assert x[0] > x[1] > x[2] > 0
    assert x[3] == 0
    assert x.sum() == pytest.approx(1.0)
    # Closed form for the 3-node path: x = (1-d) (I - d W)^-1 p.
    w = np.array([[0, 0.5, 0], [1, 0, 1], [0, 0.5, 0]])
    expected = 0.5 * np.linalg.solve(np.eye(3) - 0.5 * w, np.array([1.0, 0, 0]))
    assert x[:3] == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("use_filter", [False, True])
async def test_ppr_stage_ranks_by_graph_distance(use_filter: bool) -> None:
    store = await _toy_store()
    stage = PersonalizedPageRank(store, damping=0.7, degree_exponent=0.0, reverse_weight=1.0, limit=5)
    seeds = [Candidate(Document("film"), {"entity": 1.0})]
    query = Query("q", filter=MetadataFilter.parse({"title": {"$exists": True}}) if use_filter else None)
    out = await stage.run(query, seeds, _ctx())
    ppr = {c.id: c.signals["ppr"] for c in out}
    assert ppr["film"] == 1.0
    assert ppr["film"] > ppr["mandoki"] > ppr["mexico"] > 0
    assert "other" not in ppr
    assert "dell1" not in ppr
    assert out[0].id == "film"
    assert {c.id for c in out[1:]} == {"mandoki", "mexico"}


async def test_ppr_reverse_weight_prefers_what_a_seed_mentions() -> None:
    store = InMemoryGraphStore()
    await store.store_documents([Document(i, i) for i in ("seed", "mentioned", "mentioner")])
    await store.create_relations([Relation("seed", "mentioned", "MENTIONS"), Relation("mentioner", "seed", "MENTIONS")])
    seeds = [Candidate(Document("seed"), {"semantic": 1.0})]
    out = await PersonalizedPageRank(store, reverse_weight=0.25).run(Query("q"), seeds, _ctx())
    ppr = {c.id: c.signals["ppr"] for c in out}
    assert ppr["mentioned"] > ppr["mentioner"]
    both = await PersonalizedPageRank(store, reverse_weight=1.0).run(Query("q"), seeds, _ctx())
    ppr = {c.id: c.signals["ppr"] for c in both}
    assert ppr["mentioned"] == pytest.approx(ppr["mentioner"])


async def test_ppr_without_seeds_and_validation() -> None:
    store = await _toy_store()
    stage = PersonalizedPageRank(store)
    untouched = [Candidate(Document("film"), {"access": 1.0})]
    assert await stage.run(Query("q"), untouched, _ctx()) == untouched
    with pytest.raises(InvalidInput, match="damping"):
        PersonalizedPageRank(store, damping=1.0)
    with pytest.raises(InvalidInput, match="seed_signals"):
        PersonalizedPageRank(store, seed_signals={"semantic": 0.0})
    with pytest.raises(InvalidInput, match="damping"):
        await stage.run(Query("q", options={"ppr": {"damping": 0}}), untouched, _ctx())


async def test_multihop_preset_finds_the_second_hop() -> None:
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(64)
    records = [
        SourceRecord(
            "film", "Gaby: A True Story is a 1987 drama film directed by Luis Mandoki.", title="Gaby: A True Story"
        ),
        SourceRecord("mandoki", "Luis Mandoki is a film director, born 1954.", title="Luis Mandoki"),
        SourceRecord("noise1", "A passage about the birth of stars in nebulae.", title="Star formation"),
        SourceRecord("noise2", "Where was the river born? In the mountains.", title="River"),
    ]
    linker = TitleLinker()
    await Indexer(graph, vectors, embedder, extractors=[linker]).aindex(records)
    bm25 = BM25Index((r.id, f"{r.title} {r.text}") for r in records)
    assert "multihop" in presets.names()
    pipeline = presets.build(
        "multihop", graph_store=graph, vector_store=vectors, embedder=embedder, bm25=bm25, linker=linker
    )
    full = [
        "semantic",
        "bm25",
        "entity",
        "hydrate_seeds",
        "aggregate_seeds",
        "bridge",
        "ppr",
        "hydrate_ppr",
        "aggregate",
        "hydrate",
    ]
    assert [s.name for s in pipeline.stages] == full
    results = await pipeline.aretrieve("Where was the director of film Gaby: A True Story born?", top_k=2)
    assert [r.id for r in results] == ["film", "mandoki"]
    assert results[1].document.content is not None
    no_extras = multihop(graph, vectors, embedder)
    assert [s.name for s in no_extras.stages] == [n for n in full if n not in ("bm25", "entity", "bridge")]
    with pytest.raises(InvalidInput, match="unknown stage"):
        multihop(graph, vectors, embedder, rerank={"top_k": 3})


def test_registry_factories(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from graphfuse.plugins import Components, get_registry

    registry = get_registry()
    assert {"bm25", "entity_seeds", "bridge", "ppr"} <= set(registry.names("stage"))
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "a", "title": "Alpha Centauri", "text": "a star"}\n', encoding="utf-8")
    components = Components(graph_store=InMemoryGraphStore())
    bm25 = registry.build_stage("bm25", components, corpus=str(corpus), limit=5)
    assert isinstance(bm25, BM25Search)
    assert "1 documents" in repr(bm25)
    entity = registry.build_stage("entity_seeds", components, corpus=[corpus])
    assert isinstance(entity, EntitySeeds)
    assert entity.name == "entity"
    assert "1 titles" in repr(entity)
    assert registry.build_stage("ppr", components, damping=0.6).name == "ppr"
    bridge = registry.build_stage("bridge", Components(), corpus=str(corpus), seeds=1)
    assert isinstance(bridge, BridgeSearch)
    assert "1 documents" in repr(bridge)
    assert "1 subjects" in repr(bridge)  # the bridge searches names among the passages' subjects
    assert "subjects" not in repr(bm25)
    with pytest.raises(InvalidInput, match="stage 'ppr' needs a graph_store"):
        registry.build_stage("ppr", Components())
    with pytest.raises(InvalidInput, match="stage 'entity_seeds' needs a graph_store"):
        registry.build_stage("entity_seeds", Components(), corpus=str(corpus))
    with pytest.raises(InvalidInput, match="corpus"):
        registry.build_stage("bm25", components)


class _RelatedOnly:
    """A graph store offering only the protocol (no adjacency): PPR walks related()."""

    def __init__(self, inner: InMemoryGraphStore) -> None:
        self.related = inner.related
        self.get_documents = inner.get_documents


class _SyncAdjacency(_RelatedOnly):
    """A plugin store whose adjacency() is a plain method."""

    def __init__(self, inner: InMemoryGraphStore, snapshot: tuple[tuple[str, ...], sp.csr_matrix]) -> None:
        super().__init__(inner)
        self.calls: list[object] = []
        self._snapshot = snapshot

    def adjacency(self, relation_types: object) -> tuple[tuple[str, ...], sp.csr_matrix]:
        self.calls.append(relation_types)
        return self._snapshot


async def test_ppr_uses_the_public_adjacency_and_falls_back_to_related() -> None:
    store = await _toy_store()
    seeds = [Candidate(Document("film"), {"entity": 1.0})]
    options = {"damping": 0.7, "degree_exponent": 0.0, "reverse_weight": 1.0, "limit": 5}

    def ranking(out: list[Candidate]) -> dict[str, float]:
        return {c.id: round(c.signals["ppr"], 9) for c in out}

    whole = ranking(await PersonalizedPageRank(store, **options).run(Query("q"), seeds, _ctx()))  # type: ignore[arg-type]
    walked = await PersonalizedPageRank(_RelatedOnly(store), **options).run(Query("q"), seeds, _ctx())  # type: ignore[arg-type]
    by_id = ranking(walked)  # related() has no weights, so the numbers differ, not the order
    assert sorted(by_id, key=by_id.__getitem__) == sorted(whole, key=whole.__getitem__) == ["mexico", "mandoki", "film"]
    sync = _SyncAdjacency(store, await store.adjacency())
    stage = PersonalizedPageRank(sync, relation_types=["MENTIONS"], **options)  # type: ignore[arg-type]
    assert ranking(await stage.run(Query("q"), seeds, _ctx())) == whole
    await stage.run(Query("q"), seeds, _ctx())
    assert sync.calls == [("MENTIONS",), ("MENTIONS",)]

    # Relation types reach the store's adjacency: with none of the graph's types, no walk.
    typed = PersonalizedPageRank(store, relation_types=["CITES"], **options)  # type: ignore[arg-type]
    assert ranking(await typed.run(Query("q"), seeds, _ctx())) == {"film": 1.0}


async def test_corpus_indexes_rebuild_bm25_and_titles_from_a_store(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from graphfuse.indexing import TokenChunker
    from graphfuse.multihop import acorpus_indexes
    from graphfuse.stores import SQLiteGraphStore

    graph, vectors, embedder = SQLiteGraphStore(tmp_path / "g.sqlite"), LocalVectorStore(), HashingEmbedder(32)
    long_text = " ".join(f"Luis Mandoki directed film number {i} in Mexico." for i in range(12))
    records = [
        SourceRecord("film", "Gaby: A True Story is a film by Luis Mandoki.", title="Gaby: A True Story"),
        SourceRecord("mandoki", long_text, title="Luis Mandoki", metadata={"lang": "en"}),
        SourceRecord("untitled", "A passage with no title about zebras."),
    ]
    chunker = TokenChunker(max_tokens=40, overlap=4)
    await Indexer(graph, vectors, embedder, chunker=chunker, extractors=[TitleLinker()]).aindex(records)
    assert await graph.count_documents() > 3  # the long passage was chunked

    bm25, linker = await acorpus_indexes(graph, batch_size=2)
    assert sorted(bm25.ids) == ["film", "mandoki", "untitled"]  # documents, not their chunks
    assert bm25.search("zebras") == [("untitled", pytest.approx(bm25.search("zebras")[0][1]))]
    assert bm25.search("Gaby True Story", limit=1)[0][0] == "film"  # the title is searchable
    english = bm25.search("Mandoki", filter=MetadataFilter.parse({"lang": "en"}))
    assert [i for i, _ in english] == ["mandoki"]
    assert bm25.search("Mandoki", filter=MetadataFilter.parse({"graphfuse_kind": "document"})) == []
    mentions = linker.extract("Where was the director of Gaby: A True Story born? Ask Luis Mandoki.")
    assert {t for m in mentions for t in m.targets} == {"film", "mandoki"}
    await graph.close()

    with pytest.raises(InvalidInput, match="cannot list its documents"):
        await acorpus_indexes(_RelatedOnly(InMemoryGraphStore()))  # type: ignore[arg-type]


def test_multihop_preset_is_built_in_and_lazy() -> None:
    import subprocess
    import sys

    code = """
import sys
from graphfuse import presets
assert "multihop" in presets.names(), presets.names()
assert "graphfuse.multihop" not in sys.modules
import graphfuse
from graphfuse.embedders import HashingEmbedder
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore
g, v, e = InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(8)
p = presets.build("multihop", graph_store=g, vector_store=v, embedder=e)
names = [s.name for s in p.stages]  # the corpus indexes come from the (empty) graph store
assert names[:2] == ["semantic", "bm25"] and "ppr" in names and names[-1] == "hydrate", p.stages
from graphfuse.multihop import multihop
assert presets.get("multihop").factory() is multihop
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    done = subprocess.run(
        [sys.executable, "-c", "import sys, graphfuse; assert 'scipy' not in sys.modules, 'heavy import'"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


async def test_multihop_preset_opt_in_recency_popularity_and_centrality() -> None:
    from datetime import datetime, timedelta, timezone

    from graphfuse import Document, InvalidInput, Relation, VectorRecord
    from graphfuse.embedders import HashingEmbedder
    from graphfuse.multihop import MULTIHOP_WEIGHTS, multihop
    from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(dimension=64)
    docs = [
        Document("old", "river delta report", {"access_count": 1}, created_at=now - timedelta(days=900)),
        Document("new", "river delta report", {"access_count": 50}, created_at=now),
    ]
    await graph.store_documents(docs)
    await graph.create_relations([Relation("old", "new")])
    vecs = await embedder.embed_documents([d.content or "" for d in docs])
    await vectors.upsert([VectorRecord(d.id, v) for d, v in zip(docs, vecs, strict=True)])

    plain = multihop(graph, vectors, embedder)
    assert not {"temporal", "pagerank", "access"} & {s.name for s in plain.stages}

    weights = {**MULTIHOP_WEIGHTS, "temporal": 0.5, "access": 0.5}
    timed = multihop(graph, vectors, embedder, weights=weights, temporal={"clock": lambda: now}, access={})
    names = [s.name for s in timed.stages]
    assert names[-2:] == ["temporal", "access"]
    results = await timed.aretrieve("river delta report", top_k=2)
    assert [r.id for r in results] == ["new", "old"]  # same text: recency and access decide
    assert results[0].signals["temporal"] == 1.0
    assert results[0].signals["access"] == 1.0

    with pytest.raises(InvalidInput, match="temporal"):
        multihop(graph, vectors, embedder, temporal={})  # no weight for its signal
    with pytest.raises(InvalidInput, match="pagerank"):
        multihop(graph, vectors, embedder, weights=weights, pagerank={})


_BRIDGE_CORPUS = [
    ("film", "Forced Vengeance is a 1982 action film directed by James Fargo.", {"lang": "en"}),
    ("fargo", "James Fargo is an American director, born in Republic, Washington.", {"lang": "en"}),
    ("fargo-de", "James Fargo ist ein Regisseur aus Republic, Washington.", {"lang": "de"}),
    ("noise", "Westerns were a popular genre of the 1950s.", {"lang": "en"}),
]


def _bridge_candidates() -> list[Candidate]:
    texts = {i: (t, m) for i, t, m in _BRIDGE_CORPUS}
    text, meta = texts["film"]
    return [Candidate(Document("film", text, {**meta, "title": "Forced Vengeance"}), {"semantic": 0.9})]


async def test_bridge_reaches_the_passage_the_first_one_names() -> None:
    index = BM25Index(_BRIDGE_CORPUS)
    question = "Which town is home to the man who made Forced Vengeance?"
    # BM25 for the question alone does not reach the director's passage.
    assert "fargo" not in [i for i, _ in index.search(question, limit=2)]
    stage = BridgeSearch(index)
    assert stage.names(_BRIDGE_CORPUS[0][1], question, ["Forced Vengeance"]) == ["James Fargo"]
    out = await stage.run(Query(question), _bridge_candidates(), _ctx())
    signals = {c.id: dict(c.signals) for c in out}
    assert signals["film"] == {"semantic": 0.9}  # a seed gets no bridge signal of its own
    bridged = {i: s["bridge"] for i, s in signals.items() if i != "film"}
    assert max(bridged.values()) == 1.0
    assert min(bridged.values()) > 0.0
    assert bridged["fargo"] > bridged.get("noise", 0.0)
    assert next(c for c in out if c.id == "fargo").document.content is None  # ids only: hydrate later
    # The query filter applies to the second hop.
    only_de = await stage.run(Query(question, filter={"lang": "de"}), _bridge_candidates(), _ctx())
    assert {c.id for c in only_de} == {"film", "fargo-de"}


async def test_bridge_without_names_or_seeds_changes_nothing() -> None:
    index = BM25Index(_BRIDGE_CORPUS)
    stage = BridgeSearch(index)
    unscored = [Candidate(Document("film", _BRIDGE_CORPUS[0][1]), {"ppr": 1.0})]
    assert await stage.run(Query("Who directed it?"), unscored, _ctx()) == unscored
    named = [Candidate(Document("x", "no names in here at all."), {"semantic": 1.0})]
    assert await stage.run(Query("Who directed it?"), named, _ctx()) == named
    # Names the question already carries are not a bridge.
    asked = "Where was James Fargo, director of Forced Vengeance, born?"
    assert stage.names(_BRIDGE_CORPUS[0][1], asked) == []


async def test_bridge_reads_a_seed_by_its_text_not_its_id() -> None:
    # The stage remembers what it read of a seed's text; a passage rewritten under the same id
    # leads through its new names.
    index = BM25Index(_CAST_CORPUS)
    stage = BridgeSearch(index, limit=1)
    question = "Who is the father of the director?"
    first = [Candidate(Document("seed", "The film was directed by Gia Lund."), {"semantic": 0.9})]
    again = [Candidate(Document("seed", "The film starred Jack Moor."), {"semantic": 0.9})]
    assert {c.id for c in await stage.run(Query(question), first, _ctx())} == {"seed", "gia"}
    assert {c.id for c in await stage.run(Query(question), again, _ctx())} == {"seed", "jack"}
    assert {c.id for c in await stage.run(Query(question), first, _ctx())} == {"seed", "gia"}


_CAST_CORPUS = [
    ("film", "Palo Verde is a film directed by Gia Lund. It stars Jack Moor and Zoe Ray."),
    ("gia", "Gia Lund is a film maker. She is the daughter of Carl Lund."),
    ("jack", "Jack Moor starred in Palo Verde with Zoe Ray."),
    ("zoe", "Zoe Ray played in Palo Verde beside Jack Moor."),
    ("noise", "Westerns were a popular genre of the 1950s."),
]


async def test_bridge_per_name_searches_the_names_nearest_the_question() -> None:
    index = BM25Index(_CAST_CORPUS)
    question = "Who is the father of the director of Palo Verde?"
    seed = [Candidate(Document("film", _CAST_CORPUS[0][1]), {"semantic": 0.9})]
    # One search for all the names finds the passages that mention several of them and the film.
    together = await BridgeSearch(index, limit=1).run(Query(question), seed, _ctx())
    assert {c.id for c in together} == {"film", "jack"}
    # One at a time, nearest first: Gia Lund shares a sentence with "Palo Verde" and "director".
    assert BridgeSearch._closest_names(_CAST_CORPUS[0][1], question, ["Jack Moor", "Zoe Ray", "Gia Lund"]) == [
        "Gia Lund",
        "Jack Moor",
        "Zoe Ray",
    ]
    nearest = await BridgeSearch(index, per_name=1).run(Query(question), seed, _ctx())
    assert {c.id: dict(c.signals) for c in nearest if c.id != "film"} == {"gia": {"bridge": 1.0}}
    # Each search's best hit only: Zoe Ray's search ranks Jack Moor's passage (her name and the film) first.
    every = await BridgeSearch(index, per_name=3).run(Query(question), seed, _ctx())
    assert {c.id for c in every} == {"film", "gia", "jack"}


def test_bridge_rejects_bad_settings() -> None:
    index = BM25Index(_BRIDGE_CORPUS)
    with pytest.raises(InvalidInput, match="must be a BM25Index"):
        BridgeSearch("not an index")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="seeds"):
        BridgeSearch(index, seeds=0)
    with pytest.raises(InvalidInput, match="per_name"):
        BridgeSearch(index, per_name=-1)
    with pytest.raises(InvalidInput, match="per_name"):
        BridgeSearch(index, per_name=True)
    with pytest.raises(InvalidInput, match="positive weight"):
        BridgeSearch(index, seed_signals={"semantic": 0.0})
    with pytest.raises(InvalidInput, match=r"unknown per-call option\(s\) \[.depth.\]"):
        BridgeSearch(index).check_options({"depth": 2})
    with pytest.raises(InvalidInput, match="'limit'"):
        BridgeSearch(index).check_options({"limit": -1})


_SUBJECT_CORPUS = [
    ("film", "Palo Verde is a 1950 film directed by Gia Lund, with music by Carl Ott."),
    ("gia", "Gia Lund (born 1901) was a film maker from Oslo. Her father was Carl Lund."),
    ("other", "Dust Road is a 1951 film by Gia Lund, director of Palo Verde, where the director was born."),
    ("chat", "Gia: did you see the film Palo Verde, directed by Gia Lund?"),
]


def test_subject_span_reads_the_lead_up_to_its_copula() -> None:
    assert subject_span("Gia Lund (born 1901) was a film maker. She is Norwegian.") == "Gia Lund (born 1901)"
    assert subject_span("No copula in this lead. The next one is.") == "No copula in this lead."
    # Dialogue has no subject; neither has an empty text.
    assert subject_span("LiHua: the weather is nice today.") is None
    assert subject_span("Ana Ruiz: the film was long.") is None
    assert subject_span("李华：今天天气很好。") is None  # noqa: RUF001
    assert subject_span("东京是日本的首都。东京很大。") == "东京是日本的首都。"
    assert subject_span("") is None
    assert subject_span("   \n ") is None
    # Non-Latin text and a lead without any sentence boundary.
    assert subject_span("東京は日本の首都です。大きい。") == "東京は日本の首都です。"
    assert subject_span("word " * 500) == ("word " * 500).strip()


async def test_bridge_per_name_finds_the_passage_about_the_name() -> None:
    corpus = [(i, t) for i, t in _SUBJECT_CORPUS]
    subjects = [(i, s) for i, t in _SUBJECT_CORPUS if (s := subject_span(t)) is not None]
    question = "Where was the director of Palo Verde born?"
    seed = [Candidate(Document("film", _SUBJECT_CORPUS[0][1]), {"semantic": 0.9})]
    # Without subjects, the question plus the name finds the passage that repeats the film's words.
    plain = await BridgeSearch(BM25Index(corpus), per_name=1).run(Query(question), seed, _ctx())
    assert {c.id for c in plain} == {"film", "other"}
    # With them, the passage about Gia Lund: its subject names her.
    index = BM25Index(corpus, subjects=subjects)
    assert index.subjects is not None
    assert "chat" not in index.subjects.ids
    found = await BridgeSearch(index, per_name=1).run(Query(question), seed, _ctx())
    assert {c.id: dict(c.signals) for c in found if c.id != "film"} == {"gia": {"bridge": 1.0}}
    # A name no subject holds falls back to the question plus the name.
    assert index.subjects.search("Carl Ott") == []
    both = await BridgeSearch(index, per_name=2).run(Query(question), seed, _ctx())
    assert {c.id for c in both} == {"film", "gia", "other"}


async def test_bridge_never_returns_the_document_of_a_chunk_seed() -> None:
    index = BM25Index([(i, t) for i, t in _SUBJECT_CORPUS])
    chunk = Document("film#0", _SUBJECT_CORPUS[0][1], {"parent_id": "film"})
    out = await BridgeSearch(index).run(Query("Who made Palo Verde?"), [Candidate(chunk, {"semantic": 0.9})], _ctx())
    assert "film" not in {c.id for c in out}
    assert {c.id for c in out} > {"film#0"}


def test_bm25_subjects_must_be_an_index() -> None:
    with pytest.raises(InvalidInput, match="subjects must be a BM25Index"):
        BM25Index.from_term_counts(
            ["a"],
            {"alpha": 0},
            sp.csr_matrix(np.ones((1, 1))),
            np.ones(1),
            [{}],
            subjects="a",  # type: ignore[arg-type]
        )


async def test_bridge_searches_what_the_seed_does_not_already_hold() -> None:
    corpus = [
        ("dell", "Dell ranks sixth by revenue among the companies of Texas."),
        ("dell-2", "Dell ranks sixth by revenue, and by revenue Dell ranks sixth again."),
        ("davis", "Fort Davis is the highest city in Texas."),
    ]
    question = "What is the highest city in the state where Dell ranks sixth by revenue?"
    # The whole question plus the name finds the seed's topic again ...
    assert BM25Index(corpus).search(f"{question} Texas", 3)[1][0] == "dell-2"
    seed = [Candidate(Document("dell", corpus[0][1]), {"semantic": 0.9})]
    out = await BridgeSearch(BM25Index(corpus), limit=1).run(Query(question), seed, _ctx())
    # ... the words the seed does not hold ("highest city state") plus the name find the next hop.
    assert {c.id: dict(c.signals) for c in out if c.id != "dell"} == {"davis": {"bridge": 1.0}}


async def test_ppr_seed_boost_starts_the_walk_where_the_fusion_trusts() -> None:
    store = await _toy_store()
    # By the default seed weights (semantic 1, bm25 0.6) "other" (0.9) is the best seed, "film" (0.2 + 0.6) next.
    found = [
        Candidate(Document("other"), {"semantic": 0.9}),
        Candidate(Document("film"), {"semantic": 0.2, "bm25": 1.0}),
    ]
    plain = await PersonalizedPageRank(store, seeds=1, limit=5).run(Query("q"), found, _ctx())
    assert {c.id for c in plain} == {"other", "film"}  # "other" leads nowhere
    seen: list[list[dict[str, float]]] = []

    def trust_words(signals: Sequence[Mapping[str, float]]) -> Mapping[str, float]:
        seen.append([dict(s) for s in signals])
        return {"bm25": 3.0}  # the query's lexical ranking weighs three times as much

    stage = PersonalizedPageRank(store, seeds=1, limit=5, seed_boost=trust_words)
    boosted = await stage.run(Query("q"), found, _ctx())
    ppr = {c.id: c.signals["ppr"] for c in boosted}
    assert ppr["film"] == 1.0
    assert ppr["other"] == 0.0
    assert ppr["mandoki"] > 0  # the walk went on from the film
    assert seen == [[{"semantic": 0.9}, {"semantic": 0.2, "bm25": 1.0}]]
    with pytest.raises(InvalidInput, match="seed_boost"):
        PersonalizedPageRank(store, seed_boost=3.0)  # type: ignore[arg-type]
    for bad in (-1.0, math.nan, True):
        broken = PersonalizedPageRank(store, seed_boost=lambda _s, bad=bad: {"bm25": bad})
        with pytest.raises(InvalidInput, match="seed_boost gave"):
            await broken.run(Query("q"), found, _ctx())


async def test_bridge_hop_signal_marks_the_passages_about_a_name_only() -> None:
    corpus = [(i, t) for i, t in _SUBJECT_CORPUS]
    subjects = [(i, s) for i, t in _SUBJECT_CORPUS if (s := subject_span(t)) is not None]
    question = "Where was the director of Palo Verde born?"
    seed = [Candidate(Document("film", _SUBJECT_CORPUS[0][1]), {"semantic": 0.9})]
    index = BM25Index(corpus, subjects=subjects)
    both = await BridgeSearch(index, per_name=2, hop_signal="next_hop").run(Query(question), seed, _ctx())
    # "gia" is the passage about Gia Lund (a next hop); "other" is what the question plus
    # "Carl Ott" found, which no subject names: a bridge hit, not a hop.
    assert {c.id: dict(c.signals) for c in both if c.id != "film"} == {
        "gia": {"bridge": 1.0, "next_hop": 1.0},
        "other": {"bridge": 1.0},
    }
    # Without subjects (chat logs) no per-name hit is a hop.
    plain = await BridgeSearch(BM25Index(corpus), per_name=2, hop_signal="next_hop").run(Query(question), seed, _ctx())
    assert [c.id for c in plain if "next_hop" in c.signals] == []
    assert {c.id for c in plain} == {"film", "other"}
    # The combined search: every hit is one, with its bridge value.
    combined = await BridgeSearch(index, hop_signal="next_hop").run(Query(question), seed, _ctx())
    hits = [c for c in combined if "bridge" in c.signals]
    assert hits
    assert all(c.signals["next_hop"] == c.signals["bridge"] for c in hits)
    with pytest.raises(InvalidInput, match="hop_signal"):
        BridgeSearch(index, hop_signal="bridge")
    with pytest.raises(InvalidInput, match="hop_signal"):
        BridgeSearch(index, hop_signal="no spaces")


async def test_multihop_preset_reads_hops_and_boosts_its_seeds() -> None:
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(64)
    bm25 = BM25Index([("a", "chat about lunch"), ("b", "chat about trains")])
    pipeline = multihop(graph, vectors, embedder, bm25=bm25, linker=TitleLinker())
    assert "second_hop='next_hop'" in repr(pipeline.scorer)
    fixed = multihop(graph, vectors, embedder, bm25=bm25, linker=TitleLinker(), adaptive=False)
    assert type(fixed.scorer).__name__ == "WeightedScorer"


async def test_bridge_skips_hits_that_hold_none_of_the_names() -> None:
    corpus = [
        ("film", "Gaby: A True Story is a film directed by Luis Mandoki."),
        ("born", "Where a star is born: born in nebulae, born of dust, born again."),
        ("mandoki", "Luis Mandoki was raised in Mexico City."),
    ]
    question = "Where was the director of Gaby: A True Story born?"
    index = BM25Index(corpus)
    # The question's word the seed does not hold ("born") ranks a passage without the name first ...
    assert index.search("Where born Luis Mandoki", 1)[0][0] == "born"
    seed = [Candidate(Document("film", corpus[0][1]), {"semantic": 0.9})]
    out = await BridgeSearch(index).run(Query(question), seed, _ctx())
    # ... but only a passage holding the name is a hop through it: it gets the bridge, 1.0 as the best one.
    assert {c.id: dict(c.signals) for c in out if c.id != "film"} == {"mandoki": {"bridge": 1.0}}


def test_bm25_holding_finds_the_documents_with_any_of_the_terms() -> None:
    index = BM25Index([("a", "Luis Mandoki directed it."), ("b", "Mandoki again."), ("c", "Nothing here.")])
    assert index.holding("Luis Mandoki", ["a", "b", "c", "unknown"]) == {"a", "b"}
    assert index.holding("Luis", ("a", "b", "c")) == {"a"}
    assert index.holding("nowhere", ["a", "b"]) == set()
    assert index.holding("Luis", []) == set()


async def test_bridge_skips_a_seed_that_adds_nothing_of_the_question() -> None:
    corpus = [
        ("film", "Gaby: A True Story is a film directed by Luis Mandoki."),
        ("film-2", "Gaby: A True Story, the film, stars Rachel Levin."),
        ("mandoki", "Luis Mandoki was born in Mexico City."),
        ("levin", "Rachel Levin was born in New York."),
        ("other", "Big Apple is a film by Rachel Levin."),
    ]
    question = "Where was the director of Gaby: A True Story born?"
    index = BM25Index(corpus)
    first = Candidate(Document("film", corpus[0][1]), {"semantic": 0.9})
    # The second seed holds no word of the question that the first does not: its names are not searched.
    same = [first, Candidate(Document("film-2", corpus[1][1]), {"semantic": 0.8})]
    out = await BridgeSearch(index).run(Query(question), same, _ctx())
    assert {c.id for c in out if "bridge" in c.signals} == {"mandoki"}
    # A seed that holds a word of the question the first does not ("born") is searched as before.
    adding = [first, Candidate(Document("other", corpus[4][1] + " Levin was born here."), {"semantic": 0.8})]
    out = await BridgeSearch(index).run(Query(question), adding, _ctx())
    assert {"mandoki", "levin"} <= {c.id for c in out if "bridge" in c.signals}
    # Searching names one at a time, every seed is searched.
    per_name = await BridgeSearch(index, per_name=1).run(Query(question), same, _ctx())
    assert {c.id for c in per_name if "bridge" in c.signals} == {"mandoki", "levin"}

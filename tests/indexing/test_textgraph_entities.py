"""Entities from plain text: extraction, joined names, aliases, variants, the entity graph and its walk."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphfuse import Candidate, Document, GraphStore, InvalidInput, Query
from graphfuse.embedders import HashingEmbedder
from graphfuse.hosts import StageRunContext
from graphfuse.indexing import (
    CO_OCCURS_WITH,
    ENTITY_PREFIX,
    MENTIONED_IN,
    EntityMatcher,
    Indexer,
    SourceRecord,
    TextEntityExtractor,
    entity_key,
    merge_variants,
)
from graphfuse.multihop import BM25Index, acorpus_indexes, aentity_matcher, multihop
from graphfuse.stages import GraphExpansion
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore, SQLiteGraphStore


def entities(text: str, **kwargs: object) -> list[str]:
    return [m.entity for m in TextEntityExtractor(**kwargs).extract(text)]  # type: ignore[arg-type]


def test_entity_keys_fold_joined_names_case_spacing_and_accents() -> None:
    assert entity_key("WolfgangSchulz") == entity_key("Wolfgang  Schulz") == "wolfgang schulz"
    assert entity_key("ChaeSong-hwa") == entity_key("Chae Song-hwa") == "chae song hwa"
    assert entity_key("Wolfgang's") == "wolfgang"
    assert entity_key("Zoë Çelik") == "zoe celik"


def test_extraction_finds_proper_noun_phrases() -> None:
    chat = (
        "LiHua: Hey! Lunch with Adam Smith at Port of Spain Cafe?\n"
        "WolfgangSchulz: Sure, and I'll bring Coldplay records."
    )
    assert entities(chat) == ["li hua", "adam smith", "port of spain cafe", "wolfgang schulz", "coldplay"]
    # A lone capitalised word opening a sentence is just capitalised; a joined name or speaker is not.
    assert entities("Perfect. Thanks for the Beatles tickets. Tomorrow works.") == ["beatles"]
    assert entities("The Rhine flows north. She met Gandalf on Monday in March.") == ["rhine", "gandalf"]
    assert entities("Thrall: ready?") == ["thrall"]
    assert entities("Yes, I met Bob, Wolfgang's friend.", min_chars=3) == ["bob", "wolfgang"]
    assert entities("I met Al and Bob.", min_chars=3) == ["bob"]


def test_chinese_and_japanese_chat_speakers_are_entities() -> None:
    chat = "李华：你好！今天去哪里？\n王明：我们去 Tokyo Tower 吧。\n日：一字。"  # noqa: RUF001
    found = [(m.entity, chat[m.start : m.end]) for m in TextEntityExtractor().extract(chat)]
    # In order; one character is too short a name (as for the title linker).
    assert found == [("李华", "李华"), ("王明", "王明"), ("tokyo tower", "Tokyo Tower")]
    # A Latin name run into Chinese text without spaces ends where the Chinese characters start.
    mixed = "王明：我们去Tokyo Tower吧。我用iPhone拍照，发给Anna Berg了。"  # noqa: RUF001
    assert [mixed[m.start : m.end] for m in TextEntityExtractor().extract(mixed)] == [
        "王明",
        "Tokyo Tower",
        "Anna Berg",
    ]
    aliased = TextEntityExtractor(aliases={"王明": "Wang Ming"}).extract(chat)
    assert [m.entity for m in aliased][1] == "wang ming"


def test_matcher_finds_names_inside_chinese_and_japanese_questions() -> None:
    matcher = EntityMatcher({"王明": "n1", "李华": "n2", "wolfgang schulz": "n3"})
    assert matcher.match_surface("王明带了什么？李华呢？") == [("王明", "n1", "王明"), ("李华", "n2", "李华")]  # noqa: RUF001
    assert matcher.match("李华とWolfgangSchulzは友達ですか") == [("李华", "n2"), ("wolfgang schulz", "n3")]


def test_aliases_map_variants_to_one_entity() -> None:
    found = entities("I met Bill Gates and later William Gates.", aliases={"Bill Gates": "William Gates"})
    assert found == ["william gates", "william gates"]


def test_bad_input() -> None:
    with pytest.raises(InvalidInput, match="min_chars must be a positive integer"):
        TextEntityExtractor(min_chars=0)
    with pytest.raises(InvalidInput, match="aliases must map non-empty names"):
        TextEntityExtractor(aliases={"Bill": ""})
    with pytest.raises(InvalidInput, match="aliases must be a mapping"):
        TextEntityExtractor(aliases=["Bill"])  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="entities must be a mapping"):
        EntityMatcher(["a"])  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="entity keys must be non-empty strings"):
        EntityMatcher({"": "x"})
    with pytest.raises(InvalidInput, match="entity_graph must be a bool"):
        Indexer(InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(8), entity_graph="yes")  # type: ignore[arg-type]


def test_variant_merging() -> None:
    counts = {"wolfgang schulz": 5, "wolfgang": 3, "adam": 2, "adam smith": 4, "adam west": 1, "chae songhwa": 1,
              "chae song hwa": 4}  # fmt: skip
    assert merge_variants(counts) == {"wolfgang": "wolfgang schulz", "chae songhwa": "chae song hwa"}


def test_matcher_tolerates_spacing_case_and_possessives() -> None:
    matcher = EntityMatcher({"wolfgang schulz": "w", "viva la vida": "v", "the": "stop"})
    for question in ("Did Wolfgang Schulz call?", "did wolfgang schulz call", "Did WolfgangSchulz call?"):
        assert matcher.match(question) == [("wolfgang schulz", "w")]
    assert matcher.match("Wolfgang Schulz's band played Viva La Vida") == [
        ("wolfgang schulz", "w"),
        ("viva la vida", "v"),
    ]
    assert len(matcher) == 2  # a stopword is no entity


RECORDS = [
    SourceRecord("chat1", "LiHua: Shall we learn Viva la Vida for the jam?\nWolfgangSchulz: Yes, Coldplay rocks."),
    SourceRecord("chat2", "WolfgangSchulz: My cousin Greta Berg plays drums in Berlin."),
    SourceRecord("chat3", "LiHua: The plumber comes at five.\nAdamSmith: Thanks, Adam Smith here."),
    SourceRecord("chat4", "Greta Berg: I moved to Hamburg last year."),
]


async def indexed() -> tuple[InMemoryGraphStore, LocalVectorStore, HashingEmbedder]:
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(64)
    indexer = Indexer(graph, vectors, embedder, extractors=[TextEntityExtractor()], entity_graph=True)
    report = await indexer.aindex(RECORDS)
    assert report.documents == 4
    return graph, vectors, embedder


async def test_entity_graph_nodes_and_counted_relations() -> None:
    graph, vectors, _ = await indexed()
    ids, matrix = await graph.adjacency([MENTIONED_IN])
    position = {i: n for n, i in enumerate(ids)}
    greta = ENTITY_PREFIX + "greta berg"
    adam = ENTITY_PREFIX + "adam smith"
    assert matrix[position[adam], position["chat3"]] == 2.0  # mentioned twice: "AdamSmith:", "Adam Smith"
    assert matrix[position[greta], position["chat2"]] == 1.0
    assert matrix[position[greta], position["chat4"]] == 1.0
    node = (await graph.get_documents([greta]))[greta]
    assert node.metadata["graphfuse_kind"] == "entity"
    assert node.metadata["mentions"] == 2
    ids, co = await graph.adjacency([CO_OCCURS_WITH])
    position = {i: n for n, i in enumerate(ids)}
    li, wolfgang = ENTITY_PREFIX + "li hua", ENTITY_PREFIX + "wolfgang schulz"
    assert co[position[li], position[wolfgang]] + co[position[wolfgang], position[li]] == 1.0
    vector_hits = await vectors.search(list(np.ones(64)), limit=20)
    assert not any(h.id.startswith(ENTITY_PREFIX) for h in vector_hits)  # entity nodes are not embedded
    bm25, _ = await acorpus_indexes(graph)
    assert sorted(bm25.ids) == ["chat1", "chat2", "chat3", "chat4"]


async def test_multihop_walks_through_entities_the_question_names() -> None:
    graph, vectors, embedder = await indexed()
    matcher = await aentity_matcher(graph)
    assert len(matcher) >= 6
    pipeline = multihop(graph, vectors, embedder, bm25=BM25Index((r.id, r.text) for r in RECORDS), entities=matcher)
    assert "text_entity" in [s.name for s in pipeline.stages]
    results = await pipeline.aretrieve("Where did greta berg move to?", top_k=4)
    ids = [r.id for r in results]
    assert ids[:2] == ["chat4", "chat2"] or ids[:2] == ["chat2", "chat4"]
    assert not any(i.startswith(ENTITY_PREFIX) for i in ids)  # walked through, never returned
    plain = multihop(graph, vectors, embedder, entities=EntityMatcher({}))
    assert "text_entity" not in [s.name for s in plain.stages]
    # Over an entity graph the walk goes on longer (a bridge is two steps); options still win.
    ppr = {s.name: repr(s) for s in pipeline.stages}["ppr"]
    assert "damping=0.85" in ppr
    assert "damping=0.5" in {s.name: repr(s) for s in plain.stages}["ppr"]
    tuned = multihop(graph, vectors, embedder, entities=matcher, ppr={"damping": 0.6})
    assert "damping=0.6" in {s.name: repr(s) for s in tuned.stages}["ppr"]
    # Without titles the bridge searches the names nearest the question's words one at a time.
    assert "per_name=4" in {s.name: repr(s) for s in pipeline.stages}["bridge"]
    titled = multihop(graph, vectors, embedder, bm25=BM25Index((r.id, r.text) for r in RECORDS))
    assert "per_name" not in {s.name: repr(s) for s in titled.stages}["bridge"]


async def test_one_word_matches_in_lower_case_are_common_words_not_names() -> None:
    from graphfuse import Query
    from graphfuse.hosts import StageRunContext
    from graphfuse.multihop import TextEntitySeeds

    matcher = EntityMatcher({"place": "n:place", "wolfgang": "n:wolfgang", "harbor hall": "n:hall"})
    assert [s for _, _, s in matcher.match_surface("the place where WolfgangSchulz met")] == ["place", "Wolfgang"]
    stage = TextEntitySeeds(matcher)

    async def seeds(question: str) -> set[str]:
        context = StageRunContext()
        await stage.run(Query.of(question), [], context)
        return set(context.values.get("graph_seeds", {}))

    assert await seeds("What is the place where Wolfgang played?") == {"n:wolfgang"}
    assert await seeds("Which place near the harbor hall did Wolfgang book?") == {"n:wolfgang", "n:hall"}
    # A question typed all in lower case says nothing by its case: every match counts.
    assert await seeds("what is the place where wolfgang played?") == {"n:place", "n:wolfgang"}


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_graph_expansion_walks_through_entity_nodes_without_adding_them(kind: str, tmp_path: Path) -> None:
    graph: GraphStore = InMemoryGraphStore() if kind == "memory" else SQLiteGraphStore(tmp_path / "g.db")
    extractors = [TextEntityExtractor()]
    indexer = Indexer(graph, LocalVectorStore(), HashingEmbedder(64), extractors=extractors, entity_graph=True)
    await indexer.aindex(RECORDS)
    seeds = [Candidate(Document("chat2", "x"), {"semantic": 0.8})]
    out = await GraphExpansion(graph).run(Query("q"), seeds, StageRunContext())
    # chat2 and chat4 both name Greta Berg (two hops through her node); chat1 names Wolfgang Schulz.
    assert {c.id: c.signals["graph"] for c in out} == {"chat2": 0.8, "chat1": 0.2, "chat4": 0.2}
    every = await GraphExpansion(graph, pass_through=None).run(Query("q"), seeds, StageRunContext())
    assert ENTITY_PREFIX + "greta berg" in {c.id for c in every}
    # The entity nodes at one hop take up a limit of 1; the store is asked again for a document.
    capped = await GraphExpansion(graph, max_expansion=1).run(Query("q"), seeds, StageRunContext())
    assert [c.id for c in capped] == ["chat2", "chat1"]


def test_graph_expansion_pass_through_must_be_a_prefix() -> None:
    for bad in ("", 3):
        with pytest.raises(InvalidInput, match="pass_through"):
            GraphExpansion(InMemoryGraphStore(), pass_through=bad)  # type: ignore[arg-type]

"""Names without titles: a document is named by its subject, for the entity seeds and the walk's links."""

from __future__ import annotations

import pytest

from graphfuse import Candidate, Document, InvalidInput, Query, Relation
from graphfuse.embedders import HashingEmbedder
from graphfuse.hosts import StageRunContext
from graphfuse.indexing import ENTITY_PREFIX, Indexer, SourceRecord, TitleLinker
from graphfuse.multihop import (
    CorpusCache,
    PersonalizedPageRank,
    acorpus_indexes,
    aentity_matcher,
    multihop,
    name_forms,
    subject_name,
)
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore, SQLiteGraphStore

_RECORDS = [
    SourceRecord("film", "The Last Coupon is a 1932 British comedy film directed by Frank Launder."),
    SourceRecord("launder", "Frank Launder (28 January 1906 - 23 February 1997) was a British film director."),
    SourceRecord("other", "Dust Road is a 1951 film, once praised by Frank Launder, shot in the north."),
    SourceRecord("titled", "Carl Ott (born 1900) was a composer.", title="Karl Ott"),
    SourceRecord("hibbs", "Jesse John Hibbs (1906 - 1985) was an American director."),
    SourceRecord("chat", "Frank: did you see The Last Coupon yesterday?"),
]


def test_subject_name_is_the_subject_without_dates_aliases_or_apposition() -> None:
    assert subject_name("Frank Launder (28 January 1906 - 1997) was a British writer.") == "Frank Launder"
    assert subject_name("Adolf I of Lotharingia, count of Keldachgau, was a noble.") == "Adolf I of Lotharingia"
    assert subject_name("Love, Honor and Oh-Baby! is a 1940 film.") == "Love, Honor and Oh-Baby!"
    assert subject_name('"Changed It" is a song by Nicki Minaj.') == "Changed It"
    assert subject_name("Interview with a Hitman is a 2012 film.") == "Interview with a Hitman"
    assert subject_name("Ludwig von Mises[1] was an economist.") == "Ludwig von Mises"
    # A lower-case content word makes a description, not a name; dialogue and empty text have no subject.
    assert subject_name("The film was shot in Rome.") is None
    assert subject_name("Pydantic models are simply classes.") is None
    assert subject_name("LiHua: the film is on tonight.") is None
    assert subject_name("") is None


def test_name_forms_add_the_short_form_of_a_full_personal_name() -> None:
    assert name_forms("William Augustus Wellman") == ("William Augustus Wellman", "William Wellman")
    assert name_forms("Frank Launder") == ("Frank Launder",)
    assert name_forms("Interview with a Hitman") == ("Interview with a Hitman",)  # a title: small words
    assert name_forms("Love, Honor and Oh-Baby!") == ("Love, Honor and Oh-Baby!",)


async def test_corpus_indexes_name_a_document_without_title_by_its_subject(tmp_path) -> None:  # type: ignore[no-untyped-def]
    graph = SQLiteGraphStore(tmp_path / "g.sqlite")
    await Indexer(graph, LocalVectorStore(), HashingEmbedder(32), extractors=[TitleLinker()]).aindex(_RECORDS)
    _, linker = await acorpus_indexes(graph)
    found = linker.extract("Which film has the director born first, The Last Coupon or one by Frank Launder?")
    assert {t for m in found for t in m.targets} == {"film", "launder"}
    # A titled document keeps its title only; a chat line names nothing.
    assert linker.lookup("Karl Ott") == ("titled",)
    assert linker.lookup("Carl Ott") == ()
    assert linker.lookup("Frank") == ()
    assert linker.lookup("Jesse Hibbs") == linker.lookup("Jesse John Hibbs") == ("hibbs",)

    # The store's corpus cache names them alike, also when read back from its file.
    cache = CorpusCache(tmp_path)
    for _ in range(2):
        _, cached = await cache.aindexes(graph)
        assert cached.lookup("The Last Coupon") == ("film",)
        assert cached.lookup("Last Coupon") == ()  # a whole-name match
        assert cached.lookup("Frank Launder") == ("launder",)
        assert cached.lookup("Karl Ott") == ("titled",)
        assert cached.lookup("Jesse Hibbs") == ("hibbs",)
    assert not cache.rebuilt
    await graph.close()


async def _entity_graph() -> InMemoryGraphStore:
    """Three passages that mention Frank Launder (as the indexer's entity graph relates them), one about him."""
    store = InMemoryGraphStore()
    node = f"{ENTITY_PREFIX}frank launder"
    passages = [Document(i, i) for i in ("film", "launder", "other")]
    await store.store_documents([*passages, Document(node, "frank launder")])
    await store.create_relations([Relation(node, i, "MENTIONED_IN") for i in ("film", "launder", "other")])
    return store


async def test_ppr_names_lead_a_mention_to_the_passage_about_the_name() -> None:
    store = await _entity_graph()
    seeds = [Candidate(Document("film"), {"semantic": 1.0})]
    options = {"exclude_prefix": ENTITY_PREFIX, "degree_exponent": 0.0, "damping": 0.85}

    def ppr(out: list[Candidate]) -> dict[str, float]:
        return {c.id: c.signals["ppr"] for c in out}

    plain = ppr(await PersonalizedPageRank(store, **options).run(Query("q"), seeds, StageRunContext()))  # type: ignore[arg-type]
    assert plain["launder"] == pytest.approx(plain["other"])  # the entity node spreads the walk evenly
    names = TitleLinker({"Frank Launder": ["launder"]})
    named = ppr(await PersonalizedPageRank(store, names=names, **options).run(Query("q"), seeds, StageRunContext()))  # type: ignore[arg-type]
    assert named["launder"] > 2 * named["other"]  # the mention leads to the passage about the name
    assert f"{ENTITY_PREFIX}frank launder" not in named  # entity nodes are walked, never returned

    with pytest.raises(InvalidInput, match="exclude_prefix"):
        PersonalizedPageRank(store, names=names)
    with pytest.raises(InvalidInput, match="lookup"):
        PersonalizedPageRank(store, names=object(), exclude_prefix=ENTITY_PREFIX)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="name_weight"):
        PersonalizedPageRank(store, names=names, exclude_prefix=ENTITY_PREFIX, name_weight=0.0)


async def test_multihop_seeds_and_walks_by_subject_names_on_a_text_graph(tmp_path) -> None:  # type: ignore[no-untyped-def]
    graph, vectors, embedder = SQLiteGraphStore(tmp_path / "g.sqlite"), LocalVectorStore(), HashingEmbedder(64)
    await Indexer.for_records(_RECORDS, graph, vectors, embedder).aindex(_RECORDS)
    bm25, linker = await acorpus_indexes(graph)
    text = multihop(graph, vectors, embedder, bm25=bm25, linker=linker, entities=await aentity_matcher(graph))
    results = await text.aretrieve("Where was the director of The Last Coupon born?", top_k=3)
    by_id = {r.id: r for r in results}
    assert by_id["film"].signals.get("entity") == 1.0  # the question names the film, found by its subject
    assert "launder" in by_id
    await graph.close()


async def test_eval_names_untitled_records_by_their_subjects() -> None:
    from graphfuse.evaluation import EvalQuery, aevaluate

    records = [r for r in _RECORDS if r.title is None]
    question = EvalQuery("q", "Where was the director of The Last Coupon born?", ("film", "launder"))
    report = await aevaluate(
        records,
        [question],
        ["multihop"],
        graph_store=InMemoryGraphStore(),
        vector_store=LocalVectorStore(),
        embedder=HashingEmbedder(64),
    )
    fusion = report.pipelines["multihop"].fusion
    assert fusion is not None
    assert "entity" in fusion.weights  # the question's film found by its subject's name

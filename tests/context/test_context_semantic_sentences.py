"""Evidence sentences scored by similarity to the query when an embedder is given."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from graphfuse import Document, InvalidInput, PluginError, Result, presets
from graphfuse.context import RegexTokenCounter, abuild_context, aretrieve_context
from graphfuse.indexing import Indexer, SourceRecord
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

# Concepts by the words that express them: "prize" and "won" share a dimension.
CONCEPTS = [
    {"birth", "born", "native"},
    {"film", "directed", "director", "drama"},
    {"award", "prize", "won"},
    {"painter", "paint", "painted"},
]


class ConceptEmbedder:
    """A tiny offline embedder of the Embedder protocol: one dimension per concept word group."""

    dimension = len(CONCEPTS) + 1

    def _vector(self, text: str) -> list[float]:
        words = {w.strip(".,?!:;\"'").lower() for w in text.split()}
        return [float(len(words & group)) for group in CONCEPTS] + [0.1]

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    async def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


QUESTION = "Which prize went to the director of Quiet Harbour?"
FILM = "Quiet Harbour is a 1961 drama film directed by Anna Berg."
BERG = (
    "Anna Berg (1920 - 1990) was a film maker. She lived in Oslo for thirty years. "
    "Her studio stood by the harbour for forty years. Berg won the Golden Lion."
)


def _results() -> list[Result]:
    return [
        Result(Document("film", FILM, {"title": "Quiet Harbour"}), 0.9, {}),
        Result(Document("berg", BERG, {"title": "Anna Berg"}), 0.8, {}),
    ]


async def test_a_sentence_worded_unlike_the_question_is_found_with_an_embedder() -> None:
    counter = RegexTokenCounter()
    words_only = await abuild_context(QUESTION, _results(), budget=60, format="evidence", counter=counter)
    assert "Golden Lion" not in words_only.text  # "won" shares no word with "prize"
    with_meaning = await abuild_context(
        QUESTION, _results(), budget=60, format="evidence", counter=counter, embedder=ConceptEmbedder()
    )
    assert "won the Golden Lion" in with_meaning.text
    assert with_meaning.tokens <= 60


class Broken(ConceptEmbedder):
    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        raise RuntimeError("model server down")


class Short(ConceptEmbedder):
    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts[:-1]]


async def test_bad_embedders_are_named() -> None:
    with pytest.raises(InvalidInput, match="embedder must be a graphfuse Embedder"):
        await abuild_context(QUESTION, _results(), budget=50, format="evidence", embedder="minilm")  # type: ignore[arg-type]
    with pytest.raises(PluginError, match="Broken failed while scoring context sentences: model server down"):
        await abuild_context(QUESTION, _results(), budget=50, format="evidence", embedder=Broken())
    with pytest.raises(PluginError, match="Short returned vectors of the wrong shape"):
        await abuild_context(QUESTION, _results(), budget=50, format="evidence", embedder=Short())


async def test_pipeline_context_scores_with_its_own_embedder_unless_told_not_to() -> None:
    graph, embedder = InMemoryGraphStore(), ConceptEmbedder()
    vectors = LocalVectorStore(dimension=embedder.dimension)
    await Indexer(graph, vectors, embedder).aindex(
        [SourceRecord("film", FILM, title="Quiet Harbour"), SourceRecord("berg", BERG, title="Anna Berg")]
    )
    pipeline = presets.build("minimal", graph_store=graph, vector_store=vectors, embedder=embedder)
    counter = RegexTokenCounter()
    default = await aretrieve_context(pipeline, QUESTION, budget=60, format="evidence", counter=counter)
    assert "won the Golden Lion" in default.text
    off = await aretrieve_context(pipeline, QUESTION, budget=60, format="evidence", counter=counter, embedder=False)
    assert "Golden Lion" not in off.text


class RecordingEmbedder(ConceptEmbedder):
    """ConceptEmbedder that records the query texts it embeds."""

    def __init__(self) -> None:
        self.queries: list[str] = []

    async def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        return await super().embed_query(text)


async def test_sentences_are_also_compared_with_the_question_without_its_names() -> None:
    from graphfuse.context._build import sentence_similarity
    from graphfuse.context._evidence import SentenceScorer
    from graphfuse.context._items import items_from_results

    items, _ = items_from_results(_results())
    embedder = RecordingEmbedder()
    to_query, to_relation = await sentence_similarity(embedder, QUESTION, items)
    # The question, then the question without the title it names ("Quiet Harbour").
    assert embedder.queries == [QUESTION, "which prize went to the director of"]
    assert to_relation is not None
    assert set(to_relation) == set(to_query)
    won = "Berg won the Golden Lion."
    assert to_relation[won] > 0
    # The relation similarity counts (0.5 of it) in the document the question does not name only.
    with_relation = SentenceScorer(QUESTION, items, to_query, to_relation)
    without = SentenceScorer(QUESTION, items, to_query)
    berg_with = {s.text: s for s in with_relation.sentences(1)}
    berg_without = {s.text: s for s in without.sentences(1)}
    gain = berg_with[won].score - berg_without[won].score
    # (Anna Berg's rank weight: the film's 1.0, as the film's first sentence names her.)
    assert gain == pytest.approx(0.5 * to_relation[won] * 1.0)
    assert [s.score for s in with_relation.sentences(0)] == [s.score for s in without.sentences(0)]


async def test_no_relation_query_when_the_question_names_no_retrieved_title() -> None:
    from graphfuse.context._build import sentence_similarity
    from graphfuse.context._items import items_from_results

    items, _ = items_from_results(_results())
    embedder = RecordingEmbedder()
    _, to_relation = await sentence_similarity(embedder, "Which prize did the painter win?", items)
    assert to_relation is None
    assert embedder.queries == ["Which prize did the painter win?"]

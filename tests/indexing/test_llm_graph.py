"""The LLM graph extractor: strict replies, the merged typed graph, the reply cache, the graph context.

The model is a local HTTP server speaking OpenAI's chat-completions wire format, reached through
the real ``openai`` SDK (``graphfuse-openai``'s generator); it answers from a table of names.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from graphfuse import InvalidInput, Result
from graphfuse.cli import app
from graphfuse.context import abuild_context
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import (
    ENTITY_PREFIX,
    MENTIONED_IN,
    RELATED_TO,
    Indexer,
    LLMGraphExtractor,
    SourceRecord,
    entity_extractor,
)
from graphfuse.stores import LocalVectorStore, SQLiteGraphStore
from graphfuse.testing import ChatCompletionsServer

openai_plugin = pytest.importorskip("graphfuse_openai")

# name -> (type, description); relations: (source, target, type, confidence, context)
NAMES = {
    "Ada Lovelace": ("PERSON", "A mathematician who wrote on the Analytical Engine."),
    "London": ("LOCATION", "The capital of England."),
    "Analytical Engine": ("PRODUCT", "A mechanical computer designed by Charles Babbage."),
    "Charles Babbage": ("PERSON", "An English mathematician and inventor."),
}
RELATIONS = [
    ("Ada Lovelace", "London", "BORN_IN", 0.9, "Ada Lovelace was born in London"),
    ("Analytical Engine", "Charles Babbage", "CREATED_BY", 0.8, "the Analytical Engine of Charles Babbage"),
]
RECORDS = [
    SourceRecord("ada", "Ada Lovelace was born in London. Ada Lovelace wrote notes.", title="Ada"),
    SourceRecord("engine", "She described the Analytical Engine of Charles Babbage.", title="Engine"),
    SourceRecord("plain", "Nothing to see here, only words.", title="Plain"),
]


def graph_reply(messages: list[dict[str, str]], body: dict[str, Any]) -> str:
    asked = next(m["content"] for m in messages if m["role"] == "user")  # (a retry appends to the chat)
    passage = asked.partition("Passage:\n")[2]
    entities = [{"name": n, "type": t, "description": d} for n, (t, d) in NAMES.items() if n in passage]
    relations = [
        {"source": s, "target": t, "type": k, "confidence": c, "context": x}
        for s, t, k, c, x in RELATIONS
        if s in passage and t in passage
    ]
    return "```json\n" + json.dumps({"entities": entities, "relations": relations}) + "\n```"


@pytest.fixture
def server() -> Iterator[ChatCompletionsServer]:
    with ChatCompletionsServer(responder=graph_reply) as chat:
        yield chat


def generator(server: ChatCompletionsServer) -> Any:
    return openai_plugin.OpenAIGenerator("test-model", base_url=server.url, api_key=server.api_key)


def open_stores(root: Path) -> tuple[SQLiteGraphStore, LocalVectorStore]:
    return SQLiteGraphStore(root / "graph.sqlite"), LocalVectorStore(root / "vectors", dimension=64)


def indexer(root: Path, extractor: LLMGraphExtractor) -> tuple[Indexer, SQLiteGraphStore]:
    graph, vectors = open_stores(root)
    made = Indexer(graph, vectors, HashingEmbedder(dimension=64), extractors=[extractor], entity_graph=True)
    return made, graph


def test_parse_is_strict_about_the_shape_and_drops_what_is_outside_the_lists() -> None:
    class Silent:
        async def agenerate(self, messages: Any, *, max_tokens: int | None = None) -> Any:
            raise AssertionError("not called")

    ex = LLMGraphExtractor(Silent(), context_chars=20)
    text = "Ada Lovelace was born in London."
    reply = {
        "entities": [
            {"name": "Ada Lovelace", "type": "person", "description": "A mathematician."},
            {"name": "London", "type": "LOCATION"},
            {"name": "Paris", "type": "LOCATION"},  # not in the text
            {"name": "Lovelace Fan Club", "type": "CLUB"},  # not a type asked for
        ],
        "relations": [
            {"source": "ada lovelace", "target": "London", "type": "born in", "confidence": 1, "context": text * 3},
            {"source": "Ada Lovelace", "target": "Paris", "type": "BORN_IN", "confidence": 0.5},
        ],
    }
    graph, dropped = ex.parse("Here you go: " + json.dumps(reply), text)
    assert [(e.name, e.type) for e in graph.entities] == [("Ada Lovelace", "PERSON"), ("London", "LOCATION")]
    (rel,) = graph.relations
    assert (rel.source, rel.target, rel.type, rel.confidence) == ("Ada Lovelace", "London", "BORN_IN", 1.0)
    assert len(rel.context) <= 20
    assert dropped == 3
    for bad, why in [
        ("no json here", "no JSON object"),
        (
            '{"entities": [{"name": "Ada", "type": "PERSON"}], "relations": [{"source": "Ada", "target": "B", '
            '"type": "USES", "confidence": 1.5}]}',
            "relations.0.confidence",
        ),
        ('{"relations": []}', "entities"),
        ('{"entities": "Ada"}', "entities"),
    ]:
        with pytest.raises(InvalidInput, match=why):
            ex.parse(bad, text)
    with pytest.raises(InvalidInput, match="entity_types"):
        LLMGraphExtractor(Silent(), entity_types=["person"])
    with pytest.raises(InvalidInput, match="generator"):
        LLMGraphExtractor(object())  # type: ignore[arg-type]


async def test_index_writes_typed_entities_scored_relations_and_mention_counts(
    tmp_path: Path, server: ChatCompletionsServer
) -> None:
    ex = LLMGraphExtractor(generator(server), cache=tmp_path / "cache.sqlite")
    idx, graph = indexer(tmp_path, ex)
    report = await idx.aindex(RECORDS)
    assert report.documents == 3
    ada = ENTITY_PREFIX + "ada lovelace"
    docs = await graph.get_documents([ada, ENTITY_PREFIX + "london"])
    assert docs[ada].metadata["entity_type"] == "PERSON"
    assert docs[ada].metadata["description"] == NAMES["Ada Lovelace"][1]
    rels = {(r.source, r.target, r.type): r for r in await graph.relations([ada])}
    assert rels[(ada, "ada", MENTIONED_IN)].weight == 2.0  # two mentions in the passage
    born = rels[(ada, ENTITY_PREFIX + "london", RELATED_TO)]
    assert born.weight == pytest.approx(0.9)
    assert dict(born.metadata) == {
        "relation_type": "BORN_IN",
        "confidence": 0.9,
        "context": "Ada Lovelace was born in London",
    }
    assert (ex.stats.calls, ex.stats.failed) == (3, 0)
    ex.close()


async def test_reindex_asks_the_model_only_for_changed_passages(tmp_path: Path, server: ChatCompletionsServer) -> None:
    cache = tmp_path / "cache.sqlite"
    first = LLMGraphExtractor(generator(server), cache=cache)
    await indexer(tmp_path, first)[0].aindex(RECORDS)
    assert len(server.received) == 3
    first.close()
    # A new process: a new extractor, the same cache file; one record changed.
    again = LLMGraphExtractor(generator(server), cache=cache)
    changed = [RECORDS[0], SourceRecord("engine", RECORDS[1].text + " It was never built.", title="Engine"), RECORDS[2]]
    report = await indexer(tmp_path, again)[0].aindex(changed)
    assert len(server.received) == 4
    assert (again.stats.calls, again.stats.cached) == (1, 2)
    assert report.skipped == 2
    again.close()
    # Another model is another extractor: everything is asked again.
    other = LLMGraphExtractor(openai_plugin.OpenAIGenerator("other", base_url=server.url, api_key=server.api_key))
    other.prefetch([r.text for r in RECORDS])
    assert len(server.received) == 7


async def test_malformed_replies_are_asked_again_once_then_the_passage_has_no_llm_graph(
    tmp_path: Path, server: ChatCompletionsServer
) -> None:
    ex = LLMGraphExtractor(generator(server), cache=tmp_path / "cache.sqlite", concurrency=1)
    # The first passage: bad twice; the second: bad once, then good; the third: good.
    server.plan = [("reply", "not json"), ("reply", '{"entities": 3}'), ("reply", "{}")]
    idx, graph = indexer(tmp_path, ex)
    report = await idx.aindex(RECORDS)
    assert report.documents == 3
    assert (ex.stats.calls, ex.stats.retries, ex.stats.failed) == (5, 2, 1)
    retry = server.received[1]["messages"]
    assert retry[-2]["content"] == "not json"
    assert "not valid" in retry[-1]["content"]
    entities = [d async for d in graph.iter_documents() if d.id.startswith(ENTITY_PREFIX)]
    # The passage that failed twice (Ada's) has no LLM graph; the engine's second answer counted.
    assert sorted(d.id.removeprefix(ENTITY_PREFIX) for d in entities) == ["analytical engine", "charles babbage"]
    ex.close()
    # The failure is cached with the rest: the same model and prompt would fail again.
    again = LLMGraphExtractor(generator(server), cache=tmp_path / "cache.sqlite")
    again.prefetch([r.text for r in RECORDS])
    assert (again.stats.calls, again.stats.cached) == (0, 3)
    assert again.graph(RECORDS[0].text).entities == ()


async def test_graph_context_shows_types_descriptions_and_relations(
    tmp_path: Path, server: ChatCompletionsServer
) -> None:
    ex = LLMGraphExtractor(generator(server))
    idx, graph = indexer(tmp_path, ex)
    await idx.aindex(RECORDS)
    doc = (await graph.get_documents(["ada"]))["ada"]
    context = await abuild_context(
        "Where was Ada Lovelace born?", [Result(doc, 1.0, {})], budget=400, format="graph", graph_store=graph
    )
    assert "ada lovelace [PERSON]: A mathematician who wrote on the Analytical Engine." in context.text
    # (The relation's context is the passage's first sentence, shown already: stated once.)
    assert "- ada lovelace -[BORN_IN]-> london (0.90)\n" in context.text
    doc = (await graph.get_documents(["engine"]))["engine"]
    context = await abuild_context(
        "Who made the engine?", [Result(doc, 1.0, {})], budget=400, format="graph", graph_store=graph
    )
    assert "-[CREATED_BY]-> charles babbage (0.80) | the Analytical Engine of Charles Babbage" in context.text


def test_cli_index_with_the_llm_graph_extractor(tmp_path: Path, server: ChatCompletionsServer) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": r.id, "title": r.title, "text": r.text}) + "\n" for r in RECORDS))
    store = tmp_path / "store"
    args = ["index", str(corpus), "--store", str(store), "--embedder", "hashing", "--entity-extractor", "llm"]
    args += ["--llm", "openai:test-model", "--llm-base-url", server.url]
    env = {"OPENAI_API_KEY": server.api_key}
    first = CliRunner().invoke(app, args, env=env)
    assert first.exit_code == 0, first.output
    assert "llm graph (test-model): 3 model calls" in first.output
    assert (store / "llm-graph-cache.sqlite").is_file()
    second = CliRunner().invoke(app, args, env=env)
    assert second.exit_code == 0, second.output
    assert "0 model calls (0 retried), 3 passages from the cache" in second.output
    assert len(server.received) == 3
    lone = CliRunner().invoke(app, ["index", str(corpus), "--store", str(store), "--llm-base-url", server.url])
    assert lone.exit_code != 0
    assert "--entity-extractor llm" in lone.output


def test_cli_eval_with_the_llm_graph_extractor_caches_in_the_store(
    tmp_path: Path, server: ChatCompletionsServer
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": r.id, "title": r.title, "text": r.text}) + "\n" for r in RECORDS))
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"id": "q1", "question": "Where was Ada Lovelace born?", "gold_ids": ["ada"]}) + "\n")
    store = tmp_path / "store"
    args = ["eval", "--corpus", str(corpus), "--queries", str(queries), "--pipeline", "multihop"]
    args += ["--store", str(store), "--embedder", "hashing", "--entity-extractor", "llm"]
    args += ["--llm", "openai:test-model", "--llm-base-url", server.url]
    env = {"OPENAI_API_KEY": server.api_key}
    first = CliRunner().invoke(app, args, env=env)
    assert first.exit_code == 0, first.output
    assert "llm graph (test-model): 3 model calls" in first.output
    assert (store / "llm-graph-cache.sqlite").is_file()
    # A second run reads every passage's graph from the store's cache: the model is asked nothing.
    second = CliRunner().invoke(app, args, env=env)
    assert second.exit_code == 0, second.output
    assert "0 model calls (0 retried), 3 passages from the cache" in second.output
    assert len(server.received) == 3
    lone = CliRunner().invoke(app, [*args[:-6], "--llm-base-url", server.url])
    assert lone.exit_code != 0
    assert "--entity-extractor llm" in lone.output


def test_the_registered_llm_extractor_builds_its_generator(
    server: ChatCompletionsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
    built = entity_extractor("llm", model="openai:test-model", base_url=server.url, max_entities=3)
    assert isinstance(built, LLMGraphExtractor)
    assert built.model == "test-model"
    assert built.graph(RECORDS[1].text).entities[0].name == "Analytical Engine"
    with pytest.raises(InvalidInput, match="names its model"):
        entity_extractor("llm:openai:a", model="openai:b")

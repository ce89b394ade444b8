"""`graphfuse index` builds entity nodes from the text of untitled corpora, or when told."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphfuse.cli import app
from graphfuse.indexing import ENTITY_PREFIX, SourceRecord, wants_entity_graph
from graphfuse.multihop import aentity_matcher
from graphfuse.stores import aopen_store

CHATS = [
    {"id": "c1", "text": "Wolfgang Schulz booked the Harbor Hall for the spring concert."},
    {"id": "c2", "text": "LiHua asked WolfgangSchulz whether the Harbor Hall has a piano."},
    {"id": "c3", "text": "Adam Smith moved the book club to Friday evening at the Harbor Hall."},
]
TITLED = [
    {"id": "t1", "title": "Harbor Hall", "text": "Harbor Hall is a concert venue by the sea."},
    {"id": "t2", "title": "Wolfgang Schulz", "text": "Wolfgang Schulz is a pianist who plays at Harbor Hall."},
]


def _entities(store: Path) -> int:
    async def go() -> int:
        opened = await aopen_store(store, create=False)
        try:
            return len(await aentity_matcher(opened.graph))
        finally:
            await opened.aclose()

    return asyncio.run(go())


def _index(tmp_path: Path, name: str, rows: list[dict[str, str]], *flags: str) -> Path:
    source = tmp_path / f"{name}.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    store = tmp_path / name
    result = CliRunner().invoke(app, ["index", str(source), "--store", str(store), "--embedder", "hashing", *flags])
    assert result.exit_code == 0, result.output
    return store


@pytest.mark.parametrize(
    ("rows", "flags", "expect_entities"),
    [
        (CHATS, (), True),  # untitled: decided from the records
        (CHATS, ("--no-entity-graph",), False),
        (TITLED, (), False),  # titled: the titles are the graph
        (TITLED, ("--entity-graph",), True),
    ],
    ids=["untitled-auto", "untitled-off", "titled-auto", "titled-on"],
)
def test_index_entity_graph(
    tmp_path: Path, rows: list[dict[str, str]], flags: tuple[str, ...], expect_entities: bool
) -> None:
    store = _index(tmp_path, "s", rows, *flags)
    assert (_entities(store) > 0) is expect_entities


def test_multihop_query_on_a_chat_store_uses_the_entity_graph(tmp_path: Path) -> None:
    store = _index(tmp_path, "chats", CHATS)
    result = CliRunner().invoke(
        app, ["query", "what did wolfgang schulz book?", "--store", str(store), "--preset", "multihop", "--json"]
    )
    assert result.exit_code == 0, result.output
    ids = [r["id"] for r in json.loads(result.stdout)]
    assert ids[0] in {"c1", "c2"}
    assert all(not i.startswith(ENTITY_PREFIX) for i in ids)  # entity nodes are walked through, never returned


def test_wants_entity_graph_rule() -> None:
    assert wants_entity_graph([SourceRecord(id="a", text="x")]) is True
    assert wants_entity_graph([SourceRecord(id="a", text="x", title="Paris")]) is False
    assert wants_entity_graph([SourceRecord(id="a", text="x", title="2024-01-01")]) is True  # no letters
    assert wants_entity_graph([]) is False


def test_wants_entity_graph_when_titles_link_nothing() -> None:
    notes = [
        SourceRecord(id="kickoff.md", text="Alice Novak met Bob Reyes of Acme Corp.", title="Kickoff with Acme"),
        SourceRecord(id="ops.md", text="Carla Diaz runs the database team at Acme Corp.", title="ops"),
        SourceRecord(id="misc.md", text="Lunch near the Lisbon office.", title="misc"),
    ]
    assert wants_entity_graph(notes) is True  # titled, but no title is named elsewhere: an empty graph
    wiki = [
        SourceRecord(id="p", text="Paris is the capital of France.", title="Paris"),
        SourceRecord(id="f", text="France borders Spain.", title="France"),
        SourceRecord(id="s", text="Spain is south of France.", title="Spain"),
    ]
    assert wants_entity_graph(wiki) is False
    linked = [SourceRecord(id=n.id, text=n.text, title=n.title, links=("ops.md",)) for n in notes]
    assert wants_entity_graph(linked) is False  # explicit links make the graph

"""Entity extractors chosen by registered name: the `entity_extractor` kind, `--entity-extractor`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from _plugin_dists import FakeSite, fake_site
from typer.testing import CliRunner

from graphfuse import InvalidInput, NotFound
from graphfuse.cli import app
from graphfuse.indexing import TextEntityExtractor, entity_extractor, entity_extractors
from graphfuse.multihop import aentity_matcher
from graphfuse.plugins import ENTITY_EXTRACTOR, get_registry
from graphfuse.stores import aopen_store

# A third-party extractor: every word in capitals is an entity; ``model`` is a prefix of the key,
# so the test sees which option the spec passed.
SHOUTING = """
from graphfuse.indexing import Mention
from graphfuse.plugins import hookimpl


class Shouting:
    def __init__(self, model="plain"):
        self.model = model

    def extract(self, text):
        import re

        found = re.finditer(r"\\b[A-Z]{3,}\\b", text)
        return [Mention(f"{self.model} {m.group().lower()}", m.start(), m.end()) for m in found]


@hookimpl
def register_entity_extractors(register):
    register("shouting", Shouting)
"""

CHATS = [
    {"id": "c1", "title": "Monday", "text": "ACME shipped the parts. Wolfgang Schulz signed for them."},
    {"id": "c2", "title": "Tuesday", "text": "The ACME invoice is late, says Greta Berg."},
]


@pytest.fixture
def site(tmp_path: Path) -> Iterator[FakeSite]:
    with fake_site(tmp_path) as s:
        s.module("gf_shouting_plugin", SHOUTING)
        s.dist("graphfuse-shouting", {"shouting": "gf_shouting_plugin"})
        get_registry().reload()
        yield s


def _entity_names(store: Path) -> list[str]:
    async def go() -> list[str]:
        opened = await aopen_store(store, create=False)
        try:
            return sorted(key for key, _ in (await aentity_matcher(opened.graph)).match(" ".join(_ALL_WORDS)))
        finally:
            await opened.aclose()

    return asyncio.run(go())


_ALL_WORDS = ["plain acme", "loud acme", "acme", "wolfgang schulz", "greta berg"]


def _index(tmp_path: Path, *flags: str) -> tuple[Path, object]:
    source = tmp_path / "chats.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in CHATS))
    store = tmp_path / "store"
    args = ["index", str(source), "--store", str(store), "--embedder", "hashing", *flags]
    return store, CliRunner().invoke(app, args)


def test_the_builtin_text_extractor_is_registered() -> None:
    assert "text" in get_registry().names(ENTITY_EXTRACTOR)
    built = entity_extractor("text")
    assert isinstance(built, TextEntityExtractor)
    assert [m.entity for m in built.extract("Wolfgang Schulz met Greta Berg.")] == ["wolfgang schulz", "greta berg"]
    assert [type(e) for e in entity_extractors(None)] == [TextEntityExtractor]


@pytest.mark.parametrize(
    ("spec", "error", "message"),
    [
        ("", InvalidInput, "NAME or NAME:MODEL"),
        ("spacy:", InvalidInput, "NAME or NAME:MODEL"),
        (":en_core_web_sm", InvalidInput, "NAME or NAME:MODEL"),
        ("nonesuch", NotFound, "nonesuch"),
        ("text:some_model", InvalidInput, "model"),  # the built-in takes no model
    ],
)
def test_bad_specs(spec: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        entity_extractor(spec)


def test_bad_lists() -> None:
    with pytest.raises(InvalidInput, match="named twice"):
        entity_extractors(["text", "text"])
    with pytest.raises(InvalidInput, match="not the string"):
        entity_extractors("text")


def test_a_plugin_extractor_by_name_and_model(site: FakeSite) -> None:
    assert entity_extractor("shouting").extract("ACME ok")[0].entity == "plain acme"
    assert entity_extractor("shouting:loud").extract("ACME ok")[0].entity == "loud acme"


def test_cli_index_with_a_plugin_extractor(site: FakeSite, tmp_path: Path) -> None:
    # Titled records would get no text graph by default; naming an extractor builds it, with it alone.
    store, result = _index(tmp_path, "--entity-extractor", "shouting:loud")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    assert _entity_names(store) == ["loud acme"]


def test_cli_index_with_two_extractors(site: FakeSite, tmp_path: Path) -> None:
    store, result = _index(tmp_path, "--entity-extractor", "text", "--entity-extractor", "shouting")
    assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
    # Both extractors' entities ("acme" from the text extractor is merged into "plain acme", the
    # one longer name it ends).
    assert _entity_names(store) == ["greta berg", "plain acme", "wolfgang schulz"]


def test_cli_index_unknown_extractor_leaves_no_store(tmp_path: Path) -> None:
    store, result = _index(tmp_path, "--entity-extractor", "nonesuch:model")
    assert result.exit_code != 0
    assert "nonesuch" in result.output  # type: ignore[attr-defined]
    assert not store.exists()  # checked before the store was opened


def test_cli_index_extractor_with_no_entity_graph_is_an_error(tmp_path: Path) -> None:
    store, result = _index(tmp_path, "--entity-extractor", "text", "--no-entity-graph")
    assert result.exit_code != 0
    assert "drop --no-entity-graph" in result.output  # type: ignore[attr-defined]
    assert not store.exists()


def test_indexer_for_records_takes_text_extractors(site: FakeSite) -> None:
    from graphfuse.embedders import HashingEmbedder
    from graphfuse.indexing import Indexer, SourceRecord
    from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

    records = [SourceRecord(r["id"], r["text"], title=r["title"]) for r in CHATS]
    stores = (InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(16))
    shouting = entity_extractor("shouting")
    indexer = Indexer.for_records(records, *stores, text_extractors=[shouting])
    assert "Shouting" in repr(indexer)
    assert "TextEntityExtractor" not in repr(indexer)
    assert "TitleLinker" in repr(indexer)  # titles still link
    with pytest.raises(InvalidInput, match="entity_graph=False"):
        Indexer.for_records(records, *stores, entity_graph=False, text_extractors=[shouting])

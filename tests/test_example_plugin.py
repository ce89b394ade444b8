"""The sample third-party plugin (examples/graphfuse-example-plugin), found through discovery."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from _plugin_dists import FakeSite, fake_site
from typer.testing import CliRunner

from graphfuse import Document, InvalidInput, VectorRecord
from graphfuse.cli import app
from graphfuse.plugins import Components, build_pipeline, get_registry
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@pytest.fixture
def site(tmp_path: Path) -> Iterator[FakeSite]:
    with fake_site(tmp_path) as s:
        yield s


PLUGIN = Path(__file__).resolve().parents[1] / "examples" / "graphfuse-example-plugin"


class QueryVector:
    """An embedder whose query vector is fixed, so the semantic order is known in advance."""

    dimension = 2

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]

    async def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0]


@pytest.fixture
def installed(site: FakeSite, monkeypatch: pytest.MonkeyPatch) -> None:
    """Install the example plugin as pip would expose it: its sources plus dist-info metadata."""
    project = tomllib.loads((PLUGIN / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    monkeypatch.syspath_prepend(str(PLUGIN / "src"))
    site.dist(project["name"], project["entry-points"]["graphfuse"], version=project["version"])
    site.modules.update({"graphfuse_example_plugin", "graphfuse_example_plugin._keyword"})
    get_registry().reload()


async def components() -> Components:
    graph = InMemoryGraphStore()
    vectors = LocalVectorStore(None, dimension=2)
    await graph.store_documents(
        [
            Document("close", "a text about something else entirely"),
            Document("middle", "the graph fusion library for retrieval"),
            Document("far", "graph retrieval fusion with keywords"),
        ]
    )
    # cosine with the query vector [1, 0]: close 0.99, middle 0.8, far 0.6
    await vectors.upsert(
        [
            VectorRecord("close", [0.99, 0.141]),
            VectorRecord("middle", [0.8, 0.6]),
            VectorRecord("far", [0.6, 0.8]),
        ]
    )
    return Components(graph_store=graph, vector_store=vectors, embedder=QueryVector())


@pytest.mark.usefixtures("installed")
def test_discovered_and_listed() -> None:
    info = {p.name: p for p in get_registry().plugins()}["example"]
    assert info.error is None
    assert info.version == "0.1.0"
    assert info.hooks == ("register_stages",)
    assert dict(info.registers) == {"stage": ("keyword_boost",)}
    listed = CliRunner().invoke(app, ["plugins"])
    assert listed.exit_code == 0, listed.output
    example = next(p for p in json.loads(listed.stdout) if p["name"] == "example")
    assert example["registers"] == {"stage": ["keyword_boost"]}


@pytest.mark.usefixtures("installed")
async def test_keyword_signal_changes_the_ranking() -> None:
    comps = await components()
    vector_only = build_pipeline({"stages": ["semantic", "hydrate"], "scorer": {"name": "weighted"}}, comps)
    boosted = build_pipeline(
        {
            "stages": ["semantic", "hydrate", "keyword_boost"],
            "scorer": {"name": "weighted", "weights": {"semantic": 0.5, "keyword": 0.5}},
        },
        comps,
    )
    query = "graph retrieval fusion keywords"
    before = await vector_only.aretrieve(query, top_k=3)
    after = await boosted.aretrieve(query, top_k=3)
    assert [r.id for r in before] == ["close", "middle", "far"]
    assert [r.id for r in after] == ["far", "middle", "close"]
    signals = {r.id: r.signals["keyword"] for r in after}
    assert signals == {"far": 1.0, "middle": 0.75, "close": 0.0}
    assert after[0].contributions["keyword"] == pytest.approx(0.5)


@pytest.mark.usefixtures("installed")
async def test_needs_hydrated_candidates() -> None:
    pipeline = build_pipeline({"stages": ["semantic", "keyword_boost"]}, await components())
    with pytest.raises(Exception, match="needs hydrated candidates") as err:
        await pipeline.aretrieve("graph", top_k=1)
    assert isinstance(err.value.__cause__, InvalidInput)


def test_not_available_without_install() -> None:
    get_registry().reload()
    assert "keyword_boost" not in get_registry().names("stage")

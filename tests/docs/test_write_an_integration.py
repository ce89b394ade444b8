"""The Haystack-style component of docs/write-an-integration.md: built from the page's code against its
stand-in host, short, and run on an entity graph, duplicates and bad input."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from graphfuse import InvalidInput, Relation, run_sync
from graphfuse.indexing import ENTITY_PREFIX
from graphfuse.stores import InMemoryGraphStore

PAGE = Path(__file__).resolve().parents[2] / "docs" / "write-an-integration.md"


def page_namespace() -> dict[str, Any]:
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.DOTALL)
    host, comp = blocks[0], blocks[1]
    assert "class GraphFuseRanker" in comp
    assert len(comp.strip().splitlines()) < 150
    module = types.ModuleType("write_an_integration")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(host + "\n" + comp, str(PAGE), "exec"), module.__dict__)
    return module.__dict__


def test_the_component_runs_core_stages_over_host_documents() -> None:
    ns = page_namespace()
    doc, ranker_cls, host_doc = ns["Document"], ns["GraphFuseRanker"], ns["HostDocument"]
    assert ranker_cls.is_component
    from graphfuse.scoring import WeightedScorer
    from graphfuse.stages import GraphExpansion

    store = InMemoryGraphStore()
    entity = ENTITY_PREFIX + "greta berg"
    run_sync(
        store.store_documents([doc("c1", "Greta Berg moved."), doc("c2", "Greta Berg plays drums."), doc(entity, "")])
    )
    run_sync(store.create_relations([Relation("c1", entity), Relation(entity, "c2")]))
    ranker = ranker_cls([GraphExpansion(store)], WeightedScorer({"semantic": 1.0, "graph": 1.0}))
    given = [host_doc("c1", "Greta Berg moved.", {"kind": "chat"}, 0.6), host_doc("c1", "Greta Berg moved.", {}, 0.9)]
    out = ranker.run("who plays drums?", given)["documents"]
    assert [d.id for d in out] == ["c1", "c1", "c2"]  # the entity node is walked through, never returned
    assert out[0].meta == {"kind": "chat", "graphfuse": {"semantic": 0.9, "graph": 0.9}}  # duplicates merged
    assert out[0].score == pytest.approx(1.8)
    assert out[2].meta["graphfuse"]["graph"] == pytest.approx(0.9 * 0.25)
    assert given[0].meta == {"kind": "chat"}
    assert ranker.run("q", [])["documents"] == []
    with pytest.raises(InvalidInput, match="document 'x' has score 3"):
        ranker.run("q", [host_doc("x", "text", {}, 3.0)])
    with pytest.raises(InvalidInput, match="document 'x' has no text"):
        ranker.run("q", [host_doc("x", None, {}, 0.5)])
    with pytest.raises(InvalidInput, match="document 'x' metadata 'created_at'"):
        ranker.run("q", [host_doc("x", "text", {"created_at": -1}, 0.5)])

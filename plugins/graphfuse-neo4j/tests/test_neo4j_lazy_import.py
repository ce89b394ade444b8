"""Loading the ``neo4j`` plugin must not import ``neo4j``: the SDK is imported when a component is built."""

from __future__ import annotations

import graphfuse_neo4j
import pytest

from graphfuse.plugins import get_registry
from graphfuse.testing import modules_imported_by

# The SDK and the modules that import it.
HEAVY = ("neo4j", "graphfuse_neo4j._cypher", "graphfuse_neo4j._pagerank", "graphfuse_neo4j._store")


def loaded_after(statements: str) -> dict[str, bool]:
    """Which HEAVY modules a fresh interpreter has imported after running ``statements``."""
    return modules_imported_by(statements, HEAVY)


@pytest.mark.parametrize(
    "statements",
    [
        "import graphfuse_neo4j._plugin",
        "import graphfuse_neo4j",
        "from graphfuse.plugins import get_registry\nassert 'neo4j' in get_registry().names('graph_store')",
    ],
)
def test_loading_the_plugin_does_not_import_the_sdk(statements: str) -> None:
    assert loaded_after(statements) == dict.fromkeys(HEAVY, False)


def test_using_the_public_names_imports_the_sdk() -> None:
    statements = "import graphfuse_neo4j as package\nfor name in package.__all__:\n    getattr(package, name)"
    assert loaded_after(statements) == dict.fromkeys(HEAVY, True)


def test_public_names_resolve_on_first_access() -> None:
    assert sorted(dir(graphfuse_neo4j)) == sorted(graphfuse_neo4j.__all__)
    for name in graphfuse_neo4j.__all__:
        assert getattr(graphfuse_neo4j, name).__module__.startswith("graphfuse_neo4j._")
    missing = "NotAName"
    with pytest.raises(AttributeError, match="has no attribute 'NotAName'"):
        getattr(graphfuse_neo4j, missing)


async def test_the_registry_builds_the_public_class() -> None:
    component = get_registry().create("graph_store", "neo4j", uri="neo4j://127.0.0.1:7687")
    try:
        assert isinstance(component, graphfuse_neo4j.Neo4jGraphStore)
    finally:
        await component.close()

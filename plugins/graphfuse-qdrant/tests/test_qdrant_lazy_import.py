"""Loading the ``qdrant`` plugin must not import ``qdrant_client``: the SDK is imported when a component is built."""

from __future__ import annotations

import graphfuse_qdrant
import pytest

from graphfuse.plugins import get_registry
from graphfuse.testing import modules_imported_by

# The SDK and the modules that import it.
HEAVY = ("qdrant_client", "graphfuse_qdrant._filters", "graphfuse_qdrant._store")


def loaded_after(statements: str) -> dict[str, bool]:
    """Which HEAVY modules a fresh interpreter has imported after running ``statements``."""
    return modules_imported_by(statements, HEAVY)


@pytest.mark.parametrize(
    "statements",
    [
        "import graphfuse_qdrant._plugin",
        "import graphfuse_qdrant",
        "from graphfuse.plugins import get_registry\nassert 'qdrant' in get_registry().names('vector_store')",
    ],
)
def test_loading_the_plugin_does_not_import_the_sdk(statements: str) -> None:
    assert loaded_after(statements) == dict.fromkeys(HEAVY, False)


def test_using_the_public_names_imports_the_sdk() -> None:
    statements = "import graphfuse_qdrant as package\nfor name in package.__all__:\n    getattr(package, name)"
    assert loaded_after(statements) == dict.fromkeys(HEAVY, True)


def test_public_names_resolve_on_first_access() -> None:
    assert sorted(dir(graphfuse_qdrant)) == sorted(graphfuse_qdrant.__all__)
    for name in graphfuse_qdrant.__all__:
        assert getattr(graphfuse_qdrant, name).__module__.startswith("graphfuse_qdrant._")
    missing = "NotAName"
    with pytest.raises(AttributeError, match="has no attribute 'NotAName'"):
        getattr(graphfuse_qdrant, missing)


async def test_the_registry_builds_the_public_class() -> None:
    component = get_registry().create("vector_store", "qdrant", location=":memory:")
    try:
        assert isinstance(component, graphfuse_qdrant.QdrantVectorStore)
    finally:
        await component.close()

"""Loading the ``voyage`` plugin must not import ``voyageai``: the SDK is imported when a component is built."""

from __future__ import annotations

import graphfuse_voyage
import pytest

from graphfuse.plugins import get_registry
from graphfuse.testing import modules_imported_by

# The SDK and the modules that import it.
HEAVY = ("voyageai", "graphfuse_voyage._client", "graphfuse_voyage._embedder", "graphfuse_voyage._reranker")


def loaded_after(statements: str) -> dict[str, bool]:
    """Which HEAVY modules a fresh interpreter has imported after running ``statements``."""
    return modules_imported_by(statements, HEAVY)


@pytest.mark.parametrize(
    "statements",
    [
        "import graphfuse_voyage._plugin",
        "import graphfuse_voyage",
        "from graphfuse.plugins import get_registry\n"
        "assert 'voyage' in get_registry().names('embedder')\n"
        "assert 'voyage' in get_registry().names('reranker')",
    ],
)
def test_loading_the_plugin_does_not_import_the_sdk(statements: str) -> None:
    assert loaded_after(statements) == dict.fromkeys(HEAVY, False)


def test_using_the_public_names_imports_the_sdk() -> None:
    statements = "import graphfuse_voyage as package\nfor name in package.__all__:\n    getattr(package, name)"
    assert loaded_after(statements) == dict.fromkeys(HEAVY, True)


def test_public_names_resolve_on_first_access() -> None:
    assert sorted(dir(graphfuse_voyage)) == sorted(graphfuse_voyage.__all__)
    for name in graphfuse_voyage.__all__:
        assert getattr(graphfuse_voyage, name).__module__.startswith("graphfuse_voyage._")
    missing = "NotAName"
    with pytest.raises(AttributeError, match="has no attribute 'NotAName'"):
        getattr(graphfuse_voyage, missing)


def test_the_registry_builds_the_public_classes() -> None:
    embedder = get_registry().create("embedder", "voyage", api_key="test-key")
    reranker = get_registry().create("reranker", "voyage", api_key="test-key")
    assert isinstance(embedder, graphfuse_voyage.VoyageEmbedder)
    assert isinstance(reranker, graphfuse_voyage.VoyageReranker)

"""Loading the ``openai`` plugin must not import ``openai``: the SDK is imported when a component is built."""

from __future__ import annotations

import graphfuse_openai
import pytest

from graphfuse.plugins import get_registry
from graphfuse.testing import modules_imported_by

# The SDK and the modules that import it.
HEAVY = ("openai", "graphfuse_openai._embedder", "graphfuse_openai._generator")


def loaded_after(statements: str) -> dict[str, bool]:
    """Which HEAVY modules a fresh interpreter has imported after running ``statements``."""
    return modules_imported_by(statements, HEAVY)


@pytest.mark.parametrize(
    "statements",
    [
        "import graphfuse_openai._plugin",
        "import graphfuse_openai",
        "from graphfuse.plugins import get_registry\nassert 'openai' in get_registry().names('embedder')",
        "from graphfuse.plugins import get_registry\nassert 'openai' in get_registry().names('generator')",
    ],
)
def test_loading_the_plugin_does_not_import_the_sdk(statements: str) -> None:
    assert loaded_after(statements) == dict.fromkeys(HEAVY, False)


def test_using_the_public_names_imports_the_sdk() -> None:
    statements = "import graphfuse_openai as package\nfor name in package.__all__:\n    getattr(package, name)"
    assert loaded_after(statements) == dict.fromkeys(HEAVY, True)


def test_public_names_resolve_on_first_access() -> None:
    assert sorted(dir(graphfuse_openai)) == sorted(graphfuse_openai.__all__)
    for name in graphfuse_openai.__all__:
        assert getattr(graphfuse_openai, name).__module__.startswith("graphfuse_openai._")
    missing = "NotAName"
    with pytest.raises(AttributeError, match="has no attribute 'NotAName'"):
        getattr(graphfuse_openai, missing)


async def test_the_registry_builds_the_public_class() -> None:
    component = get_registry().create("embedder", "openai", api_key="test-key")
    assert isinstance(component, graphfuse_openai.OpenAIEmbedder)
    await component.close()


async def test_the_registry_builds_the_generator() -> None:
    component = get_registry().create("generator", "openai", model="gpt-4o", api_key="test-key")
    assert isinstance(component, graphfuse_openai.OpenAIGenerator)
    assert (component.model, component.context_window) == ("gpt-4o", 128_000)
    await component.close()

"""Loading the ``redis`` plugin must not import ``redis``: the SDK is imported when a component is built."""

from __future__ import annotations

import graphfuse_redis
import pytest

from graphfuse.plugins import get_registry
from graphfuse.testing import modules_imported_by

# The SDK and the modules that import it.
HEAVY = ("redis", "graphfuse_redis._store")


def loaded_after(statements: str) -> dict[str, bool]:
    """Which HEAVY modules a fresh interpreter has imported after running ``statements``."""
    return modules_imported_by(statements, HEAVY)


@pytest.mark.parametrize(
    "statements",
    [
        "import graphfuse_redis._plugin",
        "import graphfuse_redis",
        "from graphfuse.plugins import get_registry\nassert 'redis' in get_registry().names('cache_store')",
    ],
)
def test_loading_the_plugin_does_not_import_the_sdk(statements: str) -> None:
    assert loaded_after(statements) == dict.fromkeys(HEAVY, False)


def test_using_the_public_names_imports_the_sdk() -> None:
    statements = "import graphfuse_redis as package\nfor name in package.__all__:\n    getattr(package, name)"
    assert loaded_after(statements) == dict.fromkeys(HEAVY, True)


def test_public_names_resolve_on_first_access() -> None:
    assert sorted(dir(graphfuse_redis)) == sorted(graphfuse_redis.__all__)
    for name in graphfuse_redis.__all__:
        assert getattr(graphfuse_redis, name).__module__.startswith("graphfuse_redis._")
    missing = "NotAName"
    with pytest.raises(AttributeError, match="has no attribute 'NotAName'"):
        getattr(graphfuse_redis, missing)


async def test_the_registry_builds_the_public_class() -> None:
    component = get_registry().create("cache_store", "redis", url="redis://127.0.0.1:6379/0")
    try:
        assert isinstance(component, graphfuse_redis.RedisCacheStore)
    finally:
        await component.close()

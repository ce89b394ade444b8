"""Plugin discovery through entry points: good, broken, conflicting and filtered plugins."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _plugin_dists import FakeSite, fake_site

from graphfuse import InvalidInput, NotFound, Pipeline, PluginError
from graphfuse.plugins import Components, Registry, get_registry
from graphfuse.plugins import _registry as registry_module


@pytest.fixture
def site(tmp_path: Path) -> Iterator[FakeSite]:
    with fake_site(tmp_path) as s:
        yield s


GOOD = """
from graphfuse.plugins import hookimpl


class Echo:
    def __init__(self, value=1.0):
        self.name = "echo"
        self.value = value

    async def run(self, query, candidates, context):
        return [c.with_signal("echo", self.value) for c in candidates]


def make_echo(components, *, value=1.0):
    return Echo(value)


class Half:
    def score(self, candidates):
        return [0.5 for _ in candidates]


@hookimpl
def register_stages(register):
    register("echo", make_echo)


@hookimpl
def register_scorers(register):
    register("half", lambda: Half())
"""

BROKEN_IMPORT = """
raise RuntimeError("boom at import")
"""

BROKEN_HOOK = """
from graphfuse.plugins import hookimpl


@hookimpl
def register_stages(register):
    register("wobbly", lambda components: None)
    raise ValueError("hook exploded")
"""


def plugin(name: str) -> dict[str, Any]:
    infos = {p.name: p.to_dict() for p in get_registry().plugins()}
    return infos[name]


def test_builtins_always_listed_first() -> None:
    infos = get_registry().plugins()
    assert infos[0].name == "builtins"
    assert infos[0].error is None
    assert "semantic" in infos[0].registers["stage"]


def test_discovers_a_plugin_with_version_hooks_and_names(site: FakeSite) -> None:
    site.module("gf_good_plugin", GOOD)
    site.dist("graphfuse-good", {"good": "gf_good_plugin"}, version="1.2.3")
    get_registry().reload()
    info = plugin("good")
    assert info == {
        "name": "good",
        "version": "1.2.3",
        "hooks": ["register_scorers", "register_stages"],
        "registers": {"scorer": ["half"], "stage": ["echo"]},
        "error": None,
        "clashes": [],
    }
    json.dumps(info)
    registry = get_registry()
    assert "echo" in registry.names("stage")
    stage: Any = registry.build_stage("echo", Components(), value=0.25)
    assert stage.value == 0.25
    half: Any = registry.create("scorer", "half")
    assert half.score([1, 2]) == [0.5, 0.5]


def test_plugin_may_be_an_object_in_a_module(site: FakeSite) -> None:
    site.module(
        "gf_object_plugin",
        """
        from graphfuse.plugins import hookimpl

        class Plugin:
            @hookimpl
            def register_embedders(self, register):
                register("constant", lambda dimension=3: None)

        plugin = Plugin()
        """,
    )
    site.dist("graphfuse-object", {"object": "gf_object_plugin:plugin"})
    get_registry().reload()
    assert plugin("object")["registers"] == {"embedder": ["constant"]}


def test_broken_import_does_not_break_the_others(site: FakeSite) -> None:
    site.module("gf_good_plugin", GOOD)
    site.module("gf_broken_plugin", BROKEN_IMPORT)
    site.dist("graphfuse-good", {"good": "gf_good_plugin"})
    site.dist("graphfuse-broken", {"broken": "gf_broken_plugin"}, version="0.0.1")
    registry = get_registry()
    registry.reload()

    info = plugin("broken")
    assert info["version"] == "0.0.1"
    assert info["error"] == "RuntimeError: boom at import"
    assert info["registers"] == {}
    assert plugin("good")["error"] is None
    assert "echo" in registry.names("stage")
    assert "semantic" in registry.names("stage")

    # Requesting what the broken plugin provides (its entry-point name) raises, chained.
    with pytest.raises(PluginError, match=r"'broken'.*failed to load.*boom at import") as err:
        registry.build_stage("broken", Components())
    assert isinstance(err.value.__cause__, RuntimeError)
    # An unknown name lists the known ones and points at the failed plugin.
    with pytest.raises(NotFound, match=r"known: .*echo.*semantic.*'broken' \(RuntimeError: boom at import\)"):
        registry.build_stage("nonexistent", Components())


def test_a_raising_hook_fails_only_that_plugin(site: FakeSite) -> None:
    site.module("gf_good_plugin", GOOD)
    site.module("gf_hook_plugin", BROKEN_HOOK)
    site.dist("graphfuse-good", {"good": "gf_good_plugin"})
    site.dist("graphfuse-hooky", {"hooky": "gf_hook_plugin"})
    registry = get_registry()
    registry.reload()
    assert plugin("hooky")["error"] == "ValueError: hook exploded"
    assert plugin("hooky")["hooks"] == ["register_stages"]
    assert "wobbly" not in registry.names("stage")
    with pytest.raises(PluginError, match="'wobbly' would come from plugin 'hooky'") as err:
        registry.build_stage("wobbly", Components())
    assert isinstance(err.value.__cause__, ValueError)
    assert registry.build_stage("echo", Components()).name == "echo"


def test_two_plugins_claiming_one_name(site: FakeSite) -> None:
    site.module("gf_good_plugin", GOOD)
    site.module("gf_good_twin", GOOD)
    site.dist("graphfuse-good", {"good": "gf_good_plugin"})
    site.dist("graphfuse-twin", {"twin": "gf_good_twin"})
    registry = get_registry()
    registry.reload()
    with pytest.raises(PluginError, match=r"stage 'echo' is registered by more than one plugin: 'good', 'twin'"):
        registry.build_stage("echo", Components())
    # Both plugins loaded: the clash is listed as such, not as a load error of either.
    assert plugin("good")["error"] is None
    assert plugin("twin")["error"] is None
    assert "stage 'echo' (also registered by 'twin')" in plugin("good")["clashes"]
    assert "stage 'echo' (also registered by 'good')" in plugin("twin")["clashes"]
    names = registry.names("stage")
    assert "echo" in names
    echo = names[names.index("echo")]
    assert echo.ambiguous
    assert echo.providers == ("good", "twin")
    assert not names[names.index("semantic")].ambiguous
    assert names[names.index("semantic")].providers == ("builtins",)
    # An unknown name lists the ambiguous one as such, and no plugin as "failed to load".
    with pytest.raises(NotFound) as err:
        registry.build_stage("ecko", Components())
    assert "echo (ambiguous: 'good', 'twin')" in str(err.value)
    assert "failed to load" not in str(err.value)


def test_overriding_a_builtin_name_is_a_conflict(site: FakeSite) -> None:
    site.module(
        "gf_override",
        """
        from graphfuse.plugins import hookimpl

        @hookimpl
        def register_scorers(register):
            register("weighted", lambda **o: None)
        """,
    )
    site.dist("graphfuse-override", {"override": "gf_override"})
    registry = get_registry()
    registry.reload()
    with pytest.raises(PluginError, match="'builtins', 'override'"):
        registry.create("scorer", "weighted")
    # The clash is no error of the built-ins (nor a load error of the plugin).
    assert plugin("builtins")["error"] is None
    assert plugin("builtins")["clashes"] == ["scorer 'weighted' (also registered by 'override')"]
    assert plugin("override")["error"] is None
    # Other built-ins are untouched.
    rrf: Any = registry.create("scorer", "rrf")
    assert rrf.k == 60


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            "from graphfuse.plugins import hookimpl\n@hookimpl\ndef register_widgets(register):\n    pass\n",
            "unknown hook(s) register_widgets",
        ),
        (
            "from graphfuse.plugins import hookimpl\n@hookimpl\ndef register_stages(register):\n"
            "    register('bad name!', lambda c: None)\n",
            "invalid stage name 'bad name!'",
        ),
        (
            "from graphfuse.plugins import hookimpl\n@hookimpl\ndef register_stages(register):\n"
            "    register('x', 'not callable')\n",
            "with a non-callable",
        ),
        (
            "from graphfuse.plugins import hookimpl\n@hookimpl\ndef register_stages(register):\n"
            "    register('x', print)\n    register('x', print)\n",
            "registered stage 'x' twice",
        ),
        (
            "from graphfuse.plugins import hookimpl\n@hookimpl\ndef register_stages(register, extra):\n    pass\n",
            "extra",
        ),
    ],
    ids=["unknown-hook", "bad-name", "not-callable", "twice", "bad-signature"],
)
def test_misbehaving_plugins_are_reported(site: FakeSite, source: str, message: str) -> None:
    site.module("gf_misbehaving", source)
    site.dist("graphfuse-misbehaving", {"misbehaving": "gf_misbehaving"})
    get_registry().reload()
    error = plugin("misbehaving")["error"]
    assert error is not None
    assert message in error
    assert plugin("builtins")["error"] is None


def test_duplicate_entry_point_names(site: FakeSite) -> None:
    site.module("gf_good_plugin", GOOD)
    site.module("gf_good_twin", GOOD)
    site.dist("graphfuse-a", {"same": "gf_good_plugin"})
    site.dist("graphfuse-b", {"same": "gf_good_twin"})
    get_registry().reload()
    same = [p for p in get_registry().plugins() if p.name == "same"]
    assert len(same) == 2
    assert [p.error is None for p in same].count(True) == 1
    assert "plugin names must be unique" in next(p.error for p in same if p.error)


def test_allow_list_limits_what_loads(site: FakeSite, monkeypatch: pytest.MonkeyPatch) -> None:
    site.module("gf_good_plugin", GOOD)
    site.module("gf_broken_plugin", BROKEN_IMPORT)
    site.dist("graphfuse-good", {"good": "gf_good_plugin"})
    site.dist("graphfuse-broken", {"broken": "gf_broken_plugin"})
    registry = get_registry()

    monkeypatch.setenv("GRAPHFUSE_LOAD_PLUGINS", "good")
    registry.reload()
    assert [p.name for p in registry.plugins()] == ["builtins", "good"]

    monkeypatch.setenv("GRAPHFUSE_LOAD_PLUGINS", "")
    registry.reload()
    assert [p.name for p in registry.plugins()] == ["builtins"]
    assert "semantic" in registry.names("stage")

    monkeypatch.setenv("GRAPHFUSE_LOAD_PLUGINS", " broken , good ")
    registry.reload()
    assert [p.name for p in registry.plugins()] == ["builtins", "broken", "good"]


def test_factory_failures(site: FakeSite) -> None:
    site.module(
        "gf_factories",
        """
        from graphfuse.plugins import hookimpl

        def explode(components):
            raise KeyError("no such thing")

        @hookimpl
        def register_stages(register):
            register("explode", explode)
            register("not_a_stage", lambda components: object())

        @hookimpl
        def register_rerankers(register):
            register("strict", lambda *, top=1: None)
        """,
    )
    site.dist("graphfuse-factories", {"factories": "gf_factories"})
    registry = get_registry()
    registry.reload()
    with pytest.raises(PluginError, match="stage 'explode' from plugin 'factories' failed to build: KeyError") as err:
        registry.build_stage("explode", Components())
    assert isinstance(err.value.__cause__, KeyError)
    with pytest.raises(PluginError, match="built a object, which lacks name, run: not a stage"):
        registry.build_stage("not_a_stage", Components())
    with pytest.raises(InvalidInput, match=r"reranker 'strict': .*unexpected keyword argument 'bottom'"):
        registry.create("reranker", "strict", bottom=2)


def test_plugin_stage_in_a_declarative_pipeline(site: FakeSite) -> None:
    site.module("gf_good_plugin", GOOD)
    site.dist("graphfuse-good", {"good": "gf_good_plugin"})
    get_registry().reload()
    from graphfuse.plugins import build_pipeline

    pipeline = build_pipeline(
        {"stages": [{"name": "echo", "value": 0.5}], "scorer": {"name": "weighted", "weights": {"echo": 1.0}}}
    )
    assert isinstance(pipeline, Pipeline)
    assert [s.name for s in pipeline.stages] == ["echo"]


def test_lazy_load_happens_once_across_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = registry_module._load

    def counting() -> Any:
        calls.append(1)
        return real()

    monkeypatch.setattr(registry_module, "_load", counting)
    registry = Registry()
    barrier = threading.Barrier(8)
    seen: list[list[str]] = []

    def worker() -> None:
        barrier.wait()
        seen.append(registry.names("stage"))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert len(seen) == 8
    assert all(s == seen[0] for s in seen)


def test_build_pipeline_names_the_entry_of_a_plugin_error(site: FakeSite) -> None:
    site.module("gf_good_plugin", GOOD)
    site.module("gf_hook_plugin", BROKEN_HOOK)
    site.dist("graphfuse-good", {"good": "gf_good_plugin"})
    site.dist("graphfuse-hooky", {"hooky": "gf_hook_plugin"})
    get_registry().reload()
    from graphfuse.plugins import build_pipeline

    with pytest.raises(PluginError, match=r"^stages\[2\]: stage 'wobbly' would come from plugin 'hooky'") as err:
        build_pipeline({"stages": ["echo", "echo", "wobbly"]})
    assert isinstance(err.value.__cause__, PluginError)


CLASHING_SEMANTIC = """
from graphfuse.plugins import hookimpl


@hookimpl
def register_stages(register):
    register("semantic", lambda components, **options: None)
"""


def test_a_clash_behaves_the_same_in_specs_presets_and_the_cli(site: FakeSite, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from graphfuse import presets
    from graphfuse.cli import app
    from graphfuse.embedders import HashingEmbedder
    from graphfuse.plugins import build_pipeline
    from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

    runner = CliRunner()
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("apples grow in orchards")
    store = str(tmp_path / "store")
    assert runner.invoke(app, ["index", str(docs), "--store", store, "--embedder", "hashing"]).exit_code == 0

    site.module("gf_clash_plugin", CLASHING_SEMANTIC)
    site.dist("graphfuse-clash", {"clash": "gf_clash_plugin"})
    get_registry().reload()
    clash = r"stage 'semantic' is registered by more than one plugin: 'builtins', 'clash'"
    embedder = HashingEmbedder(dimension=16)
    components = Components(graph_store=InMemoryGraphStore(), vector_store=LocalVectorStore(), embedder=embedder)
    with pytest.raises(PluginError, match=r"^stages\[0\]: " + clash):
        build_pipeline({"stages": ["semantic", "hydrate"]}, components)
    with pytest.raises(PluginError, match=clash):
        presets.build("no_rerank", graph_store=InMemoryGraphStore(), vector_store=LocalVectorStore(), embedder=embedder)
    with pytest.raises(PluginError, match=clash):
        presets.minimal(LocalVectorStore(), embedder)
    result = runner.invoke(app, ["query", "apples", "--store", store, "--preset", "no_rerank"])
    assert result.exit_code == 1
    assert "more than one plugin: 'builtins', 'clash'" in result.output

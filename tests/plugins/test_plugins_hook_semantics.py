"""Plugins' hooks are called through pluggy, with its semantics, each plugin still isolated.

Wrappers (new style ``wrapper=True`` and old style ``hookwrapper=True``) take effect and see and
alter what the others registered; ``tryfirst``/``trylast`` decide the order the implementations
run in (and so what each sees in ``registered``); a ``firstresult`` hook stops at the first
result; a plugin whose implementation fails, in whatever place pluggy runs it, is listed with
its error while every other plugin's components load.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pluggy
import pytest
from _plugin_dists import FakeSite, fake_site

from graphfuse import PluginError
from graphfuse.plugins import Components, get_registry, hookimpl
from graphfuse.plugins._hookcall import Attribution, attributed


@pytest.fixture
def site(tmp_path: Path) -> Iterator[FakeSite]:
    with fake_site(tmp_path) as s:
        yield s


def plugin(name: str) -> dict[str, Any]:
    return {p.name: p.to_dict() for p in get_registry().plugins()}[name]


def install(site: FakeSite, name: str, source: str) -> None:
    site.module(f"gf_{name}", source)
    site.dist(f"graphfuse-{name}", {name: f"gf_{name}"})


GOOD = """
from graphfuse.plugins import hookimpl


class Echo:
    name = "echo"

    async def run(self, query, candidates, context):
        return list(candidates)


@hookimpl
def register_stages(register):
    register("echo", lambda components: Echo())
"""


# ---- wrappers -----------------------------------------------------------------------------------

NEW_STYLE_WRAPPER = """
from graphfuse.plugins import hookimpl

SEEN = {}


class Traced:
    def __init__(self, inner):
        self.inner = inner

    def score(self, candidates):
        return self.inner.score(candidates)


def traced(factory):
    return lambda **options: Traced(factory(**options))


@hookimpl(wrapper=True)
def register_scorers(register, registered):
    SEEN["before"] = sorted(registered)
    register("wrapped_half", lambda: None)
    result = yield  # every other implementation registers here
    SEEN["after"] = sorted(registered)
    SEEN["providers"] = registered.providers("rrf")
    registered.replace("rrf", traced(registered["rrf"]))
    return result
"""


def test_a_new_style_wrapper_registers_sees_and_replaces(site: FakeSite) -> None:
    install(site, "wrapping", NEW_STYLE_WRAPPER)
    registry = get_registry()
    registry.reload()
    import gf_wrapping  # type: ignore[import-not-found]

    info = plugin("wrapping")
    assert info["error"] is None
    assert info["hooks"] == ["register_scorers"]
    assert info["registers"] == {"scorer": ["wrapped_half"]}  # what it registered, not what it replaced
    # It ran around the others: nothing before its yield, the built-ins' scorers after it.
    assert gf_wrapping.SEEN["before"] == []
    assert {"rrf", "weighted", "wrapped_half"} <= set(gf_wrapping.SEEN["after"])
    assert gf_wrapping.SEEN["providers"] == ("builtins",)
    # The replaced factory is the one built; the name is still the built-ins', unambiguous.
    rrf: Any = registry.create("scorer", "rrf", k=30)
    assert type(rrf).__name__ == "Traced"
    assert rrf.inner.k == 30
    assert next(n for n in registry.names("scorer") if n == "rrf").providers == ("builtins",)
    assert plugin("builtins")["clashes"] == []


OLD_STYLE_WRAPPER = """
from graphfuse.plugins import hookimpl


class Echo:
    name = "late"

    async def run(self, query, candidates, context):
        return list(candidates)


@hookimpl(hookwrapper=True)
def register_stages(register, registered):
    outcome = yield
    outcome.get_result()  # raises if an implementation failed
    if "semantic" in registered:
        register("late", lambda components: Echo())
"""


def test_an_old_style_hookwrapper_takes_effect(site: FakeSite) -> None:
    install(site, "oldwrap", OLD_STYLE_WRAPPER)
    registry = get_registry()
    registry.reload()
    assert plugin("oldwrap")["error"] is None
    assert plugin("oldwrap")["registers"] == {"stage": ["late"]}
    assert registry.build_stage("late", Components()).name == "late"


def test_a_wrapper_replacing_a_factory_is_named_when_it_fails(site: FakeSite) -> None:
    install(
        site,
        "override",
        """
        from graphfuse.plugins import hookimpl

        def broken(**options):
            raise RuntimeError("no weights today")

        @hookimpl(wrapper=True)
        def register_scorers(registered):
            result = yield
            registered.replace("weighted", broken)
            return result
        """,
    )
    get_registry().reload()
    with pytest.raises(PluginError, match=r"from plugin 'builtins' \(factory replaced by plugin 'override'\)"):
        get_registry().create("scorer", "weighted")


# ---- tryfirst / trylast -------------------------------------------------------------------------

FALLBACK = """
from graphfuse.plugins import hookimpl


@hookimpl{marker}
def register_embedders(register, registered):
    # A fallback for a name only when no plugin that ran before registered it.
    if "fast" not in registered:
        register("fast", lambda **options: "fallback")
"""

FAST = """
from graphfuse.plugins import hookimpl


@hookimpl
def register_embedders(register):
    register("fast", lambda **options: "fast")
"""


@pytest.mark.parametrize(
    ("marker", "ambiguous"),
    [("", False), ("(trylast=True)", False), ("(tryfirst=True)", True)],
    ids=["default-order", "trylast", "tryfirst"],
)
def test_tryfirst_and_trylast_order_what_an_implementation_sees(site: FakeSite, marker: str, ambiguous: bool) -> None:
    # "aaa" is registered with pluggy before "zzz", so by default pluggy calls it after "zzz"
    # (last registered first): it sees "fast" and registers nothing. tryfirst makes it run
    # first, before "fast" exists: both then register the name, which is ambiguous.
    install(site, "aaa", FALLBACK.format(marker=marker))
    install(site, "zzz", FAST)
    registry = get_registry()
    registry.reload()
    fast = next(n for n in registry.names("embedder") if n == "fast")
    assert fast.ambiguous is ambiguous
    assert plugin("aaa")["registers"] == ({"embedder": ["fast"]} if ambiguous else {})
    if ambiguous:
        assert fast.providers == ("aaa", "zzz")
        with pytest.raises(PluginError, match="more than one plugin: 'aaa', 'zzz'"):
            registry.create("embedder", "fast")
    else:
        assert fast.providers == ("zzz",)


# ---- firstresult --------------------------------------------------------------------------------

spec = pluggy.HookspecMarker("graphfuse")


class FirstResultSpecs:
    @spec(firstresult=True)
    def choose(self, options: list[str]) -> str | None:  # type: ignore[empty-body]
        """Pick one of ``options``; the first answer wins."""


class Picker:
    def __init__(self, answer: str | None, **marks: bool) -> None:
        self.answer = answer
        self.calls = 0
        # A bound method cannot carry the marker itself: mark a function per instance.

        def choose(options: list[str]) -> str | None:
            self.calls += 1
            return self.answer

        self.choose = hookimpl(**marks)(choose)  # type: ignore[call-overload]


def test_a_firstresult_hook_keeps_pluggys_semantics_through_the_stand_ins() -> None:
    """No GraphFuse hook is ``firstresult`` today; the adapter must not break one that is."""
    pm = pluggy.PluginManager("graphfuse")
    pm.add_hookspecs(FirstResultSpecs)
    attribution = Attribution()
    none, first, later, last = Picker(None, tryfirst=True), Picker("b"), Picker("a"), Picker("z", trylast=True)
    for name, picker in [("last", last), ("later", later), ("first", first), ("none", none)]:
        pm.register(attributed(pm, picker, name, attribution), name=name)
    # tryfirst "none" answers None (ignored); then the last registered, "first", answers: the rest never run.
    assert pm.hook.choose(options=["a", "b"]) == "b"
    assert (none.calls, first.calls, later.calls, last.calls) == (1, 1, 0, 0)
    assert attribution.failures == {}


def test_a_wrapper_of_a_firstresult_hook_sees_the_one_result() -> None:
    pm = pluggy.PluginManager("graphfuse")
    pm.add_hookspecs(FirstResultSpecs)
    attribution = Attribution()

    class Upper:
        @hookimpl(wrapper=True)
        def choose(self, options: list[str]) -> Any:
            result = yield
            return result.upper()

    pm.register(attributed(pm, Picker("b"), "picker", attribution), name="picker")
    pm.register(attributed(pm, Upper(), "upper", attribution), name="upper")
    assert pm.hook.choose(options=["b"]) == "B"


# ---- a broken plugin stays isolated, wherever pluggy runs it ------------------------------------


RAISES_FIRST = """
from graphfuse.plugins import hookimpl


@hookimpl(tryfirst=True)
def register_stages(register):
    register("half_done", lambda components: None)
    raise ValueError("hook exploded")
"""


def test_a_raising_implementation_run_first_does_not_cost_the_others(site: FakeSite) -> None:
    # Run first, its exception would stop pluggy's call before every other implementation:
    # the registry drops it and calls the hooks again.
    install(site, "good", GOOD)
    install(site, "hooky", RAISES_FIRST)
    registry = get_registry()
    registry.reload()
    assert plugin("hooky")["error"] == "ValueError: hook exploded"
    assert plugin("good")["error"] is None
    assert {"echo", "semantic", "hydrate"} <= set(registry.names("stage"))
    assert "half_done" not in registry.names("stage")
    with pytest.raises(PluginError, match="'half_done' would come from plugin 'hooky'") as err:
        registry.build_stage("half_done", Components())
    assert isinstance(err.value.__cause__, ValueError)


SWALLOWING_WRAPPER = """
from graphfuse.plugins import hookimpl


@hookimpl(wrapper=True)
def register_stages(register):
    try:
        return (yield)
    except ValueError:
        return []  # swallows another plugin's failure
"""


def test_a_wrapper_swallowing_a_failure_does_not_hide_the_broken_plugin(site: FakeSite) -> None:
    install(site, "good", GOOD)
    install(site, "hooky", RAISES_FIRST)
    install(site, "swallow", SWALLOWING_WRAPPER)
    registry = get_registry()
    registry.reload()
    assert plugin("hooky")["error"] == "ValueError: hook exploded"
    assert plugin("swallow")["error"] is None
    assert plugin("good")["error"] is None
    assert "half_done" not in registry.names("stage")
    assert "echo" in registry.names("stage")


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            "@hookimpl(wrapper=True)\ndef register_stages(register):\n"
            "    raise RuntimeError('before yield')\n    yield\n",
            "RuntimeError: before yield",
        ),
        (
            "@hookimpl(wrapper=True)\ndef register_stages(register):\n    result = yield\n"
            "    raise RuntimeError('after yield')\n",
            "RuntimeError: after yield",
        ),
        (
            "@hookimpl(wrapper=True)\ndef register_stages(register):\n    return\n    yield\n",
            "hook wrapper register_stages returned without yielding",
        ),
        (
            "@hookimpl(wrapper=True)\ndef register_stages(register):\n    yield\n    yield\n",
            "hook wrapper register_stages yielded more than once",
        ),
        (
            "@hookimpl(hookwrapper=True)\ndef register_stages(register):\n    outcome = yield\n"
            "    raise RuntimeError('old style teardown')\n",
            "RuntimeError: old style teardown",
        ),
        ("@hookimpl(wrapper=True)\ndef register_stages(register):\n    return None\n", "not a generator function"),
        (
            "@hookimpl(wrapper=True)\ndef register_stages(registered):\n    result = yield\n"
            "    registered.replace('no_such_stage', print)\n    return result\n",
            "replaced stage 'no_such_stage', which nothing registered",
        ),
    ],
    ids=["before-yield", "after-yield", "no-yield", "two-yields", "old-style-teardown", "not-generator", "replace"],
)
def test_a_broken_wrapper_is_listed_and_the_others_load(site: FakeSite, source: str, message: str) -> None:
    install(site, "good", GOOD)
    install(site, "badwrap", "from graphfuse.plugins import hookimpl\n" + source)
    registry = get_registry()
    with pytest.warns(pluggy.PluggyTeardownRaisedWarning) if "old style" in message else nullcontext():
        registry.reload()
    error = plugin("badwrap")["error"]
    assert error is not None
    assert message in error
    assert plugin("good")["error"] is None
    assert plugin("builtins")["error"] is None
    assert {"echo", "semantic"} <= set(registry.names("stage"))


def test_register_kept_for_later_is_refused(site: FakeSite) -> None:
    install(
        site,
        "keeper",
        """
        from graphfuse.plugins import hookimpl

        KEPT = []

        @hookimpl
        def register_scorers(register):
            KEPT.append(register)
        """,
    )
    get_registry().reload()
    import gf_keeper  # type: ignore[import-not-found]

    with pytest.raises(PluginError, match="outside a hook call"):
        gf_keeper.KEPT[0]("late", lambda: None)


def test_graphfuse_plugins_lists_a_wrapper_and_a_broken_plugin(site: FakeSite) -> None:
    from typer.testing import CliRunner

    from graphfuse.cli import app

    install(site, "wrapping", NEW_STYLE_WRAPPER)
    install(site, "hooky", RAISES_FIRST)
    get_registry().reload()
    result = CliRunner().invoke(app, ["plugins"])
    assert result.exit_code == 0, result.output
    listed = {p["name"]: p for p in json.loads(result.output)}
    assert listed["wrapping"]["registers"] == {"scorer": ["wrapped_half"]}
    assert listed["wrapping"]["error"] is None
    assert listed["hooky"]["error"] == "ValueError: hook exploded"
    assert listed["builtins"]["error"] is None
    # Kinds listed in name order, as before hooks went through pluggy's call.
    assert list(listed["builtins"]["registers"]) == sorted(listed["builtins"]["registers"])


def test_a_wrapper_replacing_a_preset_keeps_its_declaration(site: FakeSite) -> None:
    from graphfuse import presets

    install(
        site,
        "presetwrap",
        """
        from graphfuse.plugins import hookimpl

        def mine(**inputs):
            raise NotImplementedError

        @hookimpl(wrapper=True)
        def register_presets(registered):
            result = yield
            registered.replace("minimal", "gf_presetwrap:mine")
            return result
        """,
    )
    before = presets.get("minimal")
    get_registry().reload()
    after = presets.get("minimal")
    assert (after.needs, after.uses, after.plugin) == (before.needs, before.uses, "builtins")
    import gf_presetwrap  # type: ignore[import-not-found]

    assert after.factory() is gf_presetwrap.mine


def test_specname_and_plugin_objects_keep_working(site: FakeSite) -> None:
    install(
        site,
        "named",
        """
        from graphfuse.plugins import hookimpl

        class Plugin:
            @hookimpl(specname="register_scorers", trylast=True)
            def scorers(self, register):
                register("named_half", lambda: None)

        plugin = Plugin()
        """,
    )
    site.dist("graphfuse-named-object", {"named_object": "gf_named:plugin"})
    get_registry().reload()
    assert plugin("named_object")["hooks"] == ["register_scorers"]
    assert plugin("named_object")["registers"] == {"scorer": ["named_half"]}

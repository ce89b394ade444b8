"""The hook specifications, their docstrings and the hooks table of docs/plugins.md agree.

One ``register_<kinds>`` function per component kind (``COMPONENT_KINDS``) plus
``register_presets``; each states the factory's signature and what a built component must have,
and the docs table lists the same hooks, in the same order, with the same kinds and signatures.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from graphfuse.plugins import COMPONENT_KINDS, hookspecs

ROOT = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| `(register_\w+)` \| `?([\w ]+?)`? \| `([^`]+)`", re.MULTILINE)


def _hooks() -> list[str]:
    return [k.hook for k in COMPONENT_KINDS] + ["register_presets"]


def test_each_hook_is_a_written_out_function_with_its_contract() -> None:
    for kind in COMPONENT_KINDS:
        hook = getattr(hookspecs, kind.hook)
        assert inspect.isfunction(hook), kind.hook
        assert hook.__module__ == hookspecs.__name__, f"{kind.hook} is not written out in hookspecs"
        assert list(inspect.signature(hook).parameters) == ["register", "registered"], kind.hook
        doc = inspect.getdoc(hook) or ""
        assert f"-> {kind.protocol.__name__}" in doc, f"{kind.hook}: docstring names no factory result"
        assert f"must have: {', '.join(kind.members)}." in doc, f"{kind.hook}: docstring lists other members"
    assert inspect.getdoc(hookspecs.register_presets)
    assert list(inspect.signature(hookspecs.register_presets).parameters) == ["register", "registered"]


def test_the_docs_table_lists_the_hooks_with_their_kinds_and_signatures() -> None:
    text = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    rows = ROW.findall(text.split("## The hooks", 1)[1].split("\n## ", 1)[0])
    assert [hook for hook, _, _ in rows] == _hooks()
    for (hook, kind_name, signature), kind in zip(rows[:-1], COMPONENT_KINDS, strict=True):
        assert kind_name == kind.name, hook
        doc = inspect.getdoc(getattr(hookspecs, hook)) or ""
        assert signature in doc, f"docs/plugins.md gives {hook} the signature {signature!r}; the hookspec does not"

"""Fake installed distributions for the plugin tests.

A directory on ``sys.path`` holding ``<name>-<version>.dist-info/{METADATA,entry_points.txt}``
is what ``importlib.metadata`` discovers, exactly as for a pip-installed package, without
touching the real virtualenv.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

from graphfuse.plugins import get_registry


class FakeSite:
    """A ``site-packages``-like directory that tests add distributions and modules to."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.modules: set[str] = set()

    def module(self, name: str, source: str) -> None:
        """Write module ``name`` (a top-level ``.py``) with ``source``."""
        (self.root / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        self.modules.add(name)

    def dist(self, name: str, entry_points: Mapping[str, str], *, version: str = "1.0.0") -> None:
        """Declare distribution ``name`` with ``entry_points`` in the ``graphfuse`` group."""
        info = self.root / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
        lines = "".join(f"{k} = {v}\n" for k, v in entry_points.items())
        (info / "entry_points.txt").write_text(f"[graphfuse]\n{lines}", encoding="utf-8")


@contextmanager
def fake_site(tmp_path: Path) -> Iterator[FakeSite]:
    """A fake site directory on ``sys.path``; the registry is reloaded without it afterwards."""
    root = tmp_path / "site"
    root.mkdir()
    site = FakeSite(root)
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(root))
        mp.delenv("GRAPHFUSE_LOAD_PLUGINS", raising=False)
        yield site
    for name in site.modules:
        sys.modules.pop(name, None)
    get_registry().reload()

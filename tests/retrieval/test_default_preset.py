"""One default preset (multihop) in the CLI, the server, a store directory's pipeline and the README."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from typer.testing import CliRunner

from graphfuse import presets
from graphfuse.cli import app
from graphfuse.server import Service
from graphfuse.stores import open_store

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_the_default_is_multihop() -> None:
    assert presets.DEFAULT_PRESET == "multihop"
    assert presets.DEFAULT_PRESET in presets.names()


def test_the_server_defaults_to_it() -> None:
    (field,) = [f for f in dataclasses.fields(Service) if f.name == "default_preset"]
    assert field.default == presets.DEFAULT_PRESET


def test_a_store_directory_and_the_cli_default_to_it(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "orchard.md").write_text("# Orchard\n\nApples grow in the orchard by the river.\n")
    (docs / "river.md").write_text("# River\n\nThe river feeds the [Orchard](orchard.md).\n")
    store = tmp_path / "store"
    indexed = runner.invoke(app, ["index", str(docs), "--store", str(store), "--embedder", "hashing"])
    assert indexed.exit_code == 0, indexed.output
    with open_store(store, mode="ro") as opened:
        assert opened.default_preset == presets.DEFAULT_PRESET
        default = [s.name for s in opened.pipeline().stages]
        assert default == [s.name for s in opened.pipeline(presets.DEFAULT_PRESET).stages]
    queried = runner.invoke(app, ["query", "apples by the river", "--store", str(store), "--json"])
    assert queried.exit_code == 0, queried.output
    signals = set().union(*(r["signals"] for r in json.loads(queried.stdout)))
    assert {"bm25", "ppr"} <= signals  # multihop's own signals: not standard's


def test_the_readme_retrieves_with_it() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"presets.{presets.DEFAULT_PRESET}(" in readme
    for other in ("standard", "no_rerank", "minimal", "bm25", "hybrid"):
        assert f"presets.{other}(" not in readme

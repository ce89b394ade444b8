"""The CLI starts without importing what a command may not need, so start-up stays fast."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("scipy", "torch", "sentence_transformers", "tiktoken", "faiss", "fastapi", "uvicorn", "matplotlib", "docutils")


def _loaded_after(code: str) -> set[str]:
    probe = f"import sys\n{code}\nimport json\nprint(json.dumps(sorted(set(m.split('.')[0] for m in sys.modules))))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_importing_the_cli_and_opening_stores_module_loads_no_heavy_package() -> None:
    loaded = _loaded_after("import graphfuse.cli, graphfuse.stores")
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))


@pytest.mark.slow
def test_the_probe_sees_a_heavy_import() -> None:
    assert "scipy" in _loaded_after("import graphfuse.multihop")


@pytest.mark.slow
def test_a_command_imports_its_own_module_only() -> None:
    code = (
        "import json, sys\n"
        "sys.argv = ['graphfuse', 'query', '--help']\n"
        "from graphfuse.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('graphfuse'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    assert "graphfuse.cli._query" in loaded
    others = {"graphfuse.cli._index", "graphfuse.cli._eval", "graphfuse.evaluation", "graphfuse.server"}
    assert loaded.isdisjoint(others), sorted(loaded & others)


def test_the_app_has_every_command() -> None:
    from graphfuse.cli import COMMANDS, app

    names = {c.name for c in app.registered_commands} | {g.name for g in app.registered_groups}
    assert names == set(COMMANDS)

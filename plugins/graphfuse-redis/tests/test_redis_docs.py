"""Every ```python block of docs/backends/redis.md, run against the session's redis-server.

The page's Redis-dependent block is marked ``snippet: skip`` for the server-less docs test
(tests/docs/test_docs_snippets.py); here all blocks run, with the page's URL pointed at our server.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[3] / "docs" / "backends" / "redis.md"
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)
DOC_URL = "redis://127.0.0.1:6379/0"


@pytest.mark.skipif(not PAGE.exists(), reason="docs/backends/redis.md is not in this checkout")
async def test_redis_page_snippets_run(redis_url: str) -> None:
    blocks = FENCE.findall(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 3
    assert all(DOC_URL in b for b in blocks if "redis://" in b)
    namespace: dict[str, object] = {"__name__": "__snippet__"}
    for i, block in enumerate(blocks):
        code = compile(
            block.replace(DOC_URL, redis_url), f"redis.md block {i}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        )
        result = eval(code, namespace)
        if result is not None:
            await result

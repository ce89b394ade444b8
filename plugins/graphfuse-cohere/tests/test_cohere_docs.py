"""The Cohere block of docs/backends/providers.md, run against the local Cohere-speaking server.

That block is marked ``snippet: skip`` for the server-less docs test (tests/docs/test_docs_snippets.py)
because it calls the API; here it runs with its keys and URL taken from the environment, as the
page says, pointed at our server.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from cohere_fake_api import API_KEY, CohereServer

PAGE = Path(__file__).resolve().parents[3] / "docs" / "backends" / "providers.md"
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)


@pytest.mark.skipif(not PAGE.exists(), reason="docs/backends/providers.md is not in this checkout")
async def test_cohere_block_of_the_providers_page_runs(
    cohere_server: CohereServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    [block] = [b for b in FENCE.findall(PAGE.read_text(encoding="utf-8")) if "CohereEmbedder()" in b]
    monkeypatch.setenv("COHERE_API_KEY", API_KEY)
    monkeypatch.setenv("CO_API_URL", cohere_server.url)
    code = compile(block, "providers.md (Cohere block)", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    result = eval(code, {"__name__": "__snippet__"})  # running our own documentation
    if result is not None:
        await result
    assert [p for p, _ in cohere_server.requests] == ["/v2/embed", "/v2/embed", "/v2/rerank"]

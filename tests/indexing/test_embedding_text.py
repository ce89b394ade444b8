"""What the indexer embeds for a unit: its document's title before it, once."""

from __future__ import annotations

from graphfuse.indexing import embedding_text


def test_the_title_goes_before_the_text_once() -> None:
    assert embedding_text("Edge Proxy", "It retries twice.") == "Edge Proxy\nIt retries twice."
    assert embedding_text("Edge Proxy", "Edge Proxy retries twice.") == "Edge Proxy retries twice."
    assert embedding_text(None, "It retries twice.") == "It retries twice."
    assert embedding_text("", "It retries twice.") == "It retries twice."

"""A small documentation folder (headings, links between pages) and an offline embed_model."""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_index.retrievers.graphfuse import GraphFuseEmbedding

from graphfuse.embedders import HashingEmbedder

PAGES = {
    "deploy.md": "# Deploying\n\nRun the service behind the Edge Proxy; see [Edge Proxy](proxy.md).\n\n"
    "Deployments roll out region by region, starting with the Oslo region.\n",
    "proxy.md": "# Edge Proxy\n\nThe Edge Proxy retries a request twice before failing.\n\n"
    "Its timeouts are set in the Routing Table.\n",
    "routing.md": "# Routing Table\n\nThe Routing Table maps hostnames to services. Maria Lund owns it.\n",
    "oncall.md": "# On-call\n\nThe on-call engineer answers pages within ten minutes and escalates to Maria Lund.\n",
    "billing.md": "# Billing\n\nInvoices are sent on the first working day of the month.\n",
}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Five markdown pages, four of them linked by links or by naming each other's titles."""
    root = tmp_path / "handbook"
    root.mkdir()
    for name, text in PAGES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def embed_model() -> GraphFuseEmbedding:
    """An offline embed_model whose vectors the registered 'hashing' embedder (384-d) makes too."""
    return GraphFuseEmbedding(HashingEmbedder())

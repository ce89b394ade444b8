"""Fixtures for the voyage plugin's tests: a local stand-in for the API (see ``voyage_fake_api``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from voyage_fake_api import VoyageServer


@pytest.fixture
async def voyage_server() -> AsyncIterator[VoyageServer]:
    server = VoyageServer()
    app = web.Application()
    app.router.add_post("/v1/embeddings", server.answer)
    app.router.add_post("/v1/rerank", server.answer)
    test_server = TestServer(app, host="127.0.0.1")
    await test_server.start_server()
    server.url = str(test_server.make_url("/v1"))
    yield server
    server.unblock.set()
    await test_server.close()

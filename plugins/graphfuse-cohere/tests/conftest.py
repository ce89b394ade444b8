"""Fixtures for the cohere plugin's tests: a local stand-in for the API (see ``cohere_fake_api``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from cohere_fake_api import CohereServer


@pytest.fixture
async def cohere_server() -> AsyncIterator[CohereServer]:
    server = CohereServer()
    app = web.Application()
    app.router.add_post("/v2/embed", server.handle)
    app.router.add_post("/v2/rerank", server.handle)
    test_server = TestServer(app, host="127.0.0.1")
    await test_server.start_server()
    server.url = str(test_server.make_url("")).rstrip("/")
    yield server
    server.release.set()
    await test_server.close()

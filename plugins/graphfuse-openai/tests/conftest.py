"""Fixtures for the openai plugin's tests: a local stand-in for the API (see ``openai_fake_api``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from openai_fake_api import OpenAIServer


@pytest.fixture
async def openai_server() -> AsyncIterator[OpenAIServer]:
    server = OpenAIServer()
    app = web.Application()
    app.router.add_post("/v1/embeddings", server.embeddings)
    http = TestServer(app, host="127.0.0.1")
    await http.start_server()
    server.url = str(http.make_url("/v1"))
    yield server
    server.stop_stalling.set()
    await http.close()

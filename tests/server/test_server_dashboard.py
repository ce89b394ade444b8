"""The dashboard in a real headless Chromium (Debian's package) against a real uvicorn.

Skipped, saying why, when Playwright or ``/usr/bin/chromium`` is missing (``.ci/run``
installs chromium). The screenshot is saved in the test's directory; set
``GRAPHFUSE_DASHBOARD_SCREENSHOT`` to also write it elsewhere (the docs page's image is made so).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

pytestmark = pytest.mark.slow  # a real browser against a real server
uvicorn = pytest.importorskip("uvicorn")

from _server_world import ACME, CHUNKED, GLOBEX, served  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _two_tenants_docs() -> list[dict[str, object]]:
    docs: list[dict[str, object]] = [
        {k: v for k, v in d.items() if k != "links"} | {"id": f"{i}-{d['id']}"} for i, d in enumerate(ACME + GLOBEX)
    ]
    docs[2]["links"] = [docs[0]["id"], docs[1]["id"]]
    return docs


@contextmanager
def _live(tmp_path: Path, docs: list[dict[str, object]]) -> Iterator[str]:
    """The real app over ``docs`` (no keys), served by uvicorn on a loopback port in a thread."""
    ready = threading.Event()
    holder: dict[str, object] = {}
    port = _free_port()

    async def main() -> None:
        async with served(tmp_path, with_keys=False, corpus=False, sample_questions=()) as w:
            r = await w.client.post("/v1/ingest", json={"documents": docs})
            assert r.status_code == 200, r.text
            server = uvicorn.Server(uvicorn.Config(w.app, host="127.0.0.1", port=port, log_level="warning"))
            holder["server"] = server
            task = asyncio.create_task(server.serve())
            while not server.started:  # noqa: ASYNC110 - uvicorn exposes a flag, not an event
                await asyncio.sleep(0.05)
            ready.set()
            await task

    thread = threading.Thread(target=lambda: asyncio.run(main()), daemon=True)
    thread.start()
    assert ready.wait(60), "server did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        holder["server"].should_exit = True  # type: ignore[attr-defined]
        thread.join(30)


@pytest.fixture
def live_server(tmp_path: Path) -> Iterator[str]:
    """The real app over a two-tenant store, served by uvicorn on a loopback port in a thread."""
    with _live(tmp_path, _two_tenants_docs()) as base:
        yield base


def _browser(p: Any) -> Any:
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"no Chromium at {CHROMIUM}: install Debian's chromium (.ci/run does)")
    return p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)


def test_the_subgraph_of_a_chunked_store_draws_the_relations_between_pages(tmp_path: Path) -> None:
    """Results are passages; the subgraph relates them by their pages' relations."""
    playwright = pytest.importorskip("playwright.sync_api")
    with _live(tmp_path, list(CHUNKED)) as base, playwright.sync_playwright() as p:
        browser = _browser(p)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1500})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(base + "/")
            page.locator("#samples button.sample").first.wait_for(timeout=30_000)
            page.fill("#question", "orchard cider calendar crew season")
            page.press("#question", "Enter")
            page.wait_for_function("document.body.dataset.state === 'done'", timeout=60_000)
            assert page.locator("#graph-svg g.node").count() >= 3
            ids = set(page.locator("#graph-svg g.node").evaluate_all("gs => gs.map(g => g.dataset.id)"))
            assert all("#" in i for i in ids), ids  # the nodes are passages
            edges = page.locator("#graph-svg line.edge")
            assert edges.count() >= 2
            types = set(edges.evaluate_all("ls => ls.map(l => l.dataset.type)"))
            assert {"LINKS_TO", "MENTIONS"} <= types, types
            note = page.inner_text("#graph-note")
            assert " 0 relations" not in note
            assert "relations" in note
            assert not errors, errors
        finally:
            browser.close()


def test_dashboard_asks_a_sample_question_and_draws_everything(live_server: str, tmp_path: Path) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"no Chromium at {CHROMIUM}: install Debian's chromium (.ci/run does)")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1500})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            requests: list[str] = []
            page.on("request", lambda req: requests.append(req.url))
            page.goto(live_server + "/")
            sample = page.locator("#samples button.sample").first
            sample.wait_for(timeout=30_000)
            question = sample.inner_text()
            # No --questions: the samples are made from the store's titles.
            titles = {d["title"] for d in ACME + GLOBEX}
            assert any(t in question for t in titles), question
            assert page.locator("#progress").is_hidden()
            sample.click()
            page.wait_for_function("document.body.dataset.state === 'done'", timeout=60_000)
            assert page.locator("#progress").is_hidden()
            # Each pipeline's context, collapsed until opened.
            for box in ("#basic-context", "#graph-context"):
                assert page.locator(f"{box} .context-text").is_hidden()
                page.click(f"{box} summary")
                assert page.locator(f"{box} .context-text").is_visible()
                assert "tokens" in page.inner_text(f"{box} .context-meta")
            assert "[1]" in page.inner_text("#basic-context .context-text")
            assert "## ENTITIES" in page.inner_text("#graph-context .context-text")
            assert page.input_value("#question") == question
            # Both source lists, ranked, with their signals.
            assert page.locator("#basic-sources li.source").count() >= 1
            assert page.locator("#graph-sources li.source").count() >= 1
            assert page.locator("#graph-sources .signal").count() >= 1
            # The subgraph: nodes and the relations among them.
            assert page.locator("#graph-svg g.node").count() >= 2
            assert page.locator("#graph-svg line.edge").count() >= 1
            # Charts: three token bars, the radar's rings and axes, a latency bar per pipeline.
            assert page.locator("#tokens-svg rect.bar").count() == 3
            # Context tokens of both RAG pipelines (LLM only sends none).
            values = [
                int(v) for v in page.locator("#tokens-svg rect.bar").evaluate_all("rs => rs.map(r => r.dataset.value)")
            ]
            assert values[0] == 0
            assert values[1] > 0
            assert values[2] > 0
            assert "context tokens" in page.inner_text("#tokens-note")
            assert page.locator("#judge-svg polygon.ring").count() == 4
            assert page.locator("#judge-svg line.axis").count() == 4
            # Latency: what each bar timed, retrieval and context of both pipelines; labels whole.
            kinds = page.locator("#latency-svg rect.bar").evaluate_all("rs => rs.map(r => r.dataset.what)")
            assert kinds.count("retrieval") == 2
            assert kinds.count("context") == 2
            note = page.inner_text("#latency-note")
            assert "retrieval" in note
            assert "context" in note
            for label in page.locator("#latency-svg text.latency-label").all():
                assert label.evaluate("t => t.getBBox().x >= 0 && t.getBBox().x + t.getBBox().width <= 150")
            for label in page.locator("#graph-svg text.node-label").all():
                assert label.evaluate("t => t.getBBox().x >= 0 && t.getBBox().x + t.getBBox().width <= 1000")
                assert not (label.text_content() or "").endswith("…")
            shown = {
                (label.text_content() or "").split(". ", 1)[1]
                for label in page.locator("#graph-svg text.node-label").all()
            }
            assert shown <= titles | {d["id"] for d in ACME + GLOBEX}, shown
            # No LLM on this server: the answer panels say so.
            for panel in page.locator(".answer .answer-text").all():
                assert "No LLM is configured" in panel.inner_text()
            assert "no LLM" in page.inner_text("#judge-note")
            assert not errors, errors
            assert all(url.startswith(live_server) for url in requests), requests
            shot = tmp_path / "dashboard.png"
            page.screenshot(path=str(shot), full_page=True)
            assert shot.stat().st_size > 10_000
            extra = os.environ.get("GRAPHFUSE_DASHBOARD_SCREENSHOT")
            if extra:
                shutil.copyfile(shot, extra)
        finally:
            browser.close()


async def test_sample_questions_come_from_the_tenants_own_titles(tmp_path: Path) -> None:
    async with served(tmp_path, sample_questions=()) as w:
        for tenant, own, other in (("acme", ACME, GLOBEX), ("globex", GLOBEX, ACME)):
            r = await w.client.get("/v1/samples", headers=w.auth(tenant))
            assert r.status_code == 200, r.text
            questions = r.json()["questions"]
            assert questions
            mine = {d["title"] for d in own}
            theirs = {d["title"] for d in other} - mine
            assert all(any(t in q for t in mine) for q in questions), questions
            assert not any(t in q for q in questions for t in theirs), questions
    (tmp_path / "given").mkdir()
    async with served(tmp_path / "given") as w:  # --questions given: those, as before
        r = await w.client.get("/v1/samples", headers=w.auth("acme"))
        assert r.json()["questions"] == ["what is harvested?"]

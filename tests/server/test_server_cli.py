"""``graphfuse serve`` and ``graphfuse keys``: a real uvicorn on a loopback port, graceful shutdown."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import httpx
from typer.testing import CliRunner

from graphfuse.cli import app
from graphfuse.cli._serve import is_loopback
from graphfuse.server import KeyFile

runner = CliRunner()
CLI = [sys.executable, "-m", "graphfuse.cli"]
ENV = {**os.environ, "GRAPHFUSE_LOAD_PLUGINS": ""}
DOCS = [
    {"id": "apples", "title": "Apples", "text": "Apples grow in orchards; Pears grow nearby.", "links": ["pears"]},
    {"id": "pears", "title": "Pears", "text": "Pears are sweet fruit picked in autumn."},
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def store(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(d) for d in DOCS) + "\n")
    directory = tmp_path / "store"
    done = subprocess.run(
        [*CLI, "index", str(corpus), "--store", str(directory), "--embedder", "hashing"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return directory


def test_keys_add_list_revoke(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    added = runner.invoke(app, ["keys", "add", "--keys", str(keys), "--tenant", "acme"])
    assert added.exit_code == 0, added.output
    key = added.stdout.strip().splitlines()[0]
    assert KeyFile(keys).tenant_for(key) == "acme"
    assert key not in keys.read_text()
    listed = runner.invoke(app, ["keys", "list", "--keys", str(keys)])
    key_id = listed.stdout.split()[0]
    assert key_id in key
    assert "acme" in listed.stdout
    revoked = runner.invoke(app, ["keys", "revoke", key_id, "--keys", str(keys)])
    assert revoked.exit_code == 0
    assert KeyFile(keys).tenant_for(key) is None
    again = runner.invoke(app, ["keys", "revoke", key_id, "--keys", str(keys)])
    assert again.exit_code == 1
    assert "no key with id" in again.stderr
    bad = runner.invoke(app, ["keys", "add", "--keys", str(keys), "--tenant", "a b"])
    assert bad.exit_code == 1
    assert "tenant name" in bad.stderr


@pytest.mark.slow
def test_serve_refuses_a_public_address_without_keys(tmp_path: Path, store: Path) -> None:
    for host in ("0.0.0.0", "::", "192.168.1.10", "example.org"):
        done = runner.invoke(app, ["serve", "--store", str(store), "--host", host])
        assert done.exit_code == 1
        assert "without API keys" in done.stderr
    empty = tmp_path / "empty.json"
    done = runner.invoke(app, ["serve", "--store", str(store), "--host", "0.0.0.0", "--keys", str(empty)])
    assert done.exit_code == 1
    assert "holds no keys" in done.stderr
    assert is_loopback("127.0.0.1")
    assert is_loopback("::1")
    assert is_loopback("localhost")


@pytest.fixture
def server(tmp_path: Path, store: Path) -> Iterator[tuple[str, str, subprocess.Popen[str]]]:
    keys = tmp_path / "keys.json"
    _, key = KeyFile(keys).add("acme")
    port = _free_port()
    proc = subprocess.Popen(
        [*CLI, "serve", "--store", str(store), "--port", str(port), "--keys", str(keys), "--preset", "minimal"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=ENV,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            if proc.poll() is not None:
                raise AssertionError(f"server exited: {proc.stdout.read() if proc.stdout else ''}")
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        yield base, key, proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)


@pytest.mark.slow
def test_real_uvicorn_serves_and_shuts_down_gracefully(
    server: tuple[str, str, subprocess.Popen[str]], store: Path
) -> None:
    base, key, proc = server
    auth = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=base, timeout=30) as client:
        assert client.get("/health").json()["status"] == "ok"
        assert client.post("/v1/retrieve", json={"query": "pears"}).status_code == 401
        # Documents indexed by `graphfuse index` carry no tenant: a tenant's key does not see them.
        r = client.post("/v1/retrieve", json={"query": "sweet pears"}, headers=auth)
        assert r.status_code == 200
        assert r.json()["results"] == []
        r = client.post("/v1/ingest", json={"documents": DOCS}, headers=auth)
        assert r.status_code == 200, r.text
        r = client.post("/v1/retrieve", json={"query": "sweet pears autumn", "top_k": 1}, headers=auth)
        assert [x["id"] for x in r.json()["results"]] == ["pears"]
        # The result cache (on by default): the request made before the ingest now misses and sees
        # the new documents; the same request again is a hit.
        r = client.post("/v1/retrieve", json={"query": "sweet pears"}, headers=auth)
        assert "pears" in [x["id"] for x in r.json()["results"]]
        again = client.post("/v1/retrieve", json={"query": "sweet pears"}, headers=auth)
        assert again.json()["results"] == r.json()["results"]
        assert client.get("/health").json()["components"]["result_cache"] == "result cache 'memory' (ttl 300 s)"
        metrics = client.get("/metrics").text
        hits = [line for line in metrics.splitlines() if line.startswith("graphfuse_result_cache_hits_total")]
        assert len(hits) == 1
        assert hits[0].endswith(" 1.0"), hits
        for name in (
            "graphfuse_stage_duration_seconds",
            "graphfuse_stage_candidates",
            "graphfuse_pipeline_duration_seconds",
            "graphfuse_pipeline_results",
            "graphfuse_http_requests_total",
        ):
            assert f"# TYPE {name}" in metrics or f"{name}_bucket" in metrics, name
        assert 'stage="semantic"' in metrics
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    # uvicorn finishes the requests in flight, runs the shutdown (closing the store), then
    # re-raises the signal to the default handler.
    assert proc.returncode in (0, -signal.SIGTERM), out
    assert "Traceback" not in out
    assert "Application shutdown complete" in out
    manifest = json.loads((store / "manifest.json").read_text())
    assert manifest["counts"]["documents"] == 2 * len(DOCS)  # refreshed by the store's close


@pytest.mark.slow
def test_serve_names_an_unknown_result_cache_store(store: Path) -> None:
    done = runner.invoke(app, ["serve", "--store", str(store), "--result-cache", "nosuch", "--port", "0"])
    assert done.exit_code == 1
    assert "no cache store named 'nosuch'" in done.stderr

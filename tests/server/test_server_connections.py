"""Slow clients cannot hold the server: header and body deadlines, a connection cap, a quiet log.

Every test talks to a real uvicorn on a loopback port through plain sockets, bounded in time: a
trickle that the server does not cut off ends the test with a failure, never a hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import resource
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import httpx
from _server_world import served, uvicorn_served

from graphfuse import InvalidInput
from graphfuse.server import ConnectionLimits, Limits, LogThrottle

CLI = [sys.executable, "-m", "graphfuse.cli"]
ENV = {**os.environ, "GRAPHFUSE_LOAD_PLUGINS": ""}
BOUND = 30.0  # seconds a trickle goes on before the test gives up on the server cutting it off


def _port(base: str) -> int:
    return int(base.rsplit(":", 1)[1])


def trickle(port: int, head: bytes, piece: bytes, every: float = 0.2, bound: float = BOUND) -> tuple[bytes, bool]:
    """Send ``head``, then ``piece`` every ``every`` seconds until the server closes (or ``bound`` passes).

    Returns what the server answered and whether it closed the connection within ``bound``.
    """
    answer = b""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.settimeout(every)
        s.sendall(head)
        stop = time.monotonic() + bound
        while time.monotonic() < stop:
            try:
                data = s.recv(65536)
            except TimeoutError:
                data = None
            except ConnectionResetError:
                return answer, True
            if data == b"":
                return answer, True
            if data:
                answer += data
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # closed: the next recv says so
                s.sendall(piece)
    return answer, False


def _status(answer: bytes) -> int:
    line = answer.split(b"\r\n", 1)[0].split()
    return int(line[1]) if len(line) > 1 else 0


def _body(answer: bytes) -> dict[str, object]:
    body: dict[str, object] = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    return body


@pytest.mark.slow
async def test_headers_trickled_line_by_line_are_cut_off_at_the_header_timeout(tmp_path: Path) -> None:
    async with served(tmp_path) as w, uvicorn_served(w.app, ConnectionLimits(header_timeout=1.0)) as base:
        port = _port(base)
        # A header line every 0.2 s: each byte would reset an idle timer; the deadline is for the whole header.
        for key in (None, w.key["acme"]):
            head = b"POST /v1/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            if key is not None:
                head += f"Authorization: Bearer {key}\r\n".encode()
            answer, closed = await asyncio.to_thread(trickle, port, head, b"X-Slow: 1\r\n")
            assert closed, "a client trickling header lines was not cut off"
            assert _status(answer) == 408, answer[:200]
            assert b"application/problem+json" in answer
            assert "did not arrive within 1 s" in str(_body(answer)["detail"])
        # A connection that sends nothing at all is closed too (without an answer).
        answer, closed = await asyncio.to_thread(trickle, port, b"", b"")
        assert closed
        assert answer == b""
        # Kept alive after a whole request, the next request's headers have the same deadline.
        async with httpx.AsyncClient(base_url=base, timeout=10) as client:
            assert (await client.get("/health")).status_code == 200


@pytest.mark.slow
async def test_a_trickled_body_is_cut_off_at_the_body_timeout(tmp_path: Path) -> None:
    limits = Limits(body_timeout=1.0)
    async with served(tmp_path, limits=limits) as w, uvicorn_served(w.app) as base:
        port = _port(base)
        for path, key in (("/v1/retrieve", w.key["acme"]), ("/v1/ingest", w.key["acme"]), ("/v1/retrieve", "nokey")):
            head = (
                f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
                "Content-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"
            ).encode()
            answer, closed = await asyncio.to_thread(trickle, port, head, b" ")
            assert closed, f"{path}: a client trickling its body was not cut off"
            assert _status(answer) == 408, answer[:300]
            assert _body(answer)["field"] == "body"
            assert "did not arrive within 1 s" in str(_body(answer)["detail"])
        async with httpx.AsyncClient(base_url=base, timeout=10) as client:
            r = await client.post("/v1/retrieve", json={"query": "apple"}, headers=w.auth("acme"))
            assert r.status_code == 200, r.text


async def test_an_answer_before_the_body_closes_the_connection(tmp_path: Path) -> None:
    # Without keys a foreign Host gets its 421 before the body is read: the rest is not waited for.
    async with served(tmp_path, with_keys=False) as w, uvicorn_served(w.app) as base:
        head = (
            b"POST /v1/retrieve HTTP/1.1\r\nHost: attacker.example\r\nContent-Type: application/json\r\n"
            b"Content-Length: 5000\r\n\r\n{"
        )
        answer, closed = await asyncio.to_thread(trickle, _port(base), head, b" ")
        assert closed, "the connection stayed open after its answer, for a body nobody reads"
        assert _status(answer) == 421


async def test_one_connection_over_the_limit_gets_a_503_and_the_server_recovers(tmp_path: Path) -> None:
    limit = 6
    connections = ConnectionLimits(header_timeout=2.0, max_connections=limit)
    async with served(tmp_path) as w, uvicorn_served(w.app, connections) as base:
        port = _port(base)
        slow = []
        try:
            for _ in range(limit - 1):
                s = socket.create_connection(("127.0.0.1", port), timeout=5)
                s.sendall(b"GET /health HTTP/1.1\r\n")
                slow.append(s)
            async with httpx.AsyncClient(base_url=base, timeout=10) as client:
                # One place is left: a new client is answered.
                assert (await client.get("/health")).status_code == 200
            for _ in range(3):
                s = socket.create_connection(("127.0.0.1", port), timeout=5)
                s.sendall(b"GET /health HTTP/1.1\r\n")
                slow.append(s)
            async with httpx.AsyncClient(base_url=base, timeout=10) as client:
                r = await client.get("/health")
                assert r.status_code == 503
                assert r.headers["content-type"] == "application/problem+json"
                assert r.headers["retry-after"] == "1"
                assert f"limit of {limit} connections" in r.json()["detail"]
            # The slow ones are cut off at the header deadline; then everyone is answered again.
            answered = False
            for _ in range(100):
                try:
                    async with httpx.AsyncClient(base_url=base, timeout=10) as client:
                        if (await client.get("/health")).status_code == 200:
                            answered = True
                            break
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.1)
            assert answered, "the server did not recover once the slow connections were cut off"
        finally:
            for s in slow:
                s.close()


def test_log_throttle_writes_one_line_per_interval_with_a_count() -> None:
    now = [0.0]
    throttle = LogThrottle(10.0, clock=lambda: now[0])
    records: list[logging.LogRecord] = []
    log = logging.getLogger("graphfuse.test.throttle")
    log.propagate = False
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    log.addHandler(handler)
    log.addFilter(throttle)
    try:
        for i in range(10_000):
            now[0] = i * 0.0025  # 10,000 lines in 25 s
            log.error("socket.accept() out of system resource\nsocket: <fd=%d>", 7)
            log.error("request %s failed [%s]", "/v1/retrieve", f"id{i % 3}")  # three different lines
        texts = [r.getMessage() for r in records]
        accept = [t for t in texts if t.startswith("socket.accept()")]
        assert len(accept) == 3, accept  # at 0 s, 10 s and 20 s
        assert "(3999 more like this in the last 10 s)" in accept[1]
        assert len([t for t in texts if t.startswith("request")]) == 9  # three different lines, each at 0, 10, 20 s
    finally:
        log.removeHandler(handler)
        log.removeFilter(throttle)


def test_connection_limits_are_checked() -> None:
    for bad in ({"header_timeout": 0}, {"max_connections": 0}, {"keep_alive": 0}, {"max_header_bytes": 10}):
        with pytest.raises(InvalidInput):
            ConnectionLimits(**bad)  # type: ignore[arg-type]
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    default = ConnectionLimits().connection_limit()
    assert default == min(1000, soft // 4) or soft == resource.RLIM_INFINITY
    assert ConnectionLimits(max_connections=7).connection_limit() == 7


# -- under a real descriptor limit, in a subprocess -----------------------------------------


def _limit_open_files(n: int) -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))


@pytest.fixture
def store(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus.jsonl"
    docs = [{"id": "apples", "title": "Apples", "text": "Apples grow in orchards."}]
    corpus.write_text("\n".join(json.dumps(d) for d in docs) + "\n")
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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_for_health(base: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    for _ in range(600):
        if proc.poll() is not None:
            raise AssertionError(f"server exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError("server did not start")


@pytest.fixture
def open_sockets() -> Iterator[list[socket.socket]]:
    held: list[socket.socket] = []
    yield held
    for s in held:
        s.close()


def _open_slow(port: int, n: int, into: list[socket.socket]) -> None:
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        into.append(s)
        with contextlib.suppress(OSError):  # refused over the limit: the server may have closed it already
            s.sendall(b"GET /v1/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\n")


@pytest.mark.slow
def test_300_slow_sockets_under_256_descriptors_leave_the_server_answering(
    tmp_path: Path, store: Path, open_sockets: list[socket.socket]
) -> None:
    """The probe's case: 300 slow sockets against `graphfuse serve` limited to 256 open files."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                *CLI,
                "serve",
                "--store",
                str(store),
                "--port",
                str(port),
                *("--preset", "minimal", "--header-timeout", "20"),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=ENV,
            preexec_fn=lambda: _limit_open_files(256),
        )
    try:
        _wait_for_health(base, proc, log)
        limit = 64  # the default: a quarter of the 256 open files
        _open_slow(port, limit - 1, open_sockets)
        assert httpx.get(f"{base}/health", timeout=10).status_code == 200
        r = httpx.post(f"{base}/v1/retrieve", json={"query": "apples"}, timeout=10)
        assert r.status_code == 200, r.text
        started = time.monotonic()
        _open_slow(port, 300 - (limit - 1), open_sockets)
        print(f"opened the other {300 - (limit - 1)} slow sockets in {time.monotonic() - started:.1f} s")
        refused = httpx.get(f"{base}/health", timeout=10)
        assert refused.status_code == 503
        assert "limit of 64 connections" in refused.json()["detail"]
        # Cut off at the 20 s header deadline, the slow sockets give their places back.
        for _ in range(400):
            try:
                if httpx.get(f"{base}/health", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        else:
            raise AssertionError("the server did not recover after the header deadline")
        r = httpx.post(f"{base}/v1/retrieve", json={"query": "apples"}, timeout=10)
        assert r.status_code == 200, r.text
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    text = log.read_text(errors="replace")
    assert "Too many open files" not in text
    assert "out of system resource" not in text
    assert len([x for x in text.splitlines() if "refusing connections with 503" in x]) <= 2, text[-3000:]
    assert len([x for x in text.splitlines() if "did not arrive within" in x]) <= 2, text[-3000:]
    assert len(text.splitlines()) < 60, text[-3000:]


_FLOOD_SERVER = textwrap.dedent(
    """
    import resource, sys
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    from graphfuse.server import ConnectionLimits, http_server

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"ok"})

    # A cap far above what 64 open files allow: accepting fails, as in the probe.
    limits = ConnectionLimits(header_timeout=3, max_connections=1000)
    http_server(app, limits=limits, port=int(sys.argv[1]), log_level="info", lifespan="off").run()
    """
)


@pytest.mark.slow
def test_accept_failures_when_descriptors_run_out_write_a_few_lines(
    tmp_path: Path, open_sockets: list[socket.socket]
) -> None:
    """A cap set too high for the descriptor limit: accept fails, and says so in a few lines, not thousands."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "flood.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-c", _FLOOD_SERVER, str(port)], stdout=out, stderr=out, env=ENV)
    try:
        _wait_for_health(base, proc, log)
        _open_slow(port, 100, open_sockets)
        time.sleep(5)  # accept keeps failing until the header deadline frees descriptors
        for s in open_sockets:
            s.close()
        for _ in range(200):
            try:
                if httpx.get(f"{base}/health", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        else:
            raise AssertionError("the server did not recover")
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    text = log.read_text(errors="replace")
    failures = [x for x in text.splitlines() if "out of system resource" in x]
    assert 1 <= len(failures) <= 3, f"{len(failures)} accept failure lines: {text[-2000:]}"
    assert len(text.splitlines()) < 200, f"{len(text.splitlines())} log lines: {text[-2000:]}"

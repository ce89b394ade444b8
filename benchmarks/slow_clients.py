"""Slow clients against `graphfuse serve` under a small open-file limit: who is answered, how much is logged.

A real ``graphfuse serve`` process over a small store (indexed into a temporary directory with
the hashing embedder), its open files limited to ``--open-files`` (256). ``--sockets`` (300)
connections each send part of a request's headers, then one more header line every second or
so (a trickle that an idle timer never sees idle); meanwhile a new client asks ``/health``
(3 s timeout) every second for ``--seconds`` (25). Reports how ``/health`` was answered (200,
503, or a timeout / error), the server's log in lines and bytes, and how many of those lines
say "Too many open files". All on 127.0.0.1.

``--src DIR`` runs the server from another source tree (``PYTHONPATH``), to compare a version
from before the connection guards (issue 38, cause 2) on the same machine; ``-- ARGS`` after
the options go to ``graphfuse serve`` (e.g. ``-- --header-timeout 5``).

    python benchmarks/slow_clients.py [--sockets 300] [--open-files 256] [--seconds 25] [--src DIR] [-- SERVE ARGS]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
NAMES = ["Apple Orchard", "Pear Grove", "Cider Press", "Harvest Fair", "Fruit Market"]


def _store(directory: Path, env: dict[str, str]) -> Path:
    corpus = directory / "corpus.jsonl"
    docs = [
        {"id": f"d{i}", "title": n, "text": f"{n} is about apples and pears. See {NAMES[(i + 1) % 5]}."}
        for i, n in enumerate(NAMES)
    ]
    corpus.write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    store = directory / "store"
    cli = [sys.executable, "-m", "graphfuse.cli", "index", str(corpus), "--store", str(store), "--embedder", "hashing"]
    subprocess.run(cli, check=True, capture_output=True, env=env, timeout=300)
    return store


def run(sockets: int, open_files: int, seconds: float, src: str | None, serve_args: list[str]) -> dict[str, Any]:
    env = {**os.environ, "GRAPHFUSE_LOAD_PLUGINS": "", "PYTHONDONTWRITEBYTECODE": "1"}
    if src is not None:
        env["PYTHONPATH"] = src
    with tempfile.TemporaryDirectory() as tmp:
        store = _store(Path(tmp), env)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        log_path = Path(tmp) / "serve.log"

        def limit() -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

        serve = [sys.executable, "-m", "graphfuse.cli", "serve", "--store", str(store), "--port", str(port)]
        with log_path.open("wb") as log:
            proc = subprocess.Popen(
                [*serve, "--preset", "minimal", *serve_args], stdout=log, stderr=log, env=env, preexec_fn=limit
            )
        base = f"http://127.0.0.1:{port}"
        held: list[socket.socket] = []
        try:
            for _ in range(600):
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(base + "/health", timeout=2).status_code == 200:
                        break
                time.sleep(0.1)
            started = time.monotonic()
            for _ in range(sockets):
                with contextlib.suppress(OSError):
                    c = socket.create_connection(("127.0.0.1", port), timeout=3)
                    held.append(c)
                    c.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            opened = time.monotonic() - started
            health = {"200": 0, "503": 0, "timeout or error": 0}
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                for c in held:
                    with contextlib.suppress(OSError):
                        c.sendall(b"X-Slow: 1\r\n")
                try:
                    status = str(httpx.get(base + "/health", timeout=3).status_code)
                    health[status] = health.get(status, 0) + 1
                except httpx.HTTPError:
                    health["timeout or error"] += 1
                time.sleep(1)
        finally:
            for c in held:
                c.close()
            proc.terminate()
            proc.wait(timeout=60)
        text = log_path.read_text(errors="replace")
    return {
        "sockets": sockets,
        "open_files": open_files,
        "seconds": seconds,
        "serve_args": serve_args,
        "src": src or "this tree",
        "seconds_to_open_the_sockets": round(opened, 1),
        "health": health,
        "log_lines": len(text.splitlines()),
        "log_bytes": len(text),
        "too_many_open_files_lines": text.count("Too many open files"),
        "load_average_1m": os.getloadavg()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sockets", type=int, default=300)
    parser.add_argument("--open-files", type=int, default=256)
    parser.add_argument("--seconds", type=float, default=25.0)
    parser.add_argument("--src", help="serve from this source tree (PYTHONPATH), e.g. an older version")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "slow_clients.json")
    parser.add_argument("serve_args", nargs="*", help="options for graphfuse serve, after --")
    args = parser.parse_args()
    result = run(args.sockets, args.open_files, args.seconds, args.src, args.serve_args)
    print(json.dumps(result, indent=2))
    runs = json.loads(args.out.read_text()) if args.out.exists() else []
    args.out.write_text(json.dumps([*runs, result], indent=2) + "\n")


if __name__ == "__main__":
    main()

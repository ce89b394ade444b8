"""Abuse cases for store directories and the key file: truncated, damaged and read-only files,
kill -9, concurrent writers and `graphfuse keys` processes.

Loaded by ``benchmarks/abuse_probe.py`` by path (this file imports nothing from the others).
Each case builds its own store with ``graphfuse index`` (the offline ``hashing`` embedder) in
the temporary directory it is given, damages it with plain file or SQLite writes, runs the CLI
(in-process through typer's runner, or as real processes where processes are what is probed)
and raises ``AssertionError`` naming what did not hold.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from graphfuse.cli import app

GRAPHFUSE = str(Path(sys.executable).parent / "graphfuse")
_runner = CliRunner()


def _docs(n: int, words: int = 12) -> list[dict[str, Any]]:
    return [
        {
            "id": f"d{i}",
            "title": f"Topic {i}",
            "text": f"Topic {i} is about orchard number {i}. " + " ".join(f"w{i}x{j}" for j in range(words)),
            "links": [f"d{(i + 1) % n}"],
        }
        for i in range(n)
    ]


def _source(tmp: Path, docs: list[dict[str, Any]], name: str = "docs.jsonl") -> Path:
    path = tmp / name
    path.write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    return path


def _cli(*args: str) -> tuple[int, str]:
    result = _runner.invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"graphfuse {' '.join(args)} raised {result.exception!r} (a traceback)")
    return result.exit_code, result.output


def _built(tmp: Path, n: int = 30, words: int = 12) -> tuple[Path, Path]:
    source = _source(tmp, _docs(n, words))
    store = tmp / "store"
    code, out = _cli("index", str(source), "--store", str(store), "--embedder", "hashing")
    if code != 0:
        raise AssertionError(f"building the store failed: {out}")
    return store, source


def _files(directory: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.iterdir())
        if p.is_file() and not p.name.endswith(("-wal", "-shm"))
    }


def _check(store: Path) -> tuple[int, dict[str, Any]]:
    code, out = _cli("check", "--store", str(store), "--json")
    return code, json.loads(out)


def _every_command_says_damaged(store: Path, source: Path, named: str) -> None:
    commands = {
        "index": ["index", str(source), "--store", str(store), "--embedder", "hashing"],
        "query": ["query", "orchard", "--store", str(store), "--json"],
        "context": ["context", "orchard", "--store", str(store)],
        "delete": ["delete", "d1", "--store", str(store)],
    }
    for what, args in commands.items():
        code, out = _cli(*args)
        if code == 0:
            raise AssertionError(f"`graphfuse {what}` exited 0 on a damaged store: {out[-400:]}")
        if named not in out or "graphfuse check" not in out:
            raise AssertionError(
                f"`graphfuse {what}` did not name {named} and point to `graphfuse check`: {out[-400:]}"
            )


def _sql(path: Path, sql: str, params: tuple[Any, ...] = ()) -> None:
    conn = sqlite3.connect(path)
    try:
        conn.execute(sql, params)
        conn.commit()
    finally:
        conn.close()


# -- truncated files (item 5) ------------------------------------------------------------------


def _zero_length(name: str) -> Callable[[Path], None]:
    def case(tmp: Path) -> None:
        store, source = _built(tmp)
        (store / name).write_bytes(b"")
        for leftover in ("-wal", "-shm"):
            (store / f"{name}{leftover}").unlink(missing_ok=True)
        _every_command_says_damaged(store, source, name)
        if (store / name).stat().st_size != 0:
            raise AssertionError(f"a command silently re-created the truncated {name}")
        code, report = _check(store)
        if code == 0 or not any(name in line and "empty" in line for line in report["integrity"]):
            raise AssertionError(f"check did not report the empty {name}: {report['integrity']}")
        code, out = _cli("check", "--store", str(store), "--repair")
        if f"re-created the empty {name}" not in out:
            raise AssertionError(f"--repair did not re-create {name}: {out}")
        code, out = _cli("index", str(source), "--store", str(store), "--embedder", "hashing")
        if code != 0:
            raise AssertionError(f"re-indexing after the repair failed: {out}")
        code, report = _check(store)
        if code != 0 or report["documents_without_vectors"] or report["vectors"] != 30:
            raise AssertionError(f"re-indexing did not recover the store: {report}")

    return case


def skip_checks_vectors(tmp: Path) -> None:
    store, source = _built(tmp)
    _sql(store / "vectors.sqlite", "DELETE FROM vectors WHERE id IN ('d3', 'd4')")
    _sql(store / "vectors.sqlite", "UPDATE meta SET value = value + 1 WHERE key = 'generation'")
    code, out = _cli("index", str(source), "--store", str(store), "--embedder", "hashing")
    if code != 0:
        raise AssertionError(out)
    code, report = _check(store)
    if code != 0 or report["vectors"] != 30:
        raise AssertionError(f"the re-index skipped documents whose vectors were gone: {report}")


# -- damaged rows and pages (item 8) -----------------------------------------------------------


def wrong_size_vector(tmp: Path) -> None:
    store, source = _built(tmp)
    _sql(store / "vectors.sqlite", "UPDATE vectors SET vector = x'0000803f' WHERE id = 'd7'")
    _every_command_says_damaged(store, source, "vectors.sqlite")
    code, report = _check(store)
    if code == 0 or report["damaged_rows"] != 1 or "'d7'" not in report["damaged"][0]:
        raise AssertionError(f"check did not name the wrong-size vector d7: {report}")


def metadata_not_json(tmp: Path) -> None:
    store, source = _built(tmp)
    _sql(store / "vectors.sqlite", "UPDATE vectors SET metadata = '{oops' WHERE id = 'd2'")
    _sql(store / "graph.sqlite", "UPDATE documents SET metadata = 'not json' WHERE id = 'd5'")
    code, report = _check(store)
    named = " ".join(report["damaged"])
    if code == 0 or report["damaged_rows"] != 2 or "'d2'" not in named or "'d5'" not in named:
        raise AssertionError(f"check did not name both damaged rows: {report}")
    _every_command_says_damaged(store, source, ".sqlite")


def mid_file_pages(tmp: Path) -> None:
    store, _ = _built(tmp, n=400, words=60)
    graph = store / "graph.sqlite"
    size = graph.stat().st_size
    if size < 64 * 4096:
        raise AssertionError(f"the graph file is too small to damage in the middle ({size} bytes)")
    with open(graph, "r+b") as f:
        for offset in (size // 3, size // 2, 2 * size // 3):
            f.seek(offset)
            f.write(os.urandom(4096))
    code, report = _check(store)
    if code == 0 or not any("graph.sqlite" in line for line in report["integrity"]):
        raise AssertionError(f"check did not report the damaged pages of graph.sqlite: {report['integrity']}")
    for args in (["query", "orchard", "--store", str(store), "--preset", "minimal"], ["check", "--store", str(store)]):
        code, _ = _cli(*args)
        if code == 0:
            raise AssertionError(f"`graphfuse {args[0]}` exited 0 on damaged pages")


# -- notes that are not inconsistencies (item 10), query writes nothing (item 9) --------------


def stale_counts_are_a_note(tmp: Path) -> None:
    store, _ = _built(tmp)
    manifest = json.loads((store / "manifest.json").read_text())
    manifest["counts"] = {"documents": 0, "relations": 0, "vectors": 0}  # as a killed process leaves them
    (store / "manifest.json").write_text(json.dumps(manifest))
    code, report = _check(store)
    if code != 0 or not report["ok"] or not any("stale" in n for n in report["notes"]):
        raise AssertionError(f"stale counts made the store inconsistent or went unsaid: {report}")


def query_writes_nothing(tmp: Path) -> None:
    store, _ = _built(tmp)
    (store / "corpus_index.npz").unlink()
    before = _files(store)
    result = _runner.invoke(app, ["query", "orchard", "--store", str(store), "--json"])
    if result.exit_code != 0:
        raise AssertionError(result.output)
    if _files(store) != before:
        raise AssertionError(f"query wrote to the store: {sorted(set(_files(store)) ^ set(before))}")
    if "check --repair" not in result.stderr:
        raise AssertionError(f"query did not say how to refresh the corpus index: {result.stderr!r}")


# -- processes: kill -9 and two writers (held) -------------------------------------------------


def kill_during_index(tmp: Path) -> None:
    source = _source(tmp, _docs(600, 30))
    store = tmp / "store"
    args = [GRAPHFUSE, "index", str(source), "--store", str(store), "--embedder", "hashing"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (store / "manifest.json").exists():
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise AssertionError(f"re-running the killed index failed: {done.stderr[-800:]}")
    code, report = _check(store)
    if code != 0 or report["documents"] < 600 or report["vectors"] != 600:
        raise AssertionError(f"after kill -9 and a re-run the store is not whole: {report}")


def two_writers(tmp: Path) -> None:
    sources = [_source(tmp, _docs(300, 20)[i::2], f"half{i}.jsonl") for i in range(2)]
    store = tmp / "store"
    _cli("index", str(sources[0]), "--store", str(store), "--embedder", "hashing")
    procs = [
        subprocess.Popen(
            [GRAPHFUSE, "index", str(s), "--store", str(store), "--embedder", "hashing"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for s in sources
    ]
    for p in procs:
        _, err = p.communicate(timeout=300)
        if p.returncode != 0:
            raise AssertionError(f"a concurrent writer failed: {err[-800:]}")
    code, report = _check(store)
    if code != 0 or report["vectors"] != 300:
        raise AssertionError(f"two writers left the store inconsistent: {report}")


# -- the key file (item 3) ---------------------------------------------------------------------


def _adds(path: str, tenant: str, n: int, out: str) -> None:
    from graphfuse.server import KeyFile

    Path(out).write_text(json.dumps([KeyFile(path).add(tenant)[1] for _ in range(n)]))


def _revokes(path: str, ids: list[str]) -> None:
    from graphfuse.server import KeyFile

    for key_id in ids:
        KeyFile(path).revoke(key_id)


def keys_concurrent(tmp: Path) -> None:
    from graphfuse.server import KeyFile

    path = tmp / "keys.json"
    doomed = [KeyFile(path).add("old") for _ in range(8)]
    ctx = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    outs = [tmp / f"made{i}.json" for i in range(4)]
    procs = [ctx.Process(target=_adds, args=(str(path), f"t{i}", 10, str(outs[i]))) for i in range(4)]
    procs.append(ctx.Process(target=_revokes, args=(str(path), [r.key_id for r, _ in doomed])))
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    keys = KeyFile(path)
    made = [k for out in outs for k in json.loads(out.read_text())]
    lost = [k for k in made if keys.tenant_for(k) is None]
    back = [k for _, k in doomed if keys.tenant_for(k) is not None]
    if len(made) != 40 or lost or back:
        raise AssertionError(f"{len(lost)} printed keys were not saved, {len(back)} revoked keys work again")


def keys_damaged(tmp: Path) -> None:
    path = tmp / "keys.json"
    path.write_text('{"format": "graphfuse-keys", "keys": [')
    code, out = _cli("keys", "add", "--keys", str(path), "--tenant", "acme")
    if code == 0 or "keys.json" not in out or "damaged" not in out:
        raise AssertionError(f"a damaged key file was not named: {out}")


def server_store_damaged(tmp: Path) -> None:
    import httpx

    from graphfuse import StoreCorrupted
    from graphfuse.embedders import HashingEmbedder
    from graphfuse.server import Service, create_app
    from graphfuse.stores import LocalStore

    async def go() -> None:
        store = LocalStore.open(tmp / "store")
        embedder = HashingEmbedder(dimension=16)
        await store.ause_embedder(embedder)
        service = Service(store.graph, store.vectors, embedder)
        transport = httpx.ASGITransport(app=create_app(service), raise_app_exceptions=False)
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
                docs = [{"id": f"d{i}", "text": f"orchard apples {i}"} for i in range(5)]
                r = await client.post("/v1/ingest", json={"documents": docs})
                if r.status_code != 200:
                    raise AssertionError(r.text)
                # Another program rewrites the vectors with another dimension behind the server's back.
                _sql(store.vectors.path or "", "UPDATE meta SET value = 8 WHERE key = 'dimension'")
                _sql(store.vectors.path or "", "UPDATE vectors SET vector = zeroblob(32)")
                _sql(store.vectors.path or "", "UPDATE meta SET value = value + 1 WHERE key = 'generation'")
                r = await client.post("/v1/retrieve", json={"query": "orchard", "preset": "minimal"})
                if r.status_code < 500 or "store damaged" not in r.json().get("detail", ""):
                    raise AssertionError(f"a store damaged behind the server answered {r.status_code}: {r.text}")
        finally:
            with contextlib.suppress(StoreCorrupted):  # closing recounts the damaged file: it says so again
                await store.aclose()

    asyncio.run(go())


CASES = [
    ("stores/zero-length-vectors-file-is-corruption", True, _zero_length("vectors.sqlite")),
    ("stores/zero-length-graph-file-is-corruption", True, _zero_length("graph.sqlite")),
    ("stores/unchanged-skip-verifies-vectors", True, skip_checks_vectors),
    ("stores/wrong-size-vector-named", True, wrong_size_vector),
    ("stores/metadata-not-json-named", True, metadata_not_json),
    ("stores/mid-file-page-damage-checked", True, mid_file_pages),
    ("stores/stale-manifest-counts-are-a-note", True, stale_counts_are_a_note),
    ("stores/query-writes-nothing", True, query_writes_nothing),
    ("stores/server-store-damaged-is-5xx", True, server_store_damaged),
    ("keys/concurrent-adds-and-revokes-lose-nothing", True, keys_concurrent),
    ("keys/damaged-key-file-named", True, keys_damaged),
    ("stores/kill-9-during-index-then-rerun", False, kill_during_index),
    ("stores/two-concurrent-index-writers", False, two_writers),
]

"""Abuse cases for numbers, damaged vectors, reserved ids and store files.

Loaded by ``benchmarks/abuse_probe.py`` by path (this file imports nothing from the others).
Each case builds its own hostile input in the temporary directory it is given (JSONL with
``NaN`` or 400-digit integers, a vector file with random bytes overwritten, ids in the entity
namespace, a store another process is creating), runs the CLI in-process through typer's runner
or the server app through httpx's ASGI transport (no socket), and raises ``AssertionError``
naming what did not hold.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import random
import shutil
import sqlite3
import stat
import struct
import sys
import threading
import time
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from graphfuse.cli import app

_runner = CliRunner()
ENTITY = "graphfuse:entity:apple"


def _cli(*args: str) -> tuple[int, str]:
    result = _runner.invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"graphfuse {' '.join(args)} raised {result.exception!r} (a traceback)")
    return result.exit_code, result.output


def _docs(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"d{i}",
            "title": f"Topic {i}",
            "text": f"Topic {i} is about orchard number {i}. " + " ".join(f"w{i}x{j}" for j in range(12)),
            "metadata": {"year": 2000 + i},
        }
        for i in range(n)
    ]


def _built(tmp: Path, n: int = 30) -> tuple[Path, Path]:
    source = tmp / "docs.jsonl"
    source.write_text("\n".join(json.dumps(d) for d in _docs(n)) + "\n")
    store = tmp / "store"
    code, out = _cli("index", str(source), "--store", str(store), "--embedder", "hashing")
    if code != 0:
        raise AssertionError(f"building the store failed: {out}")
    return store, source


def _json(*args: str) -> tuple[int, Any]:
    """Exit code and the JSON a command prints on stdout (notes go to stderr)."""
    result = _runner.invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"graphfuse {' '.join(args)} raised {result.exception!r} (a traceback)")
    try:
        return result.exit_code, json.loads(result.stdout)
    except ValueError:
        raise AssertionError(f"graphfuse {' '.join(args)} printed no JSON: {result.output[-300:]}") from None


def _check(store: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    code, report = _json("check", "--store", str(store), "--json", *extra)
    return code, report


def _checksum(doc_id: str, vector: bytes, metadata: str) -> int:
    """The vector store's row checksum, written out here (this file imports no private module)."""
    head = doc_id.encode()
    return zlib.crc32(metadata.encode(), zlib.crc32(vector, zlib.crc32(len(head).to_bytes(4, "little") + head)))


def _served(work: Callable[[Any, Any], Awaitable[None]], tmp: Path) -> None:
    """Run ``work(client, store)`` against a keyless server app over a fresh store."""
    import httpx

    from graphfuse.embedders import HashingEmbedder
    from graphfuse.server import Service, create_app
    from graphfuse.stores import LocalStore

    async def go() -> None:
        store = LocalStore.open(tmp / "served")
        embedder = HashingEmbedder(dimension=32)
        await store.ause_embedder(embedder)
        service = Service(store.graph, store.vectors, embedder)
        transport = httpx.ASGITransport(app=create_app(service), raise_app_exceptions=False)
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
                await work(client, store)
        finally:
            await service.aclose()
            await store.aclose()

    asyncio.run(go())


# -- numbers at the door (cause 3) -------------------------------------------------------------


def _refused_at_index(value: str, key_said: str) -> Callable[[Path], None]:
    def case(tmp: Path) -> None:
        source = tmp / "docs.jsonl"
        source.write_text(
            '{"id": "ok", "text": "apples"}\n{"id": "bad", "text": "pears", "metadata": {"n": ' + value + "}}\n"
        )
        code, out = _cli("index", str(source), "--store", str(tmp / "store"), "--embedder", "hashing")
        if code == 0 or "docs.jsonl:2" not in out or "'n'" not in out or key_said not in out:
            raise AssertionError(f"metadata {value[:20]} was not refused naming the line and key: {out[-300:]}")
        if (tmp / "store").exists():
            raise AssertionError("a refused index left a store behind")

    return case


def stored_big_int_breaks_no_filter(tmp: Path) -> None:
    store, _ = _built(tmp, n=6)
    # Written by other means (no writer lets it in): year 10**400 on d0 (graph and vector rows, checksum kept right).
    with sqlite3.connect(store / "graph.sqlite") as c:
        meta = json.loads(c.execute("SELECT metadata FROM documents WHERE id = 'd0'").fetchone()[0])
        meta["year"] = 10**400
        c.execute("UPDATE documents SET metadata = ? WHERE id = 'd0'", (json.dumps(meta),))
        c.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
    with sqlite3.connect(store / "vectors.sqlite") as c:
        vector, text = c.execute("SELECT vector, metadata FROM vectors WHERE id = 'd0'").fetchone()
        meta = json.loads(text)
        meta["year"] = 10**400
        text = json.dumps(meta)
        c.execute(
            "UPDATE vectors SET metadata = ?, checksum = ? WHERE id = 'd0'", (text, _checksum("d0", vector, text))
        )
        c.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
    for preset in ("multihop", "standard", "minimal"):
        for spec, expected in (({"year": {"$gte": 2003}}, {"d0", "d3", "d4", "d5"}), ({"year": 2001}, {"d1"})):
            args = ["query", "orchard topic", "--store", str(store), "--preset", preset, "--json"]
            code, out = _json(*args, "--filter", json.dumps(spec))
            if code != 0:
                raise AssertionError(f"{preset} with filter {spec} failed on a stored 10**400: {out}")
            got = {r["document_id"] for r in out}
            if got != expected:
                raise AssertionError(f"{preset} with filter {spec} returned {sorted(got)}, not {sorted(expected)}")


def filter_value_out_of_range(tmp: Path) -> None:
    store, _ = _built(tmp, n=3)
    code, out = _cli("query", "orchard", "--store", str(store), "--filter", '{"year": {"$gt": ' + "9" * 40 + "}}")
    if code == 0 or "64 bits" not in out or len(out.strip().splitlines()) != 1:
        raise AssertionError(f"an out-of-range filter value was not one clear line: {out[-300:]}")


def server_ingest_refuses_numbers(tmp: Path) -> None:
    async def work(client: Any, store: Any) -> None:
        for value in ("NaN", "Infinity", "1e400", "9" * 400, "9223372036854775808"):
            body = '{"documents": [{"id": "a", "text": "apples", "metadata": {"n": ' + value + "}}]}"
            r = await client.post("/v1/ingest", content=body, headers={"Content-Type": "application/json"})
            if r.status_code != 422 or "'n'" not in r.text:
                raise AssertionError(f"ingest with n={value[:20]} answered {r.status_code}: {r.text[:300]}")
        if await store.graph.count_documents():
            raise AssertionError("a refused ingest wrote documents")

    _served(work, tmp)


# -- damaged vectors (cause 3) -------------------------------------------------------------------


def _rows(path: Path) -> Any:
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    c.text_factory = bytes
    try:
        rows = sorted(c.execute("SELECT * FROM vectors").fetchall(), key=repr)  # a damaged id may be NULL
        return rows, c.execute("SELECT * FROM meta").fetchall()
    finally:
        c.close()


def random_byte_damage_detected(tmp: Path) -> None:
    base, _ = _built(tmp)
    original = _rows(base / "vectors.sqlite")
    rng = random.Random(20261206)
    missed: list[int] = []
    changed = 0
    for trial in range(30):
        store = tmp / f"t{trial}"
        shutil.copytree(base, store)
        path = store / "vectors.sqlite"
        data = bytearray(path.read_bytes())
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        path.write_bytes(bytes(data))
        try:
            differs = _rows(path) != original
        except (sqlite3.Error, UnicodeDecodeError):  # a damaged schema's column names do not decode
            differs = True
        if differs:
            changed += 1
            if _check(store)[0] == 0:
                missed.append(trial)
        shutil.rmtree(store)
    if missed:
        raise AssertionError(f"{len(missed)} of {changed} corruptions that changed rows passed `check`: {missed}")


def nan_vector_named(tmp: Path) -> None:
    store, _ = _built(tmp)
    with sqlite3.connect(store / "vectors.sqlite") as c:
        vector, text = c.execute("SELECT vector, metadata FROM vectors WHERE id = 'd5'").fetchone()
        data = bytearray(vector)
        data[0:4] = struct.pack("<f", float("nan"))
        # Checksum recomputed: only the NaN check can see it.
        c.execute(
            "UPDATE vectors SET vector = ?, checksum = ? WHERE id = 'd5'",
            (bytes(data), _checksum("d5", bytes(data), text)),
        )
        c.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
    code, report = _check(store)
    if code == 0 or not any("'d5'" in line and "NaN" in line for line in report["damaged"]):
        raise AssertionError(f"check did not name the NaN vector of d5: {report['damaged']}")
    code, out = _cli("query", "orchard", "--store", str(store))
    if code == 0 or "'d5'" not in out:
        raise AssertionError(f"a query over a NaN vector did not fail naming it: {out[-300:]}")


def row_without_checksum_named_then_repaired(tmp: Path) -> None:
    store, _ = _built(tmp)
    with sqlite3.connect(store / "vectors.sqlite") as c:  # a row written by something else
        c.execute("UPDATE vectors SET checksum = NULL WHERE id = 'd5'")
    code, report = _check(store)
    if code == 0 or not any("'d5'" in line and "no checksum" in line for line in report["damaged"]):
        raise AssertionError(f"check did not name the row without a checksum: {report}")
    code, report = _check(store, "--repair")
    if not any("deleted 1 damaged vectors" in line for line in report["repairs"]):
        raise AssertionError(f"--repair did not delete the row without a checksum: {report}")


# -- reserved ids (cause 6) ----------------------------------------------------------------------


def entity_id_refused_by_cli(tmp: Path) -> None:
    store, _ = _built(tmp, n=3)
    bad = tmp / "bad.jsonl"
    bad.write_text(json.dumps({"id": ENTITY, "text": "apples"}) + "\n")
    for args in (
        ["index", str(bad), "--store", str(store)],
        ["delete", ENTITY, "--store", str(store)],
        ["delete", ENTITY, "--store", str(store), "--missing-ok"],
    ):
        code, out = _cli(*args)
        if code == 0 or ENTITY not in out or "reserved" not in out:
            raise AssertionError(f"`graphfuse {args[0]}` accepted the entity id: {out[-300:]}")


def entity_id_refused_by_keyless_server(tmp: Path) -> None:
    async def work(client: Any, store: Any) -> None:
        r = await client.post("/v1/ingest", json={"documents": [{"id": ENTITY, "text": "not an entity"}]})
        if r.status_code != 422 or ENTITY not in r.text:
            raise AssertionError(f"ingest of an entity id answered {r.status_code}: {r.text[:300]}")
        from graphfuse import Document

        await store.graph.store_documents([Document(ENTITY, "apple", {"graphfuse_kind": "entity", "name": "apple"})])
        r = await client.delete(f"/v1/documents/{ENTITY}")
        if r.status_code != 422 or not await store.graph.get_documents([ENTITY]):
            raise AssertionError(f"delete of an entity node answered {r.status_code}: {r.text[:300]}")

    _served(work, tmp)


def stray_entity_vector_reported(tmp: Path) -> None:
    store, _ = _built(tmp, n=5)
    with sqlite3.connect(store / "graph.sqlite") as c:  # an entity node ...
        c.execute(
            "INSERT INTO documents (id, content, metadata) VALUES (?, 'apple', ?)",
            (ENTITY, json.dumps({"graphfuse_kind": "entity", "name": "apple"})),
        )
        c.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
    with sqlite3.connect(store / "vectors.sqlite") as c:  # ... with the vector a document of that id left
        vector = c.execute("SELECT vector FROM vectors LIMIT 1").fetchone()[0]
        c.execute(
            "INSERT INTO vectors (id, vector, metadata, checksum) VALUES (?, ?, '{}', ?)",
            (ENTITY, vector, _checksum(ENTITY, vector, "{}")),
        )
        c.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
    code, report = _check(store)
    if code == 0 or ENTITY not in report["examples"].get("vectors_without_documents", []):
        raise AssertionError(f"check did not report the stray vector of the entity node: {report}")
    code, report = _check(store, "--repair")
    if code != 0 or report["vectors"] != 5:
        raise AssertionError(f"--repair did not delete the stray vector: {report}")


# -- store files (cause 8) -----------------------------------------------------------------------


def manifest_permissions_follow_data(tmp: Path) -> None:
    old = os.umask(0o022)
    try:
        store, _ = _built(tmp, n=3)
    finally:
        os.umask(old)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in store.iterdir() if p.suffix in (".json", ".sqlite")}
    if len(set(modes.values())) != 1 or modes["manifest.json"] != 0o644:
        raise AssertionError(f"the store's files have different permissions: {modes}")


def _create(path: str, start: Any, out: Any) -> None:
    start.wait()
    try:
        from graphfuse.stores import LocalStore

        LocalStore.open(path)
        out.put("ok")
    except Exception as exc:  # reported to the parent
        out.put(f"{type(exc).__name__}: {exc}")


def racing_creators_open_one_store(tmp: Path) -> None:
    ctx = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    for round_ in range(5):
        path = str(tmp / f"store{round_}")
        start, out = ctx.Event(), ctx.Queue()
        procs = [ctx.Process(target=_create, args=(path, start, out)) for _ in range(4)]
        for p in procs:
            p.start()
        start.set()
        for p in procs:
            p.join(60)
        outcomes = [out.get(timeout=5) for _ in procs]
        if outcomes != ["ok"] * 4:
            raise AssertionError(f"round {round_}: racing creators were refused: {outcomes}")


def open_waits_for_manifest(tmp: Path) -> None:
    from graphfuse.stores import LocalStore

    directory = tmp / "store"
    LocalStore.open(directory)
    manifest = (directory / "manifest.json").read_bytes()
    (directory / "manifest.json").unlink()

    def land() -> None:
        time.sleep(0.5)
        (directory / "manifest.json").write_bytes(manifest)

    writer = threading.Thread(target=land)
    writer.start()
    try:
        LocalStore.open(directory, mode="ro")
    finally:
        writer.join()


def check_refuses_what_commands_refuse(tmp: Path) -> None:
    store, _ = _built(tmp, n=3)
    manifest = json.loads((store / "manifest.json").read_text())
    for change in ({"version": 99}, {"components": {"embedder": 1}}):
        (store / "manifest.json").write_text(json.dumps({**manifest, **change}))
        q_code, q_out = _cli("query", "orchard", "--store", str(store))
        c_code, c_out = _cli("check", "--store", str(store))
        said = q_out.strip().removeprefix("error: ")
        if q_code == 0 or c_code == 0 or said not in c_out:
            raise AssertionError(f"check ({c_code}) did not report what query ({q_code}) refused: {c_out[-300:]}")


CASES = [
    ("numbers/nan-metadata-refused-at-index", True, _refused_at_index("NaN", "NaN")),
    ("numbers/infinity-metadata-refused-at-index", True, _refused_at_index("1e400", "inf")),
    ("numbers/huge-int-metadata-refused-at-index", True, _refused_at_index("9" * 400, "64 bits")),
    ("numbers/stored-huge-int-breaks-no-filter", True, stored_big_int_breaks_no_filter),
    ("numbers/filter-value-out-of-range-one-line", True, filter_value_out_of_range),
    ("numbers/server-ingest-refuses-numbers", True, server_ingest_refuses_numbers),
    ("vectors/random-byte-damage-detected-by-check", True, random_byte_damage_detected),
    ("vectors/nan-vector-named", True, nan_vector_named),
    ("vectors/row-without-checksum-named-then-repaired", True, row_without_checksum_named_then_repaired),
    ("ids/entity-id-refused-by-cli", True, entity_id_refused_by_cli),
    ("ids/entity-id-refused-by-keyless-server", True, entity_id_refused_by_keyless_server),
    ("ids/stray-entity-vector-reported", True, stray_entity_vector_reported),
    ("files/manifest-permissions-follow-data", True, manifest_permissions_follow_data),
    ("files/open-waits-for-the-manifest", True, open_waits_for_manifest),
    ("files/check-refuses-what-commands-refuse", True, check_refuses_what_commands_refuse),
    ("files/racing-creators-open-one-store", False, racing_creators_open_one_store),
]

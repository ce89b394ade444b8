"""The key file under concurrent `graphfuse keys` processes, and a damaged key file."""

from __future__ import annotations

import json
import multiprocessing
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from _server_world import served
from typer.testing import CliRunner

from graphfuse import StoreCorrupted
from graphfuse.cli import app
from graphfuse.server import KeyFile

runner = CliRunner()
ADDERS, ADDS_EACH, REVOKES = 4, 15, 12


def _context() -> multiprocessing.context.BaseContext:
    # fork starts a worker in milliseconds (spawn re-imports the server package in each)
    return multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")


def _add_many(path: str, tenant: str, n: int, start: multiprocessing.synchronize.Event, out: str) -> None:
    start.wait(30)
    made = [KeyFile(path).add(tenant)[1] for _ in range(n)]
    Path(out).write_text(json.dumps(made))


def _revoke_all(path: str, ids: list[str], start: multiprocessing.synchronize.Event) -> None:
    start.wait(30)
    for key_id in ids:
        KeyFile(path).revoke(key_id)


def test_concurrent_adds_and_revokes_in_processes_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    keys = KeyFile(path)
    doomed = [keys.add("old") for _ in range(REVOKES)]
    ctx = _context()
    start = ctx.Event()
    outs = [tmp_path / f"made-{i}.json" for i in range(ADDERS)]
    workers = [
        ctx.Process(target=_add_many, args=(str(path), f"t{i}", ADDS_EACH, start, str(outs[i]))) for i in range(ADDERS)
    ]
    workers.append(ctx.Process(target=_revoke_all, args=(str(path), [r.key_id for r, _ in doomed], start)))
    for w in workers:
        w.start()
    start.set()
    for w in workers:
        w.join(120)
        assert w.exitcode == 0, f"worker exited with {w.exitcode}"
    made = [key for out in outs for key in json.loads(out.read_text())]
    assert len(made) == ADDERS * ADDS_EACH
    fresh = KeyFile(path)
    # Every printed key was saved, and no revoked key came back.
    assert [k for k in made if fresh.tenant_for(k) is None] == []
    assert [k for _, k in doomed if fresh.tenant_for(k) is not None] == []
    assert len(fresh.records()) == ADDERS * ADDS_EACH
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".keys-")) == []  # no temp file left


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ('{"format": "graphfuse-keys", "keys": [', "not valid JSON"),
        ('{"format": "something-else", "keys": []}', "not a GraphFuse key file"),
        ('{"format": "graphfuse-keys", "keys": [{"id": 1}]}', "entry 0 is malformed"),
        ("\udcff", "unreadable"),
    ],
)
def test_a_damaged_key_file_is_named_by_every_keys_command(tmp_path: Path, content: str, why: str) -> None:
    path = tmp_path / "keys.json"
    path.write_bytes(b"\xff\xfe\x00" if content == "\udcff" else content.encode())
    before = path.read_bytes()
    for args in (["add", "--tenant", "acme"], ["revoke", "abcd1234"], ["list"]):
        result = runner.invoke(app, ["keys", *args, "--keys", str(path)])
        assert result.exit_code == 1, result.output
        assert str(path) in result.output, result.output
        assert why in result.output, result.output
        assert "Traceback" not in result.output
    assert path.read_bytes() == before  # nothing was "repaired" over it


async def test_the_server_names_a_damaged_key_file_not_the_pipeline(tmp_path: Path) -> None:
    async with served(tmp_path, corpus=False) as w:
        ok = await w.client.post("/v1/retrieve", json={"query": "apple"}, headers=w.auth("acme"))
        assert ok.status_code == 200, ok.text
        (tmp_path / "keys.json").write_text('{"format": "graphfuse-keys", "keys": [')
        r = await w.client.post("/v1/retrieve", json={"query": "apple"}, headers=w.auth("acme"))
        assert r.status_code == 500, r.text
        body = r.json()
        assert "key file is damaged" in body["detail"]
        assert "retrieval pipeline" not in body["detail"]
        assert str(tmp_path) not in r.text  # server paths stay in the server's log


@pytest.mark.parametrize("name", ["acme\n", "acme\r\n", "\nacme", "ac me", "a/b", "", "x" * 65])
def test_a_tenant_name_is_whole_no_trailing_newline(tmp_path: Path, name: str) -> None:
    from graphfuse import InvalidInput
    from graphfuse.server import check_tenant

    with pytest.raises(InvalidInput, match="tenant name"):
        check_tenant(name)
    with pytest.raises(InvalidInput, match="tenant name"):
        KeyFile(tmp_path / "keys.json").add(name)
    done = runner.invoke(app, ["keys", "add", "--keys", str(tmp_path / "keys.json"), "--tenant", name])
    assert done.exit_code == 1
    # A key file edited by hand to hold such a tenant is damaged, not a tenant prefix "acme\n/".
    path = tmp_path / "edited.json"
    keys = KeyFile(path)
    keys.add("acme")
    data = json.loads(path.read_text())
    data["keys"][0]["tenant"] = name
    path.write_text(json.dumps(data))
    with pytest.raises(StoreCorrupted, match="invalid tenant name"):
        KeyFile(path).tenant_for("gfk_00000000_" + "a" * 43)


def test_a_key_file_restored_with_the_same_size_and_mtime_is_read_again(tmp_path: Path) -> None:
    import os

    path = tmp_path / "keys.json"
    keys = KeyFile(path)
    _, old_key = keys.add("acme")
    old = path.read_bytes()
    server = KeyFile(path)  # what a running server holds
    assert server.tenant_for(old_key) == "acme"
    # Revoke the key and add another of the same length: the file keeps its size.
    keys.revoke(old_key)
    _, new_key = keys.add("acme")
    new = path.read_bytes()
    assert len(new) == len(old)
    # Restore the old content in place with the old modification time (as `cp -p` or a backup tool would).
    st = path.stat()
    server_view_before = server.tenant_for(new_key)
    assert server_view_before == "acme"
    with path.open("r+b") as f:
        f.write(old)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size
    assert path.stat().st_mtime_ns == st.st_mtime_ns
    assert server.tenant_for(new_key) is None, "the restored file was not read again"
    assert server.tenant_for(old_key) == "acme"

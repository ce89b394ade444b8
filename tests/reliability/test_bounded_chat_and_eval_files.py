"""Chat exports and evaluation files are read within bounds, each fault one line naming the file.

Every test builds its own hostile input in ``tmp_path``: sparse files of gigabytes given as a
WhatsApp export, a Slack day file or ``users.json``, an evaluation corpus or a queries file;
lines of many megabytes; symbolic links out of a Slack export; named pipes. See
docs/reliability.md, "Chat exports and evaluation files are bounded too".
"""

from __future__ import annotations

import json
import os
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphfuse import InvalidInput
from graphfuse.cli import app
from graphfuse.compare import load_questions
from graphfuse.evaluation import MAX_JSONL_FILE_BYTES, MAX_JSONL_LINE_BYTES, load_corpus, load_queries
from graphfuse.indexing import MAX_CHAT_FILE_BYTES, MAX_FILE_BYTES, read_slack, read_whatsapp

runner = CliRunner()
LINE = "3/14/24, 21:06 - Anna: the ferry leaves at nine\n"


def _cli(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def _sparse(path: Path, size: int = 2 * 2**30) -> Path:
    with path.open("wb") as fh:
        fh.truncate(size)  # holes: nothing on disk, gigabytes to whoever reads it
    return path


def _refused(call: Callable[[], object]) -> tuple[int, str]:
    """The peak of memory allocated while ``call`` fails with InvalidInput, and its message."""
    tracemalloc.start()
    try:
        with pytest.raises(InvalidInput) as caught:
            call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, str(caught.value)


def _slack(root: Path) -> Path:
    (root / "general").mkdir(parents=True)
    (root / "users.json").write_text(json.dumps([{"id": "U1", "real_name": "Anna"}]))
    day = [{"type": "message", "user": "U1", "ts": "1710450000.000100", "text": "the ferry leaves at nine"}]
    (root / "general" / "2024-03-14.json").write_text(json.dumps(day))
    return root


# -- chat exports: a size limit of their own ---------------------------------------------------


def test_the_chat_limit_is_larger_than_the_source_file_limit() -> None:
    assert MAX_CHAT_FILE_BYTES == 64 * 2**20 > MAX_FILE_BYTES


def test_a_whatsapp_export_of_gigabytes_is_refused_from_its_size(tmp_path: Path) -> None:
    export = _sparse(tmp_path / "WhatsApp Chat.txt")
    peak, error = _refused(lambda: read_whatsapp(export))
    assert "WhatsApp Chat.txt: cannot read the WhatsApp export: 2 GiB, over the 64 MiB limit" in error
    assert peak < 5 * 2**20
    store = tmp_path / "store"
    code, out = _cli("index", "--chat", "whatsapp", str(export), "--store", str(store), "--embedder", "hashing")
    assert code == 1
    assert "over the 64 MiB limit" in " ".join(out.split())
    assert not store.exists()


@pytest.mark.slow
def test_a_whatsapp_export_over_the_source_limit_is_read_and_the_limit_is_settable(tmp_path: Path) -> None:
    export = tmp_path / "chat.txt"
    export.write_text(LINE * (MAX_FILE_BYTES // len(LINE) + 1000), encoding="utf-8")  # just over 8 MiB
    assert export.stat().st_size > MAX_FILE_BYTES
    assert len(read_whatsapp(export)) > 170_000
    with pytest.raises(InvalidInput, match=r"chat\.txt: cannot read the WhatsApp export: 8\.\d MiB, over the 1 MiB"):
        read_whatsapp(export, max_file_bytes=2**20)
    store = tmp_path / "store"
    code, out = _cli("index", "--chat", "whatsapp", str(export), "--store", str(store), "--max-file-size", "1MiB")
    assert code == 1
    assert "over the 1 MiB limit" in " ".join(out.split())
    assert not store.exists()


def test_a_binary_whatsapp_export_is_refused_after_a_few_kib(tmp_path: Path) -> None:
    export = tmp_path / "chat.txt"
    export.write_bytes(LINE.encode() + b"\0" * 100)
    with pytest.raises(InvalidInput, match=r"chat\.txt: cannot read the WhatsApp export: a binary file"):
        read_whatsapp(export)


def test_a_slack_day_file_or_users_file_of_gigabytes_is_refused_naming_it(tmp_path: Path) -> None:
    root = _slack(tmp_path / "export")
    _sparse(root / "general" / "2024-03-15.json")
    peak, error = _refused(lambda: read_slack(root))
    assert "2024-03-15.json: 2 GiB, over the 64 MiB limit for one file" in error
    assert peak < 5 * 2**20
    (root / "general" / "2024-03-15.json").unlink()
    _sparse(root / "users.json")
    with pytest.raises(InvalidInput, match=r"users\.json: 2 GiB, over the 64 MiB limit"):
        read_slack(root)
    (root / "users.json").write_text("[]")
    with pytest.raises(InvalidInput, match=r"2024-03-14\.json: \d+ bytes, over the 50 bytes limit"):
        read_slack(root, max_file_bytes=50)
    store = tmp_path / "store"
    code, out = _cli("index", "--chat", "slack", str(root), "--store", str(store), "--max-file-size", "50")
    assert code == 1
    assert "2024-03-14.json" in out
    assert not store.exists()


# -- Slack exports: links out of the export --------------------------------------------------


def _linked_export(tmp_path: Path) -> tuple[Path, Path]:
    root = _slack(tmp_path / "export")
    outside = tmp_path / "outside"
    (outside / "secret").mkdir(parents=True)
    said = [{"type": "message", "user": "U1", "ts": "1710450100.000100", "text": "the root password is hunter2"}]
    (outside / "day.json").write_text(json.dumps(said))
    (outside / "secret" / "2024-03-16.json").write_text(json.dumps(said))
    (outside / "users.json").write_text(json.dumps([{"id": "U1", "real_name": "Mallory"}]))
    (root / "general" / "2024-03-15.json").symlink_to(outside / "day.json")
    (root / "leaked").symlink_to(outside / "secret")
    (root / "users.json").unlink()
    (root / "users.json").symlink_to(outside / "users.json")
    (root / "general" / "2024-03-17.json").symlink_to("2024-03-14.json")  # inside: read once
    return root, outside


def test_links_out_of_a_slack_export_are_not_followed_and_each_is_said(tmp_path: Path) -> None:
    root, outside = _linked_export(tmp_path)
    skipped: list[tuple[str, str]] = []
    messages = read_slack(root, on_skip=lambda path, why: skipped.append((path, why)))
    assert [m.text for m in messages] == ["the ferry leaves at nine"]
    assert messages[0].author == "U1"  # (the names of users.json outside were not read either)
    reasons = dict(skipped)
    assert reasons[str(root / "users.json")].startswith(f"a symbolic link to {outside / 'users.json'}, outside")
    assert reasons[str(root / "general" / "2024-03-15.json")].startswith(f"a symbolic link to {outside / 'day.json'}")
    assert "to the folder" in reasons[str(root / "leaked")]
    assert "which is read already" in reasons[str(root / "general" / "2024-03-17.json")]
    assert all("--follow-symlinks" in why for path, why in skipped if "outside" in why)

    store = tmp_path / "store"
    code, out = _cli("index", "--chat", "slack", str(root), "--store", str(store), "--embedder", "hashing")
    assert code == 0, out
    flat = " ".join(out.split())
    assert flat.count("outside the folder: not followed") == 3
    assert "hunter2" not in flat

    followed = read_slack(root, follow_symlinks=True)
    assert {m.text for m in followed} == {"the ferry leaves at nine", "the root password is hunter2"}
    assert {m.channel for m in followed} == {"general", "leaked"}
    assert {m.author for m in followed} == {"Mallory"}


def test_a_slack_channel_filter_still_sees_linked_channels_inside(tmp_path: Path) -> None:
    root = _slack(tmp_path / "export")
    (root / "random").symlink_to("general")  # inside the export, and read already as general
    skipped: list[tuple[str, str]] = []
    assert len(read_slack(root, channels=["general"], on_skip=lambda p, w: skipped.append((p, w)))) == 1
    with pytest.raises(InvalidInput, match="no channel folder named nope"):
        read_slack(root, channels=["nope"])


# -- eval and compare files: a generous, documented bound, streamed ----------------------------


def test_the_eval_limits_are_documented_defaults() -> None:
    assert MAX_JSONL_FILE_BYTES == 2**30
    assert MAX_JSONL_LINE_BYTES == 8 * 2**20


@pytest.mark.parametrize("which", ["queries", "questions"])
def test_a_queries_file_of_gigabytes_is_refused_from_its_size(tmp_path: Path, which: str) -> None:
    path = _sparse(tmp_path / f"{which}.jsonl", 3 * 2**30)
    load = load_queries if which == "queries" else load_questions
    peak, error = _refused(lambda: load(path))
    assert f"{which}.jsonl: 3 GiB, over the 1 GiB limit for one JSON-lines file" in error
    assert peak < 5 * 2**20
    with pytest.raises(InvalidInput, match=r"over the 1 KiB limit"):
        load(_sparse(tmp_path / "small.jsonl", 4096), max_file_bytes=1024)


@pytest.mark.parametrize("which", ["queries", "questions"])
def test_a_long_line_is_named_by_file_and_line_without_being_held(tmp_path: Path, which: str) -> None:
    path = tmp_path / f"{which}.jsonl"
    good = json.dumps({"id": "q1", "question": "When?", "gold_ids": ["a"]})
    with path.open("w") as fh:
        fh.write(good + "\n")
        fh.write('{"id": "q2", "question": "' + "x" * (32 * 2**20) + '"}\n')  # 32 MiB on line 2
    load = load_queries if which == "queries" else load_questions
    peak, error = _refused(lambda: load(path))
    assert f"{which}.jsonl:2: a line longer than 8 MiB, the limit for one line" in error
    assert peak < 20 * 2**20  # (a buffer of two 8 MiB pieces at most, never the 32 MiB line)
    with pytest.raises(InvalidInput, match=rf"{which}\.jsonl:1: a line longer than 10 bytes"):
        load(path, max_line_bytes=10)


def test_a_named_pipe_as_queries_is_named_not_read(tmp_path: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes on this platform")
    pipe = tmp_path / "queries.jsonl"
    os.mkfifo(pipe)  # opening it for reading without O_NONBLOCK would block until a writer comes
    for load in (load_queries, load_questions):
        with pytest.raises(InvalidInput, match=r"queries\.jsonl: not a regular file"):
            load(pipe)


def test_an_eval_corpus_is_bounded_by_size_and_line(tmp_path: Path) -> None:
    corpus = _sparse(tmp_path / "corpus.jsonl", 3 * 2**30)
    peak, error = _refused(lambda: load_corpus(corpus))
    assert "corpus.jsonl: 3 GiB, over the 1 GiB limit for a corpus file" in error
    assert peak < 5 * 2**20
    corpus.unlink()
    corpus.write_text(
        json.dumps({"id": "a", "text": "Some text."}) + "\n" + '{"id": "b", "text": "' + "y" * 2000 + '"}\n'
    )
    assert [r.id for r in load_corpus(corpus, max_line_bytes=4096)] == ["a", "b"]
    with pytest.raises(InvalidInput, match=r"corpus\.jsonl:2: a line longer than 1 KiB"):
        load_corpus(corpus, max_line_bytes=1024)
    with pytest.raises(InvalidInput, match=r"over the 100 bytes limit"):
        load_corpus(corpus, max_file_bytes=100)


def test_graphfuse_eval_refuses_an_oversized_input_in_one_line(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "a", "text": "Some text."}) + "\n")
    queries = _sparse(tmp_path / "queries.jsonl", 3 * 2**30)
    code, out = _cli("eval", "--corpus", str(corpus), "--queries", str(queries), "--pipeline", "bm25")
    assert code == 1
    assert "queries.jsonl: 3 GiB, over the 1 GiB limit" in " ".join(out.split())

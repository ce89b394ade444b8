"""Abuse cases for chat exports and evaluation files: files of gigabytes, endless lines, links
out of a Slack export, named pipes. Each is refused or skipped with one line naming the file.

Loaded by ``benchmarks/abuse_probe.py`` by path (this file imports nothing from the others).
Each case builds its hostile input in the temporary directory it is given, reads it with the
public readers (``read_whatsapp``, ``read_slack``, ``load_corpus``, ``load_queries``,
``load_questions``, traced for memory) or runs ``graphfuse index --chat`` / ``graphfuse eval``
(in-process through typer's runner, or as a real process where a hang is what is probed) and
raises ``AssertionError`` naming what did not hold.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from typer.testing import CliRunner

from graphfuse import InvalidInput
from graphfuse.cli import app
from graphfuse.compare import load_questions
from graphfuse.evaluation import load_corpus, load_queries
from graphfuse.indexing import read_slack, read_whatsapp

GRAPHFUSE = str(Path(sys.executable).parent / "graphfuse")
_runner = CliRunner()
_SECRET = "the root password is hunter2"


def _cli(*args: str) -> tuple[int, str]:
    result = _runner.invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"graphfuse {' '.join(args)} raised {result.exception!r} (a traceback)")
    if "Traceback" in result.output:
        raise AssertionError(f"graphfuse {' '.join(args)} printed a traceback: {result.output[-600:]}")
    return result.exit_code, " ".join(result.output.split())


def _sparse(path: Path, size: int) -> Path:
    with path.open("wb") as fh:
        fh.truncate(size)
    return path


def _refused(call: Callable[[], object], said: str, *, peak_mib: float) -> None:
    """``call`` fails with one InvalidInput naming ``said``, allocating under ``peak_mib``."""
    tracemalloc.start()
    try:
        try:
            call()
        except InvalidInput as exc:
            message = str(exc)
        else:
            raise AssertionError(f"not refused (expected {said!r})")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    if said not in message or "\n" in message:
        raise AssertionError(f"the refusal does not say {said!r} in one line: {message[:400]}")
    if peak > peak_mib * 2**20:
        raise AssertionError(f"{peak / 2**20:.1f} MiB allocated to refuse it (at most {peak_mib} MiB)")


def _slack(root: Path) -> Path:
    (root / "general").mkdir(parents=True)
    (root / "users.json").write_text(json.dumps([{"id": "U1", "real_name": "Anna"}]))
    day = [{"type": "message", "user": "U1", "ts": "1710450000.000100", "text": "the ferry leaves at nine"}]
    (root / "general" / "2024-03-14.json").write_text(json.dumps(day))
    return root


def whatsapp_export_of_gigabytes(tmp: Path) -> None:
    export = _sparse(tmp / "WhatsApp Chat.txt", 4 * 2**30)
    _refused(lambda: read_whatsapp(export), "WhatsApp Chat.txt: cannot read the WhatsApp export: 4 GiB", peak_mib=5)
    store = tmp / "store"
    code, out = _cli("index", "--chat", "whatsapp", str(export), "--store", str(store), "--embedder", "hashing")
    if code != 1 or "over the 64 MiB limit" not in out or store.exists():
        raise AssertionError(
            f"graphfuse index --chat whatsapp: exit {code}, store left: {store.exists()}: {out[-400:]}"
        )


def whatsapp_limit_is_settable(tmp: Path) -> None:
    export = tmp / "chat.txt"
    export.write_text("3/14/24, 21:06 - Anna: the ferry leaves at nine\n" * 30_000, encoding="utf-8")  # 1.4 MiB
    if len(read_whatsapp(export)) != 30_000:
        raise AssertionError("a 1.4 MiB export under the default chat limit was not read whole")
    store = tmp / "store"
    code, out = _cli("index", "--chat", "whatsapp", str(export), "--store", str(store), "--max-file-size", "1MiB")
    if code != 1 or "over the 1 MiB limit" not in out or store.exists():
        raise AssertionError(f"--max-file-size 1MiB did not refuse a 1.4 MiB export: exit {code}: {out[-400:]}")


def slack_day_and_users_files_of_gigabytes(tmp: Path) -> None:
    root = _slack(tmp / "export")
    day = _sparse(root / "general" / "2024-03-15.json", 4 * 2**30)
    _refused(lambda: read_slack(root), "2024-03-15.json: 4 GiB, over the 64 MiB limit", peak_mib=5)
    day.unlink()
    _sparse(root / "users.json", 4 * 2**30)
    _refused(lambda: read_slack(root), "users.json: 4 GiB, over the 64 MiB limit", peak_mib=5)


def _linked_export(tmp: Path) -> Path:
    root = _slack(tmp / "export")
    outside = tmp / "outside"
    (outside / "secret").mkdir(parents=True)
    said = [{"type": "message", "user": "U1", "ts": "1710450100.000100", "text": _SECRET}]
    (outside / "day.json").write_text(json.dumps(said))
    (outside / "secret" / "2024-03-16.json").write_text(json.dumps(said))
    (root / "general" / "2024-03-15.json").symlink_to(outside / "day.json")
    (root / "general" / "2024-03-16.json").symlink_to("../../outside/day.json")  # relative, still out
    (root / "leaked").symlink_to(outside / "secret")
    (root / "passwd").symlink_to("/etc/passwd")  # (not a .json: never read)
    return root


def slack_links_out_stay_out(tmp: Path) -> None:
    root = _linked_export(tmp)
    skipped: list[str] = []
    texts = {m.text for m in read_slack(root, on_skip=lambda path, why: skipped.append(f"{path}: {why}"))}
    if any("hunter2" in t for t in texts):
        raise AssertionError("a Slack export's link out of the folder was followed")
    if sum("outside the folder: not followed" in s for s in skipped) != 3:
        raise AssertionError(f"each link out is not said once: {skipped}")
    store = tmp / "store"
    code, out = _cli("index", "--chat", "slack", str(root), "--store", str(store), "--embedder", "hashing")
    if code != 0 or out.count("outside the folder: not followed") != 3 or "hunter2" in out:
        raise AssertionError(f"graphfuse index --chat slack: exit {code}: {out[-600:]}")


def slack_follow_symlinks_reads_outside(tmp: Path) -> None:
    root = _linked_export(tmp)
    texts = [m.text for m in read_slack(root, follow_symlinks=True)]
    if texts.count(_SECRET) != 2:  # (one ts per channel: general once, leaked once)
        raise AssertionError(f"follow_symlinks did not read the linked files once per channel: {texts}")


def _no_hang(args: list[str], needle: str) -> None:
    try:
        proc = subprocess.run([GRAPHFUSE, *args], capture_output=True, text=True, timeout=120, check=False)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"graphfuse {' '.join(args)} blocked on a named pipe") from None
    err = " ".join(proc.stderr.split())
    if proc.returncode != 1 or needle not in err or "Traceback" in err or "no such" in err:
        raise AssertionError(f"graphfuse {' '.join(args)}: exit {proc.returncode}, {err[-400:]}")


def fifos_in_chat_and_eval_inputs_never_block(tmp: Path) -> None:
    root = _slack(tmp / "export")
    os.mkfifo(root / "general" / "2024-03-15.json")
    _no_hang(
        ["index", "--chat", "slack", str(root), "--store", str(tmp / "store"), "--embedder", "hashing"],
        "2024-03-15.json: a named pipe (FIFO), not a regular file",
    )
    corpus = tmp / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "a", "text": "Some text."}) + "\n")
    os.mkfifo(tmp / "queries.jsonl")
    _no_hang(
        ["eval", "--corpus", str(corpus), "--queries", str(tmp / "queries.jsonl"), "--pipeline", "bm25"],
        "queries.jsonl: not a regular file",
    )


def eval_files_of_gigabytes(tmp: Path) -> None:
    corpus = _sparse(tmp / "corpus.jsonl", 3 * 2**30)
    _refused(lambda: load_corpus(corpus), "corpus.jsonl: 3 GiB, over the 1 GiB limit", peak_mib=5)
    queries = _sparse(tmp / "queries.jsonl", 3 * 2**30)
    _refused(lambda: load_queries(queries), "queries.jsonl: 3 GiB, over the 1 GiB limit", peak_mib=5)
    _refused(lambda: load_questions(queries), "queries.jsonl: 3 GiB, over the 1 GiB limit", peak_mib=5)
    good = tmp / "good.jsonl"
    good.write_text(json.dumps({"id": "a", "text": "Some text."}) + "\n")
    code, out = _cli("eval", "--corpus", str(good), "--queries", str(queries), "--pipeline", "bm25")
    if code != 1 or "queries.jsonl: 3 GiB, over the 1 GiB limit" not in out:
        raise AssertionError(f"graphfuse eval with a 3 GiB queries file: exit {code}: {out[-400:]}")


def eval_lines_of_megabytes_named_not_held(tmp: Path) -> None:
    for name, load, first in (
        ("queries.jsonl", load_queries, {"id": "q1", "question": "When?", "gold_ids": ["a"]}),
        ("questions.jsonl", load_questions, {"id": "q1", "question": "When?"}),
        ("corpus.jsonl", load_corpus, {"id": "a", "text": "Some text."}),
    ):
        path = tmp / name
        with path.open("w") as fh:
            fh.write(json.dumps(first) + "\n")
            fh.write('{"id": "q2", "text": "' + "x" * (40 * 2**20) + '"}\n')  # 40 MiB on line 2
        _refused(lambda load=load, path=path: load(path), f"{name}:2: a line longer than 8 MiB", peak_mib=20)
        path.unlink()


CASES = [
    ("bounds/whatsapp-export-of-gigabytes-refused-from-size", True, whatsapp_export_of_gigabytes),
    ("bounds/whatsapp-limit-settable-with-max-file-size", True, whatsapp_limit_is_settable),
    ("bounds/slack-day-and-users-files-of-gigabytes-refused", True, slack_day_and_users_files_of_gigabytes),
    ("bounds/slack-links-out-of-the-export-not-followed", True, slack_links_out_stay_out),
    ("bounds/slack-follow-symlinks-reads-outside-once", True, slack_follow_symlinks_reads_outside),
    ("bounds/fifos-in-chat-and-eval-inputs-never-block", True, fifos_in_chat_and_eval_inputs_never_block),
    ("bounds/eval-files-of-gigabytes-refused-from-size", True, eval_files_of_gigabytes),
    ("bounds/eval-lines-of-megabytes-named-not-held", True, eval_lines_of_megabytes_named_not_held),
]

"""Abuse cases for chat exports: clock changes, odd names, repeated and odd messages, odd options.

Loaded by ``benchmarks/abuse_probe.py`` by path (this file imports nothing from the others).
Each case writes its own WhatsApp or Slack export in the temporary directory it is given,
reads it with ``graphfuse index --chat`` (in-process through typer's runner, the offline
``hashing`` embedder) or with the public readers, and raises ``AssertionError`` naming what
did not hold.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from zoneinfo import ZoneInfo

from typer.testing import CliRunner

from graphfuse import InvalidInput
from graphfuse.cli import app
from graphfuse.indexing import conversation_records, read_slack, read_whatsapp
from graphfuse.stores import aopen_store

_runner = CliRunner()
BERLIN = ZoneInfo("Europe/Berlin")


def _cli(*args: str) -> tuple[int, str]:
    result = _runner.invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"graphfuse {' '.join(args)} raised {result.exception!r} (a traceback)")
    return result.exit_code, result.output


def _one_line_refusal(args: list[str], store: Path, said: str) -> None:
    code, out = _cli(*args)
    lines = [line for line in out.splitlines() if line.strip()]
    if code == 0 or len(lines) != 1 or said not in " ".join(out.split()):
        raise AssertionError(f"`graphfuse {' '.join(args)}` did not refuse in one line naming {said!r}: {out[-600:]}")
    if store.exists():
        raise AssertionError(f"a refused `graphfuse {' '.join(args)}` left a store behind")


def _stored_text(store: Path, doc_id: str) -> str:
    async def go() -> str:
        opened = await aopen_store(store, create=False)
        try:
            doc = (await opened.graph.get_documents([doc_id])).get(doc_id)
            if doc is None:
                raise AssertionError(f"no conversation {doc_id!r} in the store")
            return doc.content or ""
        finally:
            await opened.aclose()

    return asyncio.run(go())


def whatsapp_fall_back_keeps_the_reply_after_its_question(tmp: Path) -> None:
    # 25 October 2026, Berlin: 02:00-02:59 happens twice; the reply is in the second pass.
    export = tmp / "WhatsApp Chat with Night Train.txt"
    export.write_text(
        "25/10/2026, 01:55 - Anna: Is the night train on time?\n"
        "25/10/2026, 02:50 - Anna: Does the 02:00 departure still leave?\n"
        "25/10/2026, 02:10 - Ben: Yes, at 02:00 winter time\n"
        "25/10/2026, 02:20 - Ben: Platform 4\n",
        encoding="utf-8",
    )
    store = tmp / "store"
    code, out = _cli(
        "index", "--chat", "whatsapp", str(export), "--chat-timezone", "Europe/Berlin", "--store", str(store),
        "--embedder", "hashing",
    )  # fmt: skip
    if code != 0:
        raise AssertionError(out)
    text = _stored_text(store, "WhatsApp Chat with Night Train/2026-10-24T23:55:00Z")  # 01:55 CEST
    lines = [line.split(":", 1)[0] for line in text.splitlines()]
    if lines != ["Anna", "Anna", "Ben", "Ben"] or "Does the 02:00" not in text.splitlines()[1]:
        raise AssertionError(f"the repeated hour was reordered: {text!r}")


def whatsapp_spring_forward_sorts_in_place(tmp: Path) -> None:
    export = tmp / "spring.txt"
    export.write_text(
        "29/03/2026, 01:59 - Anna: first\n29/03/2026, 02:30 - Ben: second\n29/03/2026, 03:01 - Anna: third\n",
        encoding="utf-8",
    )
    (record,) = conversation_records(read_whatsapp(export, tz=BERLIN))
    if [line.split(": ")[1] for line in record.text.splitlines()] != ["first", "second", "third"]:
        raise AssertionError(f"a time the clocks skipped sorted out of place: {record.text!r}")


def whatsapp_long_author_keeps_the_message(tmp: Path) -> None:
    name = "Prof. " + "Featherstonehaugh-" * 20 + "Cholmondeley"
    export = tmp / "long.txt"
    export.write_text(f"3/14/24, 21:06 - {name}: Rehearsal at eight\n3/14/24, 21:07 - Ben: Fine\n", encoding="utf-8")
    authors = [m.author for m in read_whatsapp(export, day_first=False)]
    if authors != [name, "Ben"]:
        raise AssertionError(f"a {len(name)}-character author lost the message: {authors}")


def _slack(root: Path, days: dict[str, list[dict[str, object]]]) -> Path:
    (root / "general").mkdir(parents=True)
    for day, messages in days.items():
        (root / "general" / f"{day}.json").write_text(json.dumps(messages))
    return root


def slack_message_in_two_day_files_once(tmp: Path) -> None:
    question = {"user": "U1", "text": "Where is the release plan?", "ts": "1772701200.000100"}
    answer = {"user": "U2", "text": "In the wiki.", "ts": "1772701260.000200"}
    root = _slack(tmp / "export", {"2026-03-05": [question, answer], "2026-03-06": [answer]})
    texts = [m.text for m in read_slack(root)]
    if texts != ["Where is the release plan?", "In the wiki."]:
        raise AssertionError(f"a message held by two day files was not read once: {texts}")


def _odd_field(field: str, value: object, said: str) -> Callable[[Path], None]:
    def case(tmp: Path) -> None:
        message = {"user": "U1", "text": "hello", "ts": "1772701200.000100", field: value}
        root = _slack(tmp / "export", {"2026-03-05": [message]})
        store = tmp / "store"
        args = ["index", "--chat", "slack", str(root), "--store", str(store), "--embedder", "hashing"]
        _one_line_refusal(args, store, f"2026-03-05.json: message 1 (ts '1772701200.000100'): {said}")

    return case


def slack_json_nested_too_deeply(tmp: Path) -> None:
    root = _slack(tmp / "export", {})
    (root / "general" / "2026-03-05.json").write_text("[" * 200_000 + "]" * 200_000)
    try:
        read_slack(root)
    except InvalidInput as exc:
        if "nested too deeply" not in str(exc) or "2026-03-05.json" not in str(exc):
            raise AssertionError(f"the refusal does not name the file and the cause: {exc}") from exc
    else:
        raise AssertionError("JSON nested 200,000 deep was read")


def _chat_gap(value: str) -> Callable[[Path], None]:
    def case(tmp: Path) -> None:
        export = tmp / "chat.txt"
        export.write_text("3/14/24, 21:06 - Anna: hi\n", encoding="utf-8")
        store = tmp / "store"
        args = ["index", "--chat", "whatsapp", str(export), "--store", str(store), "--embedder", "hashing"]
        _one_line_refusal([*args, "--chat-gap", value], store, "--chat-gap must be a positive number of minutes")

    return case


CASES = [
    ("chat/whatsapp-fall-back-keeps-reply-after-question", True, whatsapp_fall_back_keeps_the_reply_after_its_question),
    ("chat/whatsapp-spring-forward-sorts-in-place", True, whatsapp_spring_forward_sorts_in_place),
    ("chat/whatsapp-long-author-keeps-message", True, whatsapp_long_author_keeps_the_message),
    ("chat/slack-message-in-two-day-files-once", True, slack_message_in_two_day_files_once),
    ("chat/slack-subtype-list-one-line", True, _odd_field("subtype", ["bot_message"], "'subtype' is a list")),
    ("chat/slack-subtype-object-one-line", True, _odd_field("subtype", {"a": 1}, "'subtype' is an object")),
    ("chat/slack-text-number-one-line", True, _odd_field("text", 12, "'text' is a number")),
    ("chat/slack-profile-string-one-line", True, _odd_field("user_profile", "x", "'user_profile' is a string")),
    ("chat/slack-json-nested-too-deeply", True, slack_json_nested_too_deeply),
    ("chat/chat-gap-inf-one-line", True, _chat_gap("inf")),
    ("chat/chat-gap-1e300-one-line", True, _chat_gap("1e300")),
    ("chat/chat-gap-nan-one-line", True, _chat_gap("nan")),
]

"""A Slack workspace export (a folder of per-channel, per-day JSON files) read as chat messages."""

from __future__ import annotations

import html
import json
import os
import re
import stat
from collections.abc import Callable, Collection, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .._core._errors import InvalidInput
from ._conversations import ChatMessage
from ._reading import MAX_CHAT_FILE_BYTES, SourceReader, Unreadable, not_a_file

__all__ = ["read_slack"]

# Messages a person wrote; the other subtypes are Slack's notices (joins, topic changes, pins).
_SAID = {None, "bot_message", "me_message", "thread_broadcast", "file_share", "message_replied"}
_MENTION = re.compile(r"<@(?P<id>[A-Z0-9]+)(?:\|(?P<name>[^>]*))?>")
_CHANNEL = re.compile(r"<#[A-Z0-9]+\|(?P<name>[^>]*)>")
_SPECIAL = re.compile(r"<!(?P<name>[a-z]+)(?:\|[^>]*)?>")
_LINK = re.compile(r"<(?P<url>[a-z][a-z0-9+.-]*:[^|>]*)(?:\|(?P<label>[^>]*))?>")


def read_slack(
    path: str | os.PathLike[str],
    *,
    channels: Collection[str] | None = None,
    max_file_bytes: int = MAX_CHAT_FILE_BYTES,
    follow_symlinks: bool = False,
    on_skip: Callable[[str, str], None] | None = None,
) -> list[ChatMessage]:
    """The messages of a Slack export folder (``Settings`` -> ``Import/Export Data``, unzipped).

    Each channel is a folder of ``YYYY-MM-DD.json`` files; ``users.json`` (when present) gives
    the people's names. A message's author is its profile's real name (else display name, user
    name, bot name, user id), mentions read as ``@Name``, channel links as ``#name``, links as
    their label, and Slack's notices (joins, topic changes, pins) are left out. A thread's
    replies are a thread of their own (``thread`` = the parent's ``ts``), opened by a copy of
    the parent message, so a reply is found with the question it answers. ``channels`` keeps
    only the channels named. A message that two day files hold (the same ``ts`` in one channel)
    is read once, from the first. Bad JSON, and a field read here of another JSON type than
    Slack writes (a ``subtype`` that is a list, say), raise :class:`~graphfuse.InvalidInput`
    naming the file and the message.

    The export is read within bounds, like :func:`~graphfuse.indexing.read_sources` reads a
    folder: a file larger than ``max_file_bytes`` (:data:`~graphfuse.indexing.MAX_CHAT_FILE_BYTES`,
    64 MiB), binary, or not a regular file raises :class:`~graphfuse.InvalidInput` naming it,
    before it is read; a symbolic link that leads out of the export folder is not followed
    (unless ``follow_symlinks=True``), and ``on_skip(path, reason)`` is told of it, as of every
    other file or folder left out (a link to one read already).
    """
    root = Path(path)
    if not root.is_dir():
        raise InvalidInput(f"{root}: not a folder; give the unzipped Slack export folder")
    reader = SourceReader(max_bytes=max_file_bytes, follow_symlinks=follow_symlinks)
    wanted = None if channels is None else set(channels)
    present: set[str] = set()

    def prune(rel: str) -> bool:  # (a channel is a folder of day files; nothing deeper is read)
        if "/" in rel:
            return True
        present.add(rel)
        return wanted is not None and rel not in wanted

    def skipped(where: str, why: str) -> None:
        # A link left out (out of the export, or to a file read already) is said; a file of the
        # export itself that cannot be read (a named pipe, a folder that may not be listed) fails.
        try:
            mode = os.lstat(where).st_mode
        except OSError:
            mode = 0
        if not (stat.S_ISLNK(mode) or stat.S_ISREG(mode)):
            raise InvalidInput(f"{where}: {why}")
        if on_skip is not None:
            on_skip(where, why)

    found = reader.folder(root, (".json",), skipped, prune=prune)
    users_file = next((file for file, rel in found if rel == "users.json"), None)
    users = {} if users_file is None else _users(users_file, reader)
    days = [(file, rel.split("/")[0]) for file, rel in found if rel.count("/") == 1]
    present.update(channel for _, channel in days)  # (with channel folders linked into the export)
    if wanted is not None:
        missing = wanted - present
        if missing:
            raise InvalidInput(f"{root}: no channel folder named {', '.join(sorted(missing))}")
        days = [(file, channel) for file, channel in days if channel in wanted]
    messages: list[ChatMessage] = []
    parents: dict[tuple[str, str], ChatMessage] = {}
    replies: list[tuple[str, str, ChatMessage]] = []
    seen: set[tuple[str, str]] = set()  # a message is one ts of its channel, whichever day files hold it
    for day, channel in days:
        for n, raw in enumerate(_load(day, reader), start=1):
            _check_fields(day, n, raw)
            message = _message(day, n, raw, channel, users)
            if message is None:
                continue
            ts, thread_ts = str(raw["ts"]), raw.get("thread_ts")
            if (channel, ts) in seen:
                continue
            seen.add((channel, ts))
            if isinstance(thread_ts, str) and thread_ts != ts:
                replies.append((channel, thread_ts, message))
                continue
            messages.append(message)
            if isinstance(thread_ts, str):
                parents[(channel, ts)] = message
    opened: set[tuple[str, str]] = set()
    for channel, thread_ts, message in replies:
        parent = parents.get((channel, thread_ts))
        if parent is not None and (channel, thread_ts) not in opened:
            opened.add((channel, thread_ts))
            messages.append(ChatMessage(parent.sent_at, parent.author, parent.text, channel=channel, thread=thread_ts))
        messages.append(ChatMessage(message.sent_at, message.author, message.text, channel=channel, thread=thread_ts))
    if not messages:
        raise InvalidInput(f"{root}: no message found in its channel folders; is it a Slack export?")
    return messages


def _load(file: Path, reader: SourceReader) -> list[Mapping[str, Any]]:
    if file.exists() and not file.is_file():  # (a named pipe would block the read)
        raise not_a_file(file)
    try:
        data = json.loads(reader.read(file).decode("utf-8"))
    except Unreadable as bad:
        raise bad.error(file) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"{file}: not readable JSON: {exc}") from exc
    except RecursionError:
        raise InvalidInput(f"{file}: not readable JSON: nested too deeply") from None
    if not isinstance(data, list) or not all(isinstance(item, Mapping) for item in data):
        raise InvalidInput(f"{file}: expected a JSON list of message objects")
    return data


def _users(file: Path, reader: SourceReader) -> dict[str, str]:
    names = {}
    for user in _load(file, reader):
        uid = user.get("id")
        if isinstance(uid, str):
            name = _name(user.get("profile")) or _name(user)
            if name:
                names[uid] = name
    return names


def _name(entry: object) -> str | None:
    if not isinstance(entry, Mapping):
        return None
    for key in ("real_name", "display_name", "name"):
        value = entry.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


# The JSON types of each field read (a field may also be absent or null); any other is refused.
_FIELDS: dict[str, tuple[tuple[type, ...], str]] = {
    "type": ((str,), "a string"),
    "subtype": ((str,), "a string"),
    "ts": ((str, int, float), "a string of seconds"),
    "thread_ts": ((str,), "a string"),
    "text": ((str,), "a string"),
    "user": ((str,), "a string"),
    "username": ((str,), "a string"),
    "user_profile": ((Mapping,), "an object"),
}
_JSON_TYPES: dict[type, str] = {
    str: "a string",
    bool: "a boolean",
    int: "a number",
    float: "a number",
    list: "a list",
    dict: "an object",
}


def _check_fields(file: Path, n: int, raw: Mapping[str, Any]) -> None:
    """Refuse message ``n`` of ``file`` when a field read here has another JSON type than Slack writes."""
    for key, (kinds, named) in _FIELDS.items():
        value = raw.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, kinds)):
            got = _JSON_TYPES.get(type(value), type(value).__name__)
            raise InvalidInput(f"{file}: message {n}{_ts(raw)}: {key!r} is {got}, expected {named}")


def _ts(raw: Mapping[str, Any]) -> str:
    ts = raw.get("ts")
    return f" (ts {ts!r})" if isinstance(ts, str) and len(ts) <= 40 else ""


def _message(file: Path, n: int, raw: Mapping[str, Any], channel: str, users: Mapping[str, str]) -> ChatMessage | None:
    if raw.get("type", "message") != "message" or raw.get("subtype") not in _SAID:
        return None
    try:
        sent = datetime.fromtimestamp(float(raw["ts"]), tz=timezone.utc)
    except (KeyError, TypeError, ValueError, OverflowError, OSError) as exc:
        raise InvalidInput(f"{file}: message {n} without a valid 'ts' ({raw.get('ts')!r})") from exc
    text = raw.get("text")
    if not isinstance(text, str) or not text.strip():
        return None
    uid = raw.get("user")
    author = (
        _name(raw.get("user_profile"))
        or (users.get(uid) if isinstance(uid, str) else None)
        or _name({"name": raw.get("username")})
        or (uid if isinstance(uid, str) else None)
        or "unknown"
    )
    return ChatMessage(sent, author, _plain(text, users), channel=channel)


def _plain(text: str, users: Mapping[str, str]) -> str:
    """Slack's markup as a reader sees it."""
    text = _MENTION.sub(lambda m: "@" + (users.get(m["id"]) or m["name"] or m["id"]), text)
    text = _CHANNEL.sub(lambda m: "#" + m["name"], text)
    text = _SPECIAL.sub(lambda m: "@" + m["name"], text)
    text = _LINK.sub(lambda m: m["label"] or m["url"], text)
    return html.unescape(text)

"""WhatsApp's "Export chat" text files read as chat messages."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path

from .._core._errors import InvalidInput
from ._conversations import ChatMessage
from ._reading import MAX_CHAT_FILE_BYTES, SourceReader, Unreadable, not_a_file

__all__ = ["read_whatsapp"]

# "[8/15/23, 9:12:33 AM] Name: text" (iOS) and "15/08/2023, 21:12 - Name: text" (Android), with the
# direction marks and narrow no-break spaces the apps put in.
_HEAD = re.compile(
    r"^[\u200e\u200f\ufeff]*\[?(?P<a>\d{1,4})[./-](?P<b>\d{1,2})[./-](?P<c>\d{2,4}),?\s+"
    r"(?P<h>\d{1,2})[:.](?P<m>\d{2})(?:[:.](?P<s>\d{2}))?\s*(?P<ap>[aApP]\.?\s?[mM]\.?)?\]?\s*(?:[-\u2013]\s*)?"
    r"(?P<rest>.*)$"
)
# A name holds no quote: "Anna changed the subject from "Plans: May" to ..." is a notice, not Anna's words.
# (A name may be long: a contact saved with a company and a role in it is still who wrote.)
_AUTHOR = re.compile(r"^(?P<author>[^:\"\u201c\u201d]+?):\s(?P<text>.*)$", re.DOTALL)
# What the export writes in place of what was not exported: media, deleted messages.
_PLACEHOLDER = re.compile(
    r"^(<media omitted>|(image|video|audio|sticker|gif|document|contact card) omitted|<attached: [^>]*>"
    r"|this message was deleted|you deleted this message|null"
    r"|messages and calls are end-to-end encrypted\b.*)$",
    re.IGNORECASE,
)
_MARKS = re.compile(r"[\u200e\u200f\ufeff]")


def read_whatsapp(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    day_first: bool | None = None,
    tz: tzinfo = timezone.utc,
    channel: str | None = None,
    max_file_bytes: int = MAX_CHAT_FILE_BYTES,
) -> list[ChatMessage]:
    """The messages of WhatsApp chat exports (``Export chat`` -> ``Without media``, a ``.txt`` each).

    Both layouts are read: ``[8/15/23, 9:12:33 AM] Name: text`` (iPhone) and
    ``15/08/2023, 21:12 - Name: text`` (Android), 12- or 24-hour times, with or without seconds.
    A line that does not start with a time continues the message before it. Lines without an
    author (``Anna added Ben``), the notices the iPhone export marks as such (``Messages and
    calls are end-to-end encrypted``) and the placeholders of what was not exported (``<Media
    omitted>``, ``image omitted``, deleted messages) are left out.

    The export writes dates in the phone's locale. ``day_first`` says whether ``3/4/24`` is the
    3rd of April (``True``) or March 4th (``False``); ``None`` infers it from all the files
    given (the exports of one phone share its format): a first number above 12 makes them
    day-first, a second one above 12 month-first. When every date reads both ways, differently,
    or the files contradict each other, :class:`~graphfuse.InvalidInput` asks for
    ``day_first``. Times are the phone's wall-clock time: ``tz`` (a ``zoneinfo.ZoneInfo``, e.g.
    ``ZoneInfo("Europe/Berlin")``) is the zone they are in; the messages' ``sent_at`` are in
    UTC. Where the clocks changed, the export's order is kept: in the hour repeated when summer
    time ends, a time that goes back (a reply at 2:10 after a question at 2:50) and the times
    after it are its second pass; a time skipped when summer time begins (2:30 where 2:00 became
    3:00) is the moment the clocks moved forward. Each file is a chat of its own, ``channel``
    its stem (``WhatsApp Chat with Anna``) unless ``channel`` names one for all.

    A file larger than ``max_file_bytes`` (:data:`~graphfuse.indexing.MAX_CHAT_FILE_BYTES`,
    64 MiB), binary, or not a regular file is refused before it is read, with
    :class:`~graphfuse.InvalidInput` naming it.
    """
    files = [Path(paths)] if isinstance(paths, (str, os.PathLike)) else [Path(p) for p in paths]
    if not files:
        raise InvalidInput("read_whatsapp: no export file given")
    reader = SourceReader(max_bytes=max_file_bytes)
    chats: list[tuple[Path, list[tuple[re.Match[str], list[str]]]]] = []
    for file in files:
        if file.exists() and not file.is_file():  # (a named pipe would block the read)
            raise not_a_file(file)
        try:
            lines = reader.read(file).decode("utf-8-sig").splitlines()
        except Unreadable as bad:
            raise InvalidInput(f"{file}: cannot read the WhatsApp export: {bad.why}") from None
        except UnicodeDecodeError as exc:
            raise InvalidInput(f"{file}: cannot read the WhatsApp export: {exc}") from exc
        heads: list[tuple[re.Match[str], list[str]]] = []
        for line in lines:
            head = _HEAD.match(line)
            if head is not None:
                heads.append((head, []))
            elif heads:
                heads[-1][1].append(line)
        if not heads:
            raise InvalidInput(f"{file}: no line starts with a date and time; is it a WhatsApp 'Export chat' file?")
        chats.append((file, heads))
    order = _date_order(files, [h for _, heads in chats for h, _ in heads], day_first)
    messages = []
    for file, heads in chats:
        found = 0
        clock = _Clock(tz)
        for head, more in heads:
            said = _AUTHOR.match(head["rest"])
            if said is None or said["text"].startswith("\u200e"):
                continue  # a notice of the app, not a message (the iPhone export marks its notices so)
            text = _MARKS.sub("", "\n".join([said["text"], *more])).strip()
            if not text or _PLACEHOLDER.match(text):
                continue
            author = _MARKS.sub("", said["author"]).strip()
            try:
                sent = clock.utc(_local(file, head, order))
            except OverflowError as exc:  # (the last hours of 9999 west of UTC: no UTC time)
                raise InvalidInput(f"{file}: {head.group(0)[:40]!r}: not a time UTC can hold ({exc})") from exc
            messages.append(ChatMessage(sent, author, text, channel=channel or file.stem))
            found += 1
        if not found:
            raise InvalidInput(f"{file}: the export holds no message with an author")
    return messages


def _date_order(files: list[Path], heads: list[re.Match[str]], day_first: bool | None) -> str:
    """``"ymd"``, ``"dmy"`` or ``"mdy"``: how the exports write their dates."""
    where = str(files[0]) if len(files) == 1 else f"{len(files)} exports"
    if all(len(h["a"]) == 4 for h in heads):
        return "ymd"
    if day_first is not None:
        return "dmy" if day_first else "mdy"
    first = any(int(h["a"]) > 12 for h in heads)
    second = any(int(h["b"]) > 12 for h in heads)
    if first and second:
        raise InvalidInput(f"{where}: the dates read neither day-first nor month-first; give day_first")
    if first:
        return "dmy"
    if second or all(h["a"] == h["b"] for h in heads):
        return "mdy"
    raise InvalidInput(
        f"{where}: the dates (such as {heads[0]['a']}/{heads[0]['b']}/{heads[0]['c']}) read both day-first and "
        "month-first; give day_first=True or False (the phone's date format)"
    )


def _local(file: Path, head: re.Match[str], order: str) -> datetime:
    """The phone's wall-clock time of a message line (naive)."""
    a, b, c = int(head["a"]), int(head["b"]), int(head["c"])
    year, month, day = (a, b, c) if order == "ymd" else (c, b, a) if order == "dmy" else (c, a, b)
    if year < 100:
        year += 2000
    hour = int(head["h"])
    if head["ap"]:
        pm = head["ap"].lower().startswith("p")
        if not 1 <= hour <= 12:
            raise InvalidInput(f"{file}: {head.group(0)[:40]!r}: hour {hour} with AM/PM")
        hour = hour % 12 + (12 if pm else 0)
    try:
        return datetime(year, month, day, hour, int(head["m"]), int(head["s"] or 0))
    except ValueError as exc:
        raise InvalidInput(f"{file}: {head.group(0)[:40]!r}: not a date and time ({exc})") from exc


class _Clock:
    """The phone's wall-clock times of one export, read in file order, as UTC instants.

    An export lists its messages in the order they were sent, and two wall-clock times are
    read so that this order is kept where the clock changed: when summer time ends, the hour
    that the clocks repeat is read as its first pass until a time goes back within it (a
    reply at 2:10 after a question at 2:50), and from then on as its second pass; a time the
    clocks skipped when summer time began (2:30 where 2:00 became 3:00) is read as the
    moment they moved forward, so it sorts between the messages around it.
    """

    __slots__ = ("_before", "_tz")

    def __init__(self, tz: tzinfo) -> None:
        self._tz = tz
        # The last message of a repeated hour: its wall time, which pass it was read as, and the
        # moment the clocks went back (which names the repeated hour).
        self._before: tuple[datetime, int, datetime] | None = None

    def utc(self, local: datetime) -> datetime:
        first = local.replace(tzinfo=self._tz, fold=0).astimezone(timezone.utc)
        second = local.replace(tzinfo=self._tz, fold=1).astimezone(timezone.utc)
        if first == second:  # (the time of day exists once: nearly always)
            self._before = None
            return first
        if first > second:  # skipped: fold 0 reads it with the offset before the change, fold 1 after
            self._before = None
            return _change(second, first, self._tz)
        change = _change(first, second, self._tz)
        fold = 0
        if self._before is not None:
            wall, was, at = self._before
            if at == change and (was == 1 or local < wall):
                fold = 1
        self._before = (local, fold, change)
        return second if fold else first


def _change(early: datetime, late: datetime, tz: tzinfo) -> datetime:
    """When the clocks of ``tz`` changed between the UTC instants ``early`` and ``late`` (whose
    offsets differ): the first whole second with ``late``'s offset, found by bisection."""
    before = early.astimezone(tz).utcoffset()
    low, high = early, late
    while high - low > timedelta(seconds=1):
        middle = low + timedelta(seconds=(high - low) // timedelta(seconds=2))
        if middle.astimezone(tz).utcoffset() == before:
            low = middle
        else:
            high = middle
    return high

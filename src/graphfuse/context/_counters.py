"""Token counters: the protocol, tiktoken's encodings loaded offline, and a regex fallback."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import logging
import math
import os
import re
import tempfile
import threading
from pathlib import Path
from typing import Any

from .._core._errors import GraphFuseError, InvalidInput, NotFound, PluginError
from .._core._protocols import TokenCounter
from ..plugins import get_registry

__all__ = [
    "DEFAULT_COUNTER",
    "FALLBACK_COUNTER",
    "RegexTokenCounter",
    "TiktokenCounter",
    "TokenCounter",
    "checked_count",
    "get_token_counter",
]

logger = logging.getLogger("graphfuse.context")

DEFAULT_COUNTER = "cl100k_base"
"""The counter :func:`get_token_counter` returns when it can (tiktoken's ``cl100k_base``)."""

FALLBACK_COUNTER = "regex"
"""The counter used when tiktoken or its encoding file is not available offline."""


# tiktoken's own download location of each encoding, its SHA-256 and its pre-tokenisation
# pattern and special tokens (copied from tiktoken_ext.openai_public, which would download).
_BASE = "https://openaipublic.blob.core.windows.net/encodings/"
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|"""
    r"""\s+(?!\S)|\s"""
)
_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_ENCODINGS: dict[str, tuple[str, str, dict[str, int]]] = {
    "cl100k_base": (
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        _CL100K_PATTERN,
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
    "o200k_base": (
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        _O200K_PATTERN,
        {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
}

ENCODING_FILE_ENV = "GRAPHFUSE_TIKTOKEN_FILE"


def _candidate_files(encoding: str) -> list[Path]:
    """Where an offline copy of ``encoding`` may lie, in search order."""
    key = hashlib.sha1(f"{_BASE}{encoding}.tiktoken".encode()).hexdigest()
    out: list[Path] = []
    explicit = os.environ.get(ENCODING_FILE_ENV)
    if explicit and encoding == DEFAULT_COUNTER:
        out.append(Path(explicit))
    for env in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if os.environ.get(env):
            out.append(Path(os.environ[env]) / key)
    out.append(Path(tempfile.gettempdir()) / "data-gym-cache" / key)
    # llama-index-core ships cl100k_base and o200k_base in its wheel; find it without importing it.
    try:
        spec = importlib.util.find_spec("llama_index.core")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            out.append(Path(location) / "_static" / "tiktoken_cache" / key)
    return out


def _load_encoding(encoding: str) -> Any:
    try:
        import tiktoken
    except ImportError as exc:
        raise PluginError(
            f"token counter {encoding!r} needs tiktoken: pip install 'graphfuse[tokens]' "
            f"(or use the {FALLBACK_COUNTER!r} counter)"
        ) from exc
    expected, pattern, special = _ENCODINGS[encoding]
    tried = _candidate_files(encoding)
    for path in tried:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if hashlib.sha256(data).hexdigest() != expected:
            logger.warning("ignoring %s: not the expected %s file (SHA-256 mismatch)", path, encoding)
            continue
        pairs = (line.split() for line in data.splitlines() if line)
        ranks = {base64.b64decode(token): int(rank) for token, rank in pairs}
        return tiktoken.Encoding(name=encoding, pat_str=pattern, mergeable_ranks=ranks, special_tokens=special)
    raise PluginError(
        f"token counter {encoding!r}: no offline copy of the encoding file (GraphFuse never downloads it); "
        f"looked in: {', '.join(str(p) for p in tried)}. Install llama-index-core (it ships the file), set "
        f"{ENCODING_FILE_ENV} to a copy of {encoding}.tiktoken, or use the {FALLBACK_COUNTER!r} counter"
    )


class TiktokenCounter:
    """Counts tokens with a tiktoken encoding (``cl100k_base`` or ``o200k_base``), loaded offline.

    The encoding file is read from, in order: ``GRAPHFUSE_TIKTOKEN_FILE`` (cl100k_base only),
    ``TIKTOKEN_CACHE_DIR``/``DATA_GYM_CACHE_DIR``, tiktoken's default cache in the temporary
    directory, and the copy shipped inside ``llama-index-core``; its SHA-256 is checked. Nothing
    is downloaded: without a copy, building the counter raises :class:`~graphfuse.PluginError`.
    Special-token text such as ``<|endoftext|>`` is counted as ordinary text.
    """

    __slots__ = ("_encoding", "name")

    def __init__(self, encoding: str = DEFAULT_COUNTER) -> None:
        if encoding not in _ENCODINGS:
            raise InvalidInput(f"unknown tiktoken encoding {encoding!r}; known: {', '.join(_ENCODINGS)}")
        self.name = encoding
        """The encoding name, e.g. ``"cl100k_base"``."""
        self._encoding = _cached_encoding(encoding)

    def count(self, text: str) -> int:
        """The number of tokens of ``text``."""
        return len(self._encoding.encode_ordinary(text))

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The ``(start, end)`` character span of each token of ``text``, in order.

        So the counter is also a tokenizer for :class:`~graphfuse.indexing.TokenChunker`
        (``TokenChunker(max_tokens=256, tokenizer=TiktokenCounter())``): chunks then hold at most
        that many of this encoding's tokens, as the LLM counts them. A token that ends inside a
        character (a byte of a multi-byte character) has an empty span at that character's start.
        """
        tokens = self._encoding.encode_ordinary(text)
        if not tokens:
            return []
        _, starts = self._encoding.decode_with_offsets(tokens)
        ends = [*starts[1:], len(text)]
        return [(start, max(start, end)) for start, end in zip(starts, ends, strict=True)]

    def at_least(self, text: str) -> int:
        """A lower bound of :meth:`count` read without the tokenizer (a few times faster): for
        ``cl100k_base``, the number of runs of ASCII letters between ASCII non-letters (or the
        text's ends); 0 for other encodings.

        Why it holds: such a run is a whole run of letters (``\\p{L}``), and cl100k_base's
        pre-tokenizer puts the letters of at most one run of letters in one piece (the letter
        branch takes one non-letter and then a run of letters to its end, the contraction branch
        an apostrophe and one or two letters, the other branches no letters); every piece is
        encoded to at least one token. Context assembly uses it to reject a text that cannot fit
        without encoding it; tests check it against :meth:`count` on random and real texts.
        """
        if self.name != "cl100k_base":
            return 0
        # In the UTF-8 bytes, ASCII letters become "a", other ASCII " " and non-ASCII bytes "x":
        # the counted runs are the space-separated pieces made of "a" only (all pieces, less
        # those holding an "x": what is left of them once the "a"s are taken out).
        classes = text.encode("utf-8", "surrogatepass").translate(_LETTER_CLASSES)
        pieces = _pieces(classes)
        return pieces if text.isascii() else pieces - _pieces(classes.replace(b"a", b""))

    def __repr__(self) -> str:
        return f"TiktokenCounter({self.name!r})"


# Byte classes for at_least: ASCII letters "a", other ASCII bytes " ", bytes of non-ASCII characters "x".
_LETTER_CLASSES = bytes(
    ord("a") if (i < 0x80 and chr(i).isalpha()) else ord("x") if i >= 0x80 else ord(" ") for i in range(256)
)


def _pieces(classes: bytes) -> int:
    """``len(classes.split())`` for bytes that are ``a``, ``x`` or spaces, counted without splitting:
    a piece starts at the first byte, if not a space, and after each space followed by another byte."""
    return classes.count(b" a") + classes.count(b" x") + (classes[:1] not in (b"", b" "))


_encodings: dict[str, Any] = {}
_encodings_lock = threading.Lock()


def _cached_encoding(encoding: str) -> Any:
    found = _encodings.get(encoding)
    if found is None:
        with _encodings_lock:
            found = _encodings.get(encoding)
            if found is None:
                found = _encodings[encoding] = _load_encoding(encoding)
    return found


# One token per: a run of up to 3 digits, a letter run of Latin script (long words count one
# token per 4 letters, below), a single other letter (CJK, Cyrillic, ...), a punctuation mark.
_PIECE = re.compile(r"\d{1,3}|[A-Za-z\u00C0-\u024F]+|[^\W\d_A-Za-z\u00C0-\u024F]|[^\w\s]", re.UNICODE)


class RegexTokenCounter:
    """A tokenizer-free estimate: the fallback when tiktoken is not available.

    Splits the text into pieces (runs of up to three digits, Latin-script words, single
    characters of other scripts, punctuation marks); a word counts one token per started
    ``chars_per_token`` letters (at least one); the sum is multiplied by ``safety`` (1.1 by
    default) and rounded up, so that it over-counts English rather than under-counts: a budget
    met with it is almost always met with cl100k_base (its error: ``docs/context.md``, "Token
    counters"); other scripts count one token per character.
    """

    __slots__ = ("_chars", "_safety", "name")

    def __init__(self, *, chars_per_token: int = 4, safety: float = 1.1) -> None:
        if isinstance(chars_per_token, bool) or not isinstance(chars_per_token, int) or chars_per_token < 1:
            raise InvalidInput(f"chars_per_token must be a positive integer, got {chars_per_token!r}")
        if isinstance(safety, bool) or not isinstance(safety, (int, float)) or not (1.0 <= safety <= 4.0):
            raise InvalidInput(f"safety must be a number in [1, 4], got {safety!r}")
        self._chars = chars_per_token
        self._safety = float(safety)
        self.name = FALLBACK_COUNTER
        """``"regex"``."""

    def count(self, text: str) -> int:
        """The estimated number of tokens of ``text``."""
        total = 0
        chars = self._chars
        for m in _PIECE.finditer(text):
            n = m.end() - m.start()
            total += 1 if n <= chars else -(-n // chars)
        return math.ceil(total * self._safety)

    def __repr__(self) -> str:
        return f"RegexTokenCounter(chars_per_token={self._chars}, safety={self._safety})"


def checked_count(counter: TokenCounter, text: str) -> int:
    """``counter.count(text)``, with a counter failure or a bad value raised as ``PluginError``."""
    try:
        n = counter.count(text)
    except GraphFuseError:
        raise
    except Exception as exc:
        raise PluginError(f"token counter {_name_of(counter)!r} failed: {type(exc).__name__}: {exc}") from exc
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise PluginError(f"token counter {_name_of(counter)!r} returned {n!r}, not a non-negative integer")
    return n


def _name_of(counter: object) -> str:
    name = getattr(counter, "name", None)
    return name if isinstance(name, str) else type(counter).__name__


def check_counter(counter: object) -> TokenCounter:
    """``counter`` if it looks like a :class:`TokenCounter`, else ``InvalidInput``."""
    name = getattr(counter, "name", None)
    if not isinstance(name, str) or not name or not callable(getattr(counter, "count", None)):
        raise InvalidInput(f"{counter!r} is not a TokenCounter (needs a 'name' string and a 'count' method)")
    return counter  # type: ignore[return-value]


_default: TokenCounter | None = None
_default_lock = threading.Lock()


def get_token_counter(name: str | None = None, /, **options: Any) -> TokenCounter:
    """The token counter registered as ``name`` (through the plugin registry, kind ``token_counter``).

    Without a name: ``cl100k_base`` (tiktoken, offline) when tiktoken and the encoding file are
    available, else the ``regex`` estimate (:class:`RegexTokenCounter`); the choice is logged
    once and every :class:`~graphfuse.context.Context` names the counter it used. Built-in
    names: ``cl100k_base``, ``o200k_base`` (tiktoken) and ``regex``; plugins add more with the
    ``register_token_counters`` hook. Unknown names raise :class:`~graphfuse.NotFound`.
    """
    if name is not None:
        return check_counter(get_registry().create("token_counter", name, **options))
    if options:
        raise InvalidInput("options need a counter name")
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                try:
                    _default = check_counter(get_registry().create("token_counter", DEFAULT_COUNTER))
                except (PluginError, NotFound) as exc:
                    logger.info("token counting falls back to %r: %s", FALLBACK_COUNTER, exc)
                    _default = RegexTokenCounter()
    return _default

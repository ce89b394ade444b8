"""Checks that text and metadata can be stored: valid Unicode, JSON data, numbers in range.

Python strings may hold lone surrogates (``"\\ud800"``, or ``"\\udcff"`` from a non-UTF-8
command-line argument decoded with ``surrogateescape``) that no UTF-8 file or database can
hold; JSON has no ``NaN`` or infinity; and an integer beyond 64 bits (``10**400``) is written
by Python's ``json`` but read back by SQLite (and by most stores and clients) as a float, or
as infinity. All of them fail only when written or queried, so every writer checks its whole
input with these functions first and nothing is half-written.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import date, datetime, time
from pathlib import PurePath
from typing import Any

from ._errors import InvalidInput

__all__ = [
    "INT_MAX",
    "INT_MIN",
    "MAX_METADATA_BYTES",
    "MAX_METADATA_VALUES",
    "as_json_data",
    "check_json_data",
    "check_metadata_size",
    "check_number",
    "check_numbers",
    "check_text",
    "first_surrogate",
]

_SURROGATE = re.compile("[\ud800-\udfff]")

INT_MIN = -(2**63)
"""The smallest integer metadata may hold (a signed 64-bit integer, as SQLite and most stores keep)."""
INT_MAX = 2**63 - 1
"""The largest integer metadata may hold."""
_MAX_DEPTH = 64


def check_number(value: object, what: str) -> None:
    """Refuse a number no store keeps as it is: a float that is NaN or infinite, an integer
    outside the signed 64-bit range (:data:`INT_MIN`, :data:`INT_MAX`). Anything else passes.

    Raises :class:`~graphfuse.InvalidInput` naming ``what``.
    """
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidInput(f"{what} is {value!r}; JSON has no NaN or infinity, so it cannot be stored or filtered")
    elif isinstance(value, int) and not isinstance(value, bool) and not INT_MIN <= value <= INT_MAX:
        raise InvalidInput(
            f"{what} is an integer of {value.bit_length()} bits, out of range: metadata integers must fit in "
            "64 bits (-2**63 to 2**63-1); store a larger number as a string"
        )


def check_numbers(metadata: Mapping[str, Any], what: str) -> None:
    """:func:`check_number` on every value of ``metadata``, nested mappings and lists included
    (each container once, so shared or self-referencing ones end); other values pass.

    Raises :class:`~graphfuse.InvalidInput` naming ``what`` and the key.
    """
    for value in metadata.values():  # flat metadata of text and plain numbers: no walk
        kind = type(value)
        if not (
            kind is str
            or value is None
            or kind is bool
            or (kind is int and INT_MIN <= value <= INT_MAX)
            or (kind is float and value - value == 0.0)  # NaN and infinity give NaN
        ):
            break
    else:
        return
    found = _out_of_range(metadata, 0, set())
    if found is not None:
        keys, value = found
        check_number(value, f"{what}: metadata" + "".join(f"[{k!r}]" for k in reversed(keys)))


def _out_of_range(value: Any, depth: int, seen: set[int]) -> tuple[list[Any], Any] | None:
    """``(keys from the value up, value)`` of the first number :func:`check_number` refuses."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return None if INT_MIN <= value <= INT_MAX else ([], value)
    if isinstance(value, float):
        return None if math.isfinite(value) else ([], value)
    if isinstance(value, Mapping):
        items: Any = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    else:
        return None
    if depth > _MAX_DEPTH or id(value) in seen:
        return None
    seen.add(id(value))
    for key, item in items:
        found = _out_of_range(item, depth + 1, seen)
        if found is not None:
            found[0].append(key)
            return found
    return None


def first_surrogate(text: str) -> int | None:
    """The index of the first lone surrogate in ``text``, or ``None`` when it is valid Unicode."""
    match = _SURROGATE.search(text)
    return None if match is None else match.start()


def check_text(text: str, what: str) -> str:
    """Return ``text`` if it can be encoded as UTF-8; else ``InvalidInput`` naming ``what``."""
    if text.isascii():  # no surrogate in it: the common case without a regular-expression search
        return text
    at = first_surrogate(text)
    if at is not None:
        raise InvalidInput(
            f"{what}: not valid Unicode (lone surrogate {text[at]!r} at character {at}; "
            "was it decoded from bytes that are not UTF-8?)"
        )
    return text


def check_json_data(metadata: Mapping[str, Any], what: str) -> None:
    """Check ``metadata`` is JSON data: string keys, finite numbers, integers within 64 bits,
    valid Unicode, no cycles.

    Raises :class:`~graphfuse.InvalidInput` naming ``what`` and the offending key.
    """
    _check_value(dict(metadata), what, "metadata", 0)


def _check_value(value: Any, what: str, path: str, depth: int) -> None:
    if depth > 64:
        raise InvalidInput(f"{what}: {path} is nested too deeply (more than 64 levels)")
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, int | float):
        check_number(value, f"{what}: {path}")
        return
    if isinstance(value, str):
        check_text(value, f"{what}: {path}")
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidInput(f"{what}: {path} keys must be strings, got {key!r}")
            check_text(key, f"{what}: {path} key")
            _check_value(item, what, f"{path}[{key!r}]", depth + 1)
        return
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _check_value(item, what, f"{path}[{i}]", depth + 1)
        return
    raise InvalidInput(f"{what}: {path} is a {type(value).__name__}, not JSON data")


def as_json_data(value: Any, what: str = "metadata") -> Any:
    """``value`` with what readers hand over in metadata made JSON data: dates and times as ISO 8601
    strings, paths as text, tuples as lists, mapping keys as strings (as ``json.dumps`` writes them).
    Anything else is returned as it is, for :func:`check_json_data` to judge. A value that refers to
    itself or is too large (:func:`check_metadata_size`) raises :class:`~graphfuse.InvalidInput`
    naming ``what`` before anything is copied."""
    check_metadata_size(value, what)
    return _as_json(value)


def _as_json(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _as_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_as_json(v) for v in value]
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, PurePath):
        return str(value)
    return value


MAX_METADATA_VALUES = 10_000
"""The most values one record's metadata may hold, counting lists and mappings and counting a value
each time it is used (a YAML alias, a list shared by two keys): what it takes once written out."""

MAX_METADATA_BYTES = 65_536
"""The most bytes one record's metadata may take as UTF-8 JSON text (64 KiB; Pinecone allows
40 KB per vector). Metadata is stored with the document and each of its chunks, and filtered on;
large data belongs in the text."""

_MAX_DEPTH = 64


def check_metadata_size(value: Any, what: str) -> None:
    """Raise :class:`~graphfuse.InvalidInput` naming ``what`` when ``value`` (a record's metadata, as
    given) refers to itself, is nested more than 64 levels deep, holds more than
    :data:`MAX_METADATA_VALUES` values or takes more than :data:`MAX_METADATA_BYTES` bytes as JSON.

    The work is bounded: the walk stops at the first limit passed, so a small input whose shared
    parts expand to billions of values (a YAML "billion laughs") is refused at once.
    """
    _Measure(what).walk(value, 0)


class _Measure:
    """One walk over a metadata value: the values seen and the JSON bytes they take, so far."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.values = 0
        self.size = 0
        self.open: set[int] = set()  # the containers on the path being walked (a cycle returns to one)
        self.trail: list[Any] = []  # the keys and indexes of that path (named only in an error)

    def walk(self, value: Any, depth: int) -> None:
        self.values += 1
        if self.values > MAX_METADATA_VALUES:
            raise InvalidInput(
                f"{self.what}: metadata holds more than {MAX_METADATA_VALUES} values (a value used twice, "
                "as a YAML alias is, counts twice); keep large data in the text"
            )
        if isinstance(value, str):
            self.size += (len(value) if value.isascii() else _text_bytes(value)) + 2
        elif isinstance(value, Mapping | list | tuple):
            if depth >= _MAX_DEPTH:
                raise InvalidInput(f"{self.what}: {self.path()} is nested too deeply (more than {_MAX_DEPTH} levels)")
            if id(value) in self.open:
                raise InvalidInput(
                    f"{self.what}: {self.path()} refers to itself (metadata must be a tree, not a cycle)"
                )
            self.open.add(id(value))
            self.size += 2
            trail = self.trail
            if isinstance(value, Mapping):
                for key, item in value.items():
                    text = key if isinstance(key, str) else str(key)
                    self.size += (len(text) if text.isascii() else _text_bytes(text)) + 4
                    trail.append(key)
                    self.walk(item, depth + 1)
                    trail.pop()
            else:
                for i, item in enumerate(value):
                    self.size += 1
                    trail.append(i)
                    self.walk(item, depth + 1)
                    trail.pop()
            self.open.discard(id(value))
        elif isinstance(value, bool) or value is None:
            self.size += 5
        elif isinstance(value, int):
            self.size += value.bit_length() * 30103 // 100000 + 2  # (its decimal digits, without writing them)
        else:
            self.size += 32  # a float, a date, a path: short once written
        if self.size > MAX_METADATA_BYTES:
            raise InvalidInput(
                f"{self.what}: metadata takes more than {MAX_METADATA_BYTES} bytes as JSON; keep large data in the text"
            )

    def path(self) -> str:
        return "metadata" + "".join(f"[{i}]" if isinstance(i, int) else f"[{_shown(i)}]" for i in self.trail)


def _text_bytes(text: str) -> int:
    if len(text) > MAX_METADATA_BYTES:
        return len(text)  # (over the limit already: no need to encode it)
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _shown(key: Any) -> str:
    shown = repr(key)
    return shown if len(shown) <= 40 else shown[:37] + "..."

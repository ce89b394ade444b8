"""Checks that text and metadata can be stored: valid Unicode, JSON data, finite numbers.

Python strings may hold lone surrogates (``"\\ud800"``, or ``"\\udcff"`` from a non-UTF-8
command-line argument decoded with ``surrogateescape``) that no UTF-8 file or database can
hold; JSON has no ``NaN`` or infinity. Both fail only when written, so every writer checks
its whole input with these functions first and nothing is half-written.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import date, datetime, time
from pathlib import PurePath
from typing import Any

from ._errors import InvalidInput

__all__ = ["as_json_data", "check_json_data", "check_text", "first_surrogate"]

_SURROGATE = re.compile("[\ud800-\udfff]")


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
    """Check ``metadata`` is JSON data: string keys, finite numbers, valid Unicode, no cycles.

    Raises :class:`~graphfuse.InvalidInput` naming ``what`` and the offending key.
    """
    _check_value(dict(metadata), what, "metadata", 0)


def _check_value(value: Any, what: str, path: str, depth: int) -> None:
    if depth > 64:
        raise InvalidInput(f"{what}: {path} is nested too deeply (more than 64 levels)")
    if value is None or isinstance(value, bool | int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidInput(f"{what}: {path} is {value!r}; JSON has no NaN or infinity")
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


def as_json_data(value: Any) -> Any:
    """``value`` with what readers hand over in metadata made JSON data: dates and times as ISO 8601
    strings, paths as text, tuples as lists, mapping keys as strings (as ``json.dumps`` writes them).
    Anything else is returned as it is, for :func:`check_json_data` to judge."""
    if isinstance(value, Mapping):
        return {str(k): as_json_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [as_json_data(v) for v in value]
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, PurePath):
        return str(value)
    return value

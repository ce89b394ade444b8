"""Reading JSON-lines files: one object a line, errors naming ``file:line``."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ._errors import InvalidInput

__all__ = ["read_json_objects"]


def read_json_objects(
    path: Path, *, lines: Iterable[tuple[int, bytes]] | None = None
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(where, object)`` for each non-blank line; ``where`` is ``"<path>:<line>"``.

    ``lines`` are ``(line number, bytes)`` of ``path`` read by the caller (bounded, from a file it
    opened); by default the file is opened and read line by line. A line that is not UTF-8, not
    valid JSON, or not a JSON object, raises :class:`InvalidInput`.
    """
    if lines is not None:
        yield from _objects(path, lines)
        return
    with path.open("rb") as fh:
        yield from _objects(path, enumerate(fh, 1))


def _objects(path: Path, lines: Iterable[tuple[int, bytes]]) -> Iterator[tuple[str, dict[str, Any]]]:
    for lineno, raw in lines:
        where = f"{path}:{lineno}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput(
                f"{where}: not valid UTF-8 (byte {raw[exc.start]:#04x} at column {exc.start + 1})"
            ) from None
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{where}: not valid JSON ({exc.msg})") from exc
        if not isinstance(obj, dict):
            raise InvalidInput(f"{where}: a line must be a JSON object")
        yield where, obj

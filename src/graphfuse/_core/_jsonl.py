"""Reading JSON-lines files: one object a line, errors naming ``file:line``, within bounds."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ._errors import InvalidInput

__all__ = ["MAX_JSONL_FILE_BYTES", "MAX_JSONL_LINE_BYTES", "read_json_objects", "shown_size"]

MAX_JSONL_FILE_BYTES = 1 << 30
"""The largest JSON-lines file :func:`read_json_objects` reads by default (1 GiB: an evaluation
corpus of a few million passages), told from its size before it is read."""

MAX_JSONL_LINE_BYTES = 8 << 20
"""The longest line :func:`read_json_objects` reads by default (8 MiB, one record), read in
bounded pieces: a longer one is refused without being held whole."""

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def read_json_objects(
    path: Path,
    *,
    lines: Iterable[tuple[int, bytes]] | None = None,
    max_file_bytes: int = MAX_JSONL_FILE_BYTES,
    max_line_bytes: int = MAX_JSONL_LINE_BYTES,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(where, object)`` for each non-blank line; ``where`` is ``"<path>:<line>"``.

    ``lines`` are ``(line number, bytes)`` of ``path`` read by the caller (bounded, from a file it
    opened); by default the file is opened (only a regular file, never blocking on a named pipe)
    and streamed line by line: a file larger than ``max_file_bytes`` is refused from its size and
    a line longer than ``max_line_bytes`` when it is met, with :class:`InvalidInput` naming the
    file (and line). A line that is not UTF-8, not valid JSON, or not a JSON object, raises
    :class:`InvalidInput`.
    """
    if lines is None:
        lines = _bounded_lines(path, max_file_bytes, max_line_bytes)
    yield from _objects(path, lines)


def shown_size(size: int) -> str:
    """``size`` bytes as a person reads it: ``512 bytes``, ``16 MiB``, ``2.5 GiB``."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            value = size / scale
            return f"{value:.0f} {unit}" if value == int(value) or value >= 100 else f"{value:.1f} {unit}"
    return f"{size} bytes"


def _bounded_lines(path: Path, max_file_bytes: int, max_line_bytes: int) -> Iterator[tuple[int, bytes]]:
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot be read: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InvalidInput(f"{path}: not a regular file (a named pipe, a device or a folder)")
        too_large = f"over the {shown_size(max_file_bytes)} limit for one JSON-lines file"
        if info.st_size > max_file_bytes:
            raise InvalidInput(f"{path}: {shown_size(info.st_size)}, {too_large}")
        lineno = total = 0
        while True:
            try:
                raw = fh.readline(max_line_bytes + 1)
            except OSError as exc:
                raise InvalidInput(f"{path}: cannot be read: {exc.strerror or exc}") from None
            if not raw:
                return
            lineno += 1
            total += len(raw)
            if len(raw) > max_line_bytes:
                raise InvalidInput(
                    f"{path}:{lineno}: a line longer than {shown_size(max_line_bytes)}, the limit for one line"
                )
            if total > max_file_bytes:  # (it grew while being read)
                raise InvalidInput(f"{path}: {too_large}")
            yield lineno, raw


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
        except RecursionError:
            raise InvalidInput(f"{where}: not valid JSON (nested too deeply)") from None
        if not isinstance(obj, dict):
            raise InvalidInput(f"{where}: a line must be a JSON object")
        yield where, obj

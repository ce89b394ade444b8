"""Reading JSON-lines files: one object a line, errors naming ``file:line``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ._errors import InvalidInput

__all__ = ["read_json_objects"]


def read_json_objects(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(where, object)`` for each non-blank line; ``where`` is ``"<path>:<line>"``.

    A line that is not valid JSON, or not a JSON object, raises :class:`InvalidInput`.
    """
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"{where}: not valid JSON ({exc.msg})") from exc
            if not isinstance(obj, dict):
                raise InvalidInput(f"{where}: a line must be a JSON object")
            yield where, obj

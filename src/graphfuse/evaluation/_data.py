"""Evaluation data: a corpus (JSONL passages) and queries with gold passage ids."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .._core._errors import InvalidInput
from .._core._jsonl import MAX_JSONL_FILE_BYTES, MAX_JSONL_LINE_BYTES, read_json_objects, shown_size
from ..indexing import SourceRecord, read_sources

__all__ = [
    "MAX_JSONL_FILE_BYTES",
    "MAX_JSONL_LINE_BYTES",
    "EvalQuery",
    "check_gold",
    "load_corpus",
    "load_queries",
    "strip_titles",
]


@dataclass(frozen=True)
class EvalQuery:
    """One evaluation question and the ids of the passages needed to answer it.

    ``type`` (e.g. ``"multi_hop"``) and ``temporal`` (the question names a time or asks about
    order in time) are optional tags; ``graphfuse eval`` reports metrics per tag value too.
    """

    id: str
    question: str
    gold_ids: tuple[str, ...]
    type: str | None = None
    temporal: bool | None = None
    answer: str | None = None

    def tags(self) -> dict[str, str]:
        """The query's tags as ``{"type": ..., "temporal": "true"/"false"}`` (absent ones left out)."""
        out: dict[str, str] = {}
        if self.type is not None:
            out["type"] = self.type
        if self.temporal is not None:
            out["temporal"] = "true" if self.temporal else "false"
        return out


def load_corpus(
    path: str | os.PathLike[str],
    *,
    max_file_bytes: int = MAX_JSONL_FILE_BYTES,
    max_line_bytes: int = MAX_JSONL_LINE_BYTES,
) -> list[SourceRecord]:
    """Read a ``.jsonl`` corpus (``{"id", "text", "title"?, ...}`` a line).

    A line without id or text, bad JSON, or a repeated id raises
    :class:`~graphfuse.InvalidInput` naming the file and line (or listing the ids); an empty
    corpus too. A corpus larger than ``max_file_bytes`` (:data:`MAX_JSONL_FILE_BYTES`, 1 GiB) is
    refused from its size, a line longer than ``max_line_bytes`` (:data:`MAX_JSONL_LINE_BYTES`,
    8 MiB) when it is met (streamed, never held whole).
    """
    p = Path(path)
    if p.suffix.lower() != ".jsonl":
        raise InvalidInput(f"{p}: the corpus must be a .jsonl file")
    try:
        info = os.stat(p)
    except OSError:
        info = None  # (read_sources names what is wrong)
    if info is not None and stat.S_ISREG(info.st_mode) and info.st_size > max_file_bytes:
        raise InvalidInput(
            f"{p}: {shown_size(info.st_size)}, over the {shown_size(max_file_bytes)} limit for a corpus file "
            "(load_corpus(..., max_file_bytes=...) raises it)"
        )
    records = list(read_sources([p], max_file_bytes=max_line_bytes))
    if not records:
        raise InvalidInput(f"{p}: the corpus is empty")
    return records


def load_queries(
    path: str | os.PathLike[str],
    *,
    max_file_bytes: int = MAX_JSONL_FILE_BYTES,
    max_line_bytes: int = MAX_JSONL_LINE_BYTES,
) -> list[EvalQuery]:
    """Read ``{"id", "question", "gold_ids", "type"?, "temporal"?}`` lines.

    Malformed lines (also a ``type`` that is not a non-empty string or a ``temporal`` that
    is not a boolean) and empty files raise ``InvalidInput`` naming the file and line; so do a
    file larger than ``max_file_bytes`` (1 GiB, told from its size), a line longer than
    ``max_line_bytes`` (8 MiB, streamed) and a path that is not a regular file (a named pipe is
    never opened for reading).
    """
    p = Path(path)
    if not p.exists():
        raise InvalidInput(f"{p}: no such queries file")
    out: list[EvalQuery] = []
    seen: set[str] = set()
    for where, obj in read_json_objects(p, max_file_bytes=max_file_bytes, max_line_bytes=max_line_bytes):
        qid, question, gold = obj.get("id"), obj.get("question"), obj.get("gold_ids")
        if not isinstance(qid, str) or not qid.strip():
            raise InvalidInput(f"{where}: missing or empty 'id'")
        if not isinstance(question, str) or not question.strip():
            raise InvalidInput(f"{where}: missing or empty 'question'")
        if not isinstance(gold, list) or not gold or not all(isinstance(g, str) and g for g in gold):
            raise InvalidInput(f"{where}: 'gold_ids' must be a non-empty list of passage ids")
        if qid in seen:
            raise InvalidInput(f"{where}: query id {qid!r} appears twice")
        kind, temporal = obj.get("type"), obj.get("temporal")
        if kind is not None and (not isinstance(kind, str) or not kind.strip()):
            raise InvalidInput(f"{where}: 'type' must be a non-empty string, got {kind!r}")
        if temporal is not None and not isinstance(temporal, bool):
            raise InvalidInput(f"{where}: 'temporal' must be true or false, got {temporal!r}")
        seen.add(qid)
        answer = obj.get("answer")
        known = answer if isinstance(answer, str) else None
        out.append(EvalQuery(qid, question, tuple(dict.fromkeys(gold)), kind, temporal, known))
    if not out:
        raise InvalidInput(f"{p}: the queries file has no queries")
    return out


def strip_titles(records: Sequence[SourceRecord]) -> list[SourceRecord]:
    """Title-stripped copies: no ``title`` (nor metadata ``"title"``), no ``links``, and a text
    that starts with its title on a line of its own (``"Title\ntext"``) without that line.

    A title that is the subject of the first sentence ("Teutberga (died 875) was ...") is
    part of the text and stays. Ids, other metadata and ``created_at`` stay, so gold ids
    still match: the corpus a retriever sees when documents carry no entity titles.
    """
    out: list[SourceRecord] = []
    for r in records:
        text = r.text
        title = (r.title or "").strip()
        if title and text.startswith(title):
            head, newline, rest = text[len(title) :].partition("\n")
            if newline and not head.strip() and rest.strip():
                text = rest.lstrip()
        metadata = {k: v for k, v in r.metadata.items() if k != "title"}
        out.append(SourceRecord(r.id, text, metadata=metadata, created_at=r.created_at))
    return out


def check_gold(
    queries: Sequence[EvalQuery], corpus_ids: set[str], *, allow_missing: bool
) -> tuple[list[EvalQuery], list[str]]:
    """Queries whose gold ids are all in the corpus, and warnings about the others.

    A gold id missing from the corpus raises :class:`~graphfuse.InvalidInput` with counts,
    unless ``allow_missing``: then those queries are left out and a warning says how many.
    """
    bad = [q for q in queries if any(g not in corpus_ids for g in q.gold_ids)]
    if not bad:
        return list(queries), []
    missing = sorted({g for q in bad for g in q.gold_ids if g not in corpus_ids})
    shown = ", ".join(map(repr, missing[:5])) + (" ..." if len(missing) > 5 else "")
    message = (
        f"{len(bad)} of {len(queries)} queries have gold ids missing from the corpus "
        f"({len(missing)} distinct ids: {shown})"
    )
    if not allow_missing:
        raise InvalidInput(message + "; fix the data or pass --allow-missing-gold to leave those queries out")
    bad_ids = {q.id for q in bad}
    kept = [q for q in queries if q.id not in bad_ids]
    if not kept:
        raise InvalidInput(message + "; no query is left to evaluate")
    return kept, [message + ": left out of the metrics"]

"""Bundled sample data: a 400-passage slice of 2WikiMultihopQA with 30 questions (Apache-2.0).

Used by ``graphfuse demo`` and the tests; see ``sample/ATTRIBUTION.md`` for source and licence.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

__all__ = ["SampleQuestion", "sample_corpus", "sample_questions"]


@dataclass(frozen=True)
class SampleQuestion:
    """A sample question, its answer and the ids of the passages needed to answer it."""

    id: str
    question: str
    answer: str
    gold_ids: tuple[str, ...]
    type: str | None = None


@contextmanager
def sample_corpus() -> Iterator[Path]:
    """A filesystem path to the sample ``corpus.jsonl`` (valid inside the ``with`` block)."""
    with resources.as_file(resources.files(__name__) / "sample" / "corpus.jsonl") as path:
        yield path


def sample_questions() -> list[SampleQuestion]:
    """The sample questions, in file order."""
    text = (resources.files(__name__) / "sample" / "queries.jsonl").read_text(encoding="utf-8")
    out = []
    for line in text.splitlines():
        if line.strip():
            row = json.loads(line)
            out.append(
                SampleQuestion(row["id"], row["question"], row["answer"], tuple(row["gold_ids"]), row.get("type"))
            )
    return out

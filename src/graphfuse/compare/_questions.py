"""Comparison questions: an id, the question and (optionally) gold answers."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .._core._errors import InvalidInput
from .._core._jsonl import MAX_JSONL_FILE_BYTES, MAX_JSONL_LINE_BYTES, read_json_objects

__all__ = ["CompareQuestion", "check_questions", "load_questions"]


@dataclass(frozen=True)
class CompareQuestion:
    """One question; ``answers`` holds the acceptable gold answers (empty: none known)."""

    id: str
    question: str
    answers: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id.strip():
            raise InvalidInput(f"a question id must be a non-empty string, got {self.id!r}")
        if not isinstance(self.question, str) or not self.question.strip():
            raise InvalidInput(f"question {self.id!r}: the question must be a non-empty string")
        answers = (self.answers,) if isinstance(self.answers, str) else tuple(self.answers)
        if not all(isinstance(a, str) and a.strip() for a in answers):
            raise InvalidInput(f"question {self.id!r}: gold answers must be non-empty strings")
        object.__setattr__(self, "answers", answers)

    @property
    def has_gold(self) -> bool:
        """Whether a gold answer is known (the judge and EM/F1 need one)."""
        return bool(self.answers)


def _answers(where: str, obj: dict[str, object]) -> tuple[str, ...]:
    answer, answers = obj.get("answer"), obj.get("answers")
    if answer is not None and answers is not None:
        raise InvalidInput(f"{where}: give 'answer' or 'answers', not both")
    if answer is not None:
        if not isinstance(answer, str) or not answer.strip():
            raise InvalidInput(f"{where}: 'answer' must be a non-empty string")
        return (answer,)
    if answers is None:
        return ()
    if not isinstance(answers, list) or not all(isinstance(a, str) and a.strip() for a in answers):
        raise InvalidInput(f"{where}: 'answers' must be a list of non-empty strings")
    return tuple(dict.fromkeys(answers))


def load_questions(
    path: str | os.PathLike[str],
    *,
    max_file_bytes: int = MAX_JSONL_FILE_BYTES,
    max_line_bytes: int = MAX_JSONL_LINE_BYTES,
) -> list[CompareQuestion]:
    """Read ``{"id", "question", "answer"?}`` lines (or ``"answers": [...]``, several acceptable ones).

    Questions without a gold answer are kept (they are answered, not judged). Bad lines, a
    repeated id and an empty file raise :class:`~graphfuse.InvalidInput` naming the place; so
    do a file larger than ``max_file_bytes`` (1 GiB, told from its size), a line longer than
    ``max_line_bytes`` (8 MiB, streamed) and a path that is not a regular file.
    """
    p = Path(path)
    if not p.exists():
        raise InvalidInput(f"{p}: no such questions file")
    out: list[CompareQuestion] = []
    seen: set[str] = set()
    for where, obj in read_json_objects(p, max_file_bytes=max_file_bytes, max_line_bytes=max_line_bytes):
        qid, question = obj.get("id"), obj.get("question")
        if not isinstance(qid, str) or not qid.strip():
            raise InvalidInput(f"{where}: missing or empty 'id'")
        if not isinstance(question, str) or not question.strip():
            raise InvalidInput(f"{where}: missing or empty 'question'")
        if qid in seen:
            raise InvalidInput(f"{where}: question id {qid!r} appears twice")
        seen.add(qid)
        out.append(CompareQuestion(qid, question, _answers(where, obj)))
    if not out:
        raise InvalidInput(f"{p}: the questions file is empty")
    return out


def check_questions(questions: Sequence[CompareQuestion]) -> list[CompareQuestion]:
    """Validate a list of questions (unique ids); a copy."""
    out = list(questions)
    if not out:
        raise InvalidInput("no questions to compare on")
    seen: set[str] = set()
    for q in out:
        if not isinstance(q, CompareQuestion):
            raise InvalidInput(f"questions must be CompareQuestion objects, got {type(q).__name__}")
        if q.id in seen:
            raise InvalidInput(f"question id {q.id!r} appears twice")
        seen.add(q.id)
    return out

"""LLM-as-judge: a verdict of five grades on 0-10 (score, correctness, completeness, clarity, relevance).

The judge grades one answer at a time against the gold answer. It never sees which pipeline
produced the answer (blind labels). A verdict that is not valid JSON, lacks a field or has a
value outside 0-10 is asked for again; after ``attempts`` tries the judge raises
:class:`JudgeFailed`, which the comparison records as a judge failure - never as a zero.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._core._errors import GraphFuseError, InvalidInput
from ._generation import Generation, Generator, describe_generator

__all__ = ["CRITERIA", "JUDGE_PROMPT", "VERDICT_SCHEMA", "Judge", "JudgeFailed", "Verdict", "parse_verdict"]

CRITERIA = ("score", "correctness", "completeness", "clarity", "relevance")
"""The numeric fields of a verdict, each on 0-10."""

JUDGE_PROMPT = (
    "You are an impartial grader. You compare an answer to a question with the ground-truth answer.\n"
    "Grade each criterion from 0 (worst) to 10 (best):\n"
    "- correctness: does the answer state the same facts as the ground truth, without errors?\n"
    "- completeness: does it cover everything the ground truth contains?\n"
    "- clarity: is it clear and concise?\n"
    "- relevance: does it address the question asked?\n"
    "- score: your overall grade; an answer that contradicts the ground truth scores low however well written.\n"
    "Do not reward length. Reply with one JSON object only, no other text:\n"
    '{"score": int, "correctness": int, "completeness": int, "clarity": int, "relevance": int, '
    '"reasoning": "one or two sentences"}'
)
"""The judge's system prompt: the five criteria and the JSON reply it must give."""

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        # 0-10 is checked here, not in the schema: strict structured outputs reject minimum/maximum.
        **{name: {"type": "integer", "description": "0 (worst) to 10 (best)"} for name in CRITERIA},
        "reasoning": {"type": "string"},
    },
    "required": [*CRITERIA, "reasoning"],
    "additionalProperties": False,
}
"""The JSON schema of a verdict, sent as a structured-output format where the generator supports it."""

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)


class JudgeFailed(GraphFuseError):
    """The judge gave no valid verdict after all its attempts.

    ``problems`` says what was wrong with each attempt; ``raw`` is the last reply (if any).
    """

    def __init__(self, message: str, *, problems: Sequence[str], raw: str | None) -> None:
        super().__init__(message)
        self.problems = tuple(problems)
        self.raw = raw


@dataclass(frozen=True)
class Verdict:
    """A judge's grades (0-10 each, means over ``repeats`` runs), its reasoning and whether it passed.

    ``passed`` is ``score >= threshold`` of the :class:`Judge`. ``score_spread`` is the
    standard deviation of ``score`` over the repeats (0.0 for one run); ``attempts`` counts
    the judge calls, retries of malformed verdicts included.
    """

    score: float
    correctness: float
    completeness: float
    clarity: float
    relevance: float
    reasoning: str
    passed: bool
    repeats: int = 1
    score_spread: float = 0.0
    attempts: int = 1
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "score": self.score,
            "correctness": self.correctness,
            "completeness": self.completeness,
            "clarity": self.clarity,
            "relevance": self.relevance,
            "reasoning": self.reasoning,
            "passed": self.passed,
            "repeats": self.repeats,
            "score_spread": self.score_spread,
            "attempts": self.attempts,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verdict:
        """The inverse of :meth:`to_dict`."""
        return cls(**{k: data[k] for k in cls.__dataclass_fields__})


def parse_verdict(text: str) -> dict[str, Any]:
    """Check a judge's reply: a JSON object with the five grades (numbers in 0-10) and ``reasoning``.

    A reply wrapped in a Markdown code fence is accepted. Raises
    :class:`~graphfuse.InvalidInput` saying what is wrong.
    """
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        shown = text if len(text) <= 80 else text[:77] + "..."
        raise InvalidInput(f"the verdict is not valid JSON ({exc.msg} at character {exc.pos}): {shown!r}") from exc
    if not isinstance(data, dict):
        raise InvalidInput(f"the verdict must be a JSON object, got {type(data).__name__}")
    missing = [name for name in (*CRITERIA, "reasoning") if name not in data]
    if missing:
        raise InvalidInput(f"the verdict lacks {', '.join(missing)}")
    out: dict[str, Any] = {}
    for name in CRITERIA:
        value = data[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise InvalidInput(f"the verdict's {name} must be a number, got {value!r}")
        if not 0 <= value <= 10:
            raise InvalidInput(f"the verdict's {name} is {value}, outside 0-10")
        out[name] = float(value)
    if not isinstance(data["reasoning"], str):
        raise InvalidInput(f"the verdict's reasoning must be a string, got {type(data['reasoning']).__name__}")
    out["reasoning"] = data["reasoning"]
    return out


class Judge:
    """Grades answers against gold answers with a generator (the judge model may differ from the answerer).

    - ``threshold``: a verdict passes when its ``score`` is at least this (0-10, default 7).
    - ``attempts``: judge calls per verdict before giving up (malformed or out-of-range replies
      are asked for again); then :class:`JudgeFailed` is raised.
    - ``repeats``: independent verdicts per answer, averaged; ``score_spread`` reports their spread.
    - ``max_tokens``: the judge's completion cap; a verdict cut short fails validation, so keep
      it generous.
    - ``structured``: ask for the JSON schema as a structured output when the generator
      supports it (``supports_json_schema``); otherwise the prompt alone asks for JSON.

    :attr:`settings` records all of this (and the prompt's hash) for the report.
    """

    def __init__(
        self,
        generator: Generator,
        *,
        threshold: float = 7.0,
        attempts: int = 3,
        repeats: int = 1,
        max_tokens: int = 512,
        structured: bool = True,
        prompt: str = JUDGE_PROMPT,
    ) -> None:
        if not callable(getattr(generator, "agenerate", None)):
            raise InvalidInput(f"the judge needs a generator with an async agenerate(), got {type(generator).__name__}")
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 10:
            raise InvalidInput(f"threshold must be a number in 0-10, got {threshold!r}")
        for name, value in (("attempts", attempts), ("repeats", repeats), ("max_tokens", max_tokens)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidInput(f"{name} must be an int >= 1, got {value!r}")
        if not isinstance(prompt, str) or not prompt.strip():
            raise InvalidInput("prompt must be a non-empty string")
        self.generator = generator
        self.threshold = float(threshold)
        self.attempts = attempts
        self.repeats = repeats
        self.max_tokens = max_tokens
        self.structured = bool(structured) and getattr(generator, "supports_json_schema", False) is True
        self.prompt = prompt

    @property
    def model(self) -> str:
        """The judge model's name."""
        return describe_generator(self.generator)

    @property
    def settings(self) -> dict[str, Any]:
        """The judge's settings, as the report records them."""
        return {
            "model": self.model,
            "threshold": self.threshold,
            "attempts": self.attempts,
            "repeats": self.repeats,
            "max_tokens": self.max_tokens,
            "structured_output": self.structured,
            "prompt_sha256": hashlib.sha256(self.prompt.encode()).hexdigest()[:16],
            "blind": True,
        }

    def messages(self, question: str, answer: str, gold: Sequence[str]) -> list[dict[str, str]]:
        """The judge's chat messages for one answer (no pipeline name: the judge grades blind)."""
        truth = gold[0] if len(gold) == 1 else " | ".join(gold)
        user = f"Question: {question}\n\nGround truth: {truth}\n\nAnswer to grade: {answer}"
        return [{"role": "system", "content": self.prompt}, {"role": "user", "content": user}]

    async def _call(self, messages: list[dict[str, str]]) -> Generation:
        if self.structured:
            schema = {"name": "verdict", "schema": VERDICT_SCHEMA, "strict": True}
            call: Any = self.generator.agenerate
            generation: Generation = await call(messages, max_tokens=self.max_tokens, json_schema=schema)
            return generation
        return await self.generator.agenerate(messages, max_tokens=self.max_tokens)

    async def _one(self, messages: list[dict[str, str]]) -> tuple[dict[str, Any], int, int, int]:
        problems: list[str] = []
        raw: str | None = None
        prompt_tokens = completion_tokens = 0
        for attempt in range(1, self.attempts + 1):
            generation = await self._call(messages)
            raw = generation.text
            prompt_tokens += generation.prompt_tokens
            completion_tokens += generation.completion_tokens
            try:
                return parse_verdict(raw), attempt, prompt_tokens, completion_tokens
            except InvalidInput as exc:
                problems.append(f"attempt {attempt}: {exc}")
        raise JudgeFailed(
            f"the judge ({self.model}) gave no valid verdict in {self.attempts} attempts: " + "; ".join(problems),
            problems=problems,
            raw=raw,
        )

    async def ajudge(self, question: str, answer: str, gold: str | Sequence[str]) -> Verdict:
        """Grade ``answer`` to ``question`` against ``gold`` (one answer or several acceptable ones).

        Raises :class:`JudgeFailed` when no valid verdict came back; provider errors
        (:class:`~graphfuse.RateLimited` after retries, ...) propagate.
        """
        golds = [gold] if isinstance(gold, str) else list(gold)
        if not golds or not all(isinstance(g, str) and g.strip() for g in golds):
            raise InvalidInput("the judge needs a non-empty gold answer")
        messages = self.messages(question, answer, golds)
        runs = [await self._one(messages) for _ in range(self.repeats)]
        grades = {name: statistics.fmean(r[0][name] for r in runs) for name in CRITERIA}
        scores = [r[0]["score"] for r in runs]
        return Verdict(
            **grades,
            reasoning=runs[0][0]["reasoning"],
            passed=grades["score"] >= self.threshold,
            repeats=self.repeats,
            score_spread=statistics.pstdev(scores) if len(scores) > 1 else 0.0,
            attempts=sum(r[1] for r in runs),
            prompt_tokens=sum(r[2] for r in runs),
            completion_tokens=sum(r[3] for r in runs),
        )

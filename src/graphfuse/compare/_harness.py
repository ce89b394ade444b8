"""Running answer pipelines over questions, judging the answers, aggregating the numbers."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
import statistics
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._core._errors import GraphFuseError, InvalidInput, RequestTimedOut
from .._core._sync import sync_form
from .._providers._retry import counting_retries
from ._bertscore import BERTScore
from ._cache import CompareCache, cache_key
from ._generation import Generator, describe_generator
from ._judge import CRITERIA, Judge, JudgeFailed, Verdict
from ._metrics import contains_answer, exact_match, token_f1
from ._pipelines import Answer, AnswerPipeline
from ._questions import CompareQuestion, check_questions

__all__ = [
    "FAILURE_KINDS",
    "AnswerResult",
    "ComparisonReport",
    "acompare_pipelines",
    "compare_pipelines",
    "failure_kind",
]

Progress = Callable[[int, int], None]

FAILURE_KINDS = ("malformed", "timeout", "error")
"""How an answer or a verdict failed: ``malformed`` (no valid verdict after every attempt),
``timeout`` (the model did not answer in time, retries included) or ``error`` (anything else)."""


def failure_kind(error: BaseException) -> str:
    """The :data:`FAILURE_KINDS` entry of ``error``."""
    if isinstance(error, JudgeFailed):
        return "malformed"
    if isinstance(error, (RequestTimedOut, TimeoutError)):  # DeadlineExceeded is a TimeoutError
        return "timeout"
    return "error"


@dataclass
class AnswerResult:
    """One pipeline's outcome on one question.

    ``error`` is set (and ``answer`` is ``None``) when the pipeline or generator failed;
    ``judge_error`` when the judge gave no valid verdict; ``error_kind`` and
    ``judge_error_kind`` say how (:data:`FAILURE_KINDS`). ``retries`` and ``judge_retries``
    count the requests sent again (``retried_timeouts`` those after a timeout). Metrics are
    ``None`` when they do not apply (no gold answer, no context, no answer).
    """

    answer: Answer | None = None
    error: str | None = None
    exact_match: float | None = None
    f1: float | None = None
    bertscore_f1: float | None = None
    context_contains_answer: bool | None = None
    verdict: Verdict | None = None
    judge_error: str | None = None
    cached: bool = False
    error_kind: str | None = None
    judge_error_kind: str | None = None
    retries: int = 0
    retried_timeouts: int = 0
    judge_retries: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The per-question entry of the report's JSON (``results[NAME]``)."""
        a = self.answer
        return {
            "answer": None if a is None else a.text,
            "prompt_tokens": None if a is None else a.prompt_tokens,
            "completion_tokens": None if a is None else a.completion_tokens,
            "judge": None if self.verdict is None else self.verdict.to_dict(),
            "judge_error": self.judge_error,
            "judge_error_kind": self.judge_error_kind,
            "error": self.error,
            "error_kind": self.error_kind,
            "retries": self.retries,
            "retried_timeouts": self.retried_timeouts,
            "judge_retries": self.judge_retries,
            "usage_source": None if a is None else a.usage_source,
            "retrieval_ms": None if a is None else a.retrieval_latency_s * 1000,
            "generation_ms": None if a is None else a.generation_latency_s * 1000,
            "exact_match": self.exact_match,
            "f1": self.f1,
            "bertscore_f1": self.bertscore_f1,
            "context_contains_answer": self.context_contains_answer,
            "answer_chars": None if a is None else len(a.text),
            "context": None if a is None or a.context is None else dict(a.context),
            "cached": self.cached,
        }


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _p50(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


@dataclass
class ComparisonReport:
    """The outcome of a comparison: per pipeline aggregates and every answer.

    :meth:`to_dict` gives the JSON that ``graphfuse compare --json`` writes (``docs/compare.md``); the
    markdown table and PNG charts come from :func:`graphfuse.compare.write_report`.
    ``interrupted`` is true when the run was stopped before every task finished: ``results``
    then holds the finished ones only (``not_run`` in each summary counts the rest).
    """

    pipelines: tuple[str, ...]
    questions: tuple[CompareQuestion, ...]
    results: dict[tuple[str, str], AnswerResult]
    settings: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    interrupted: bool = False

    def result(self, question_id: str, pipeline: str) -> AnswerResult:
        """The outcome of ``pipeline`` on question ``question_id`` (``KeyError`` if it did not run)."""
        return self.results[(question_id, pipeline)]

    def summary(self, name: str) -> dict[str, Any]:
        """The aggregate numbers of pipeline ``name`` (the report's ``pipelines[NAME]``)."""
        outcomes = [self.results[(q.id, name)] for q in self.questions if (q.id, name) in self.results]
        answered = [r for r in outcomes if r.answer is not None]
        answers = [r.answer for r in answered if r.answer is not None]
        ems = [r.exact_match for r in answered if r.exact_match is not None]
        f1s = [r.f1 for r in answered if r.f1 is not None]
        berts = [r.bertscore_f1 for r in answered if r.bertscore_f1 is not None]
        contained = [float(r.context_contains_answer) for r in answered if r.context_contains_answer is not None]
        verdicts = [r.verdict for r in outcomes if r.verdict is not None]
        failures = sum(r.judge_error is not None for r in outcomes)
        kinds = {kind: sum(r.judge_error_kind == kind for r in outcomes) for kind in FAILURE_KINDS}
        judged = bool(self.settings.get("judge")) and any(q.has_gold for q in self.questions)
        judge: dict[str, Any] | None = None
        if judged:
            judge = {c: _mean([getattr(v, c) for v in verdicts]) for c in CRITERIA}
            judge["pass_rate"] = _mean([float(v.passed) for v in verdicts])
            judge["failures"] = failures
            judge["failures_malformed"] = kinds["malformed"]
            judge["failures_timeout"] = kinds["timeout"]
            judge["failures_other"] = kinds["error"]
            judge["retries"] = sum(r.judge_retries for r in outcomes)
            judge["verdicts"] = len(verdicts)
            judge["score_spread_mean"] = _mean([v.score_spread for v in verdicts])
        sources = sorted({a.usage_source for a in answers})
        total = [(a.retrieval_latency_s + a.generation_latency_s) * 1000 for a in answers]
        return {
            "prompt_tokens_mean": _mean([a.prompt_tokens for a in answers]),
            "completion_tokens_mean": _mean([a.completion_tokens for a in answers]),
            "latency_p50_ms": _p50(total),
            "exact_match": _mean(ems),
            "f1": _mean(f1s),
            "bertscore_f1": _mean(berts),
            "judge": judge,
            "retrieval_p50_ms": _p50([a.retrieval_latency_s * 1000 for a in answers]),
            "generation_p50_ms": _p50([a.generation_latency_s * 1000 for a in answers]),
            "context_tokens_mean": _mean(
                [float(a.context["tokens"]) for a in answers if a.context is not None and "tokens" in a.context]
            ),
            "context_contains_answer": _mean(contained),
            "answer_chars_mean": _mean([len(a.text) for a in answers]),
            "usage_source": sources[0] if len(sources) == 1 else ("mixed" if sources else None),
            "answers": len(answers),
            "errors": sum(r.error is not None for r in outcomes),
            "errors_timeout": sum(r.error_kind == "timeout" for r in outcomes),
            "retries": sum(r.retries for r in outcomes),
            "retried_timeouts": sum(r.retried_timeouts for r in outcomes),
            "not_run": len(self.questions) - len(outcomes),
        }

    def to_dict(self) -> dict[str, Any]:
        """``{"pipelines": {NAME: {...}}, "questions": [{"id", "question", "answer", "results": {...}}], ...}``."""
        return {
            "pipelines": {name: self.summary(name) for name in self.pipelines},
            "questions": [
                {
                    "id": q.id,
                    "question": q.question,
                    "answer": q.answers[0] if len(q.answers) == 1 else (list(q.answers) or None),
                    "results": {
                        name: (self.results[(q.id, name)].to_dict() if (q.id, name) in self.results else None)
                        for name in self.pipelines
                    },
                }
                for q in self.questions
            ],
            "settings": self.settings,
            "notes": list(self.notes),
            "elapsed_s": self.elapsed_s,
            "interrupted": self.interrupted,
        }


def _check_pipelines(pipelines: Mapping[str, AnswerPipeline]) -> dict[str, AnswerPipeline]:
    if not isinstance(pipelines, Mapping) or not pipelines:
        raise InvalidInput("pipelines must be a non-empty mapping of name -> answer pipeline")
    out: dict[str, AnswerPipeline] = {}
    for name, pipeline in pipelines.items():
        if not isinstance(name, str) or not name.strip():
            raise InvalidInput(f"a pipeline name must be a non-empty string, got {name!r}")
        if not callable(getattr(pipeline, "aanswer", None)) or not isinstance(
            getattr(pipeline, "fingerprint", None), str
        ):
            raise InvalidInput(
                f"pipeline {name!r} is a {type(pipeline).__name__}, not an answer pipeline "
                "(needs fingerprint and aanswer(); see graphfuse.compare.context_pipeline)"
            )
        out[name] = pipeline
    return out


def _positive_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInput(f"{name} must be an int >= 1, got {value!r}")
    return value


async def acompare_pipelines(
    questions: Sequence[CompareQuestion],
    pipelines: Mapping[str, AnswerPipeline],
    generator: Generator,
    *,
    judge: Judge | None = None,
    bertscore: BERTScore | None = None,
    concurrency: int = 4,
    max_tokens: int = 256,
    cache: CompareCache | None = None,
    progress: Progress | None = None,
    seed: int = 0,
    stop: asyncio.Event | None = None,
) -> ComparisonReport:
    """Answer every question with every pipeline, then judge and score the answers.

    - ``generator`` answers (any :class:`Generator`); ``judge`` grades against gold answers
      (its generator may be another model). Without a judge, or for questions without a gold
      answer, judging and EM/F1 are skipped and the report's ``notes`` say so.
    - ``bertscore`` (a :class:`BERTScore`) scores every answer against the gold answers
      (BERTScore F1, the best over several golds) once all answers are in, in one batch
      (after a ``stop``, the answers that finished). Its model loads before the first task.
    - ``concurrency`` bounds the (question, pipeline) tasks in flight; they run in an order
      shuffled with ``seed``, so no pipeline systematically runs first (rate limits, warm
      caches).
    - ``cache`` (a :class:`CompareCache`) stores answers by pipeline name and fingerprint,
      question, model and ``max_tokens``, and verdicts by judge settings, question and answer:
      a second run makes no model call for what is stored.
    - ``progress(done, total)`` is called once before the first task (``done`` 0, or what the
      cache answered at once) and as tasks finish, so the total is known from the start.
    - ``stop``: when this event is set (a signal handler, a user's button), no further task
      starts, the tasks in flight are cancelled and the report of what finished is returned
      with ``interrupted`` set (everything finished is in the cache too).

    A :class:`~graphfuse.GraphFuseError` of one answer (rate limited after the retries, a
    context that does not fit the window, an empty answer) is recorded in that answer's
    ``error`` and the run goes on; anything else propagates.
    """
    started = time.perf_counter()
    items = check_questions(questions)
    named = _check_pipelines(pipelines)
    if not callable(getattr(generator, "agenerate", None)):
        raise InvalidInput(f"generator must have an async agenerate(), got {type(generator).__name__}")
    if judge is not None and not isinstance(judge, Judge):
        raise InvalidInput(f"judge must be a graphfuse.compare.Judge, got {type(judge).__name__}")
    if bertscore is not None and not isinstance(bertscore, BERTScore):
        raise InvalidInput(f"bertscore must be a graphfuse.compare.BERTScore, got {type(bertscore).__name__}")
    _positive_int(concurrency, "concurrency")
    _positive_int(max_tokens, "max_tokens")
    if cache is not None and not isinstance(cache, CompareCache):
        raise InvalidInput(f"cache must be a graphfuse.compare.CompareCache, got {type(cache).__name__}")
    if stop is not None and not isinstance(stop, asyncio.Event):
        raise InvalidInput(f"stop must be an asyncio.Event, got {type(stop).__name__}")

    if bertscore is not None:
        await bertscore.warm_up()
    model = describe_generator(generator)
    results: dict[tuple[str, str], AnswerResult] = {}
    tasks = [(q, name) for q in items for name in named]
    random.Random(seed).shuffle(tasks)
    gate = asyncio.Semaphore(concurrency)
    done = 0

    async def run(question: CompareQuestion, name: str) -> None:
        nonlocal done
        async with gate:
            if stop is not None and stop.is_set():
                return
            results[(question.id, name)] = await _one(question, name, named[name], generator, model)
        done += 1
        if progress is not None:
            progress(done, len(tasks))

    async def _one(
        question: CompareQuestion, name: str, pipeline: AnswerPipeline, generator: Generator, model: str
    ) -> AnswerResult:
        outcome = AnswerResult()
        key = cache_key("answer", name, pipeline.fingerprint, question.id, question.question, model, max_tokens)
        stored = None if cache is None else await cache.get(key)
        if stored is not None:
            outcome.answer, outcome.cached = Answer.from_dict(stored), True
        else:
            with counting_retries() as count:
                try:
                    outcome.answer = await pipeline.aanswer(question.question, generator, max_tokens=max_tokens)
                except GraphFuseError as exc:
                    outcome.error = f"{type(exc).__name__}: {exc}"
                    outcome.error_kind = failure_kind(exc)
                finally:
                    outcome.retries, outcome.retried_timeouts = count.retries, count.timeouts
            if outcome.answer is None:
                return outcome
            if cache is not None:
                await cache.set(key, outcome.answer.to_dict())
        answer = outcome.answer
        if not question.has_gold:
            return outcome
        outcome.exact_match = exact_match(answer.text, question.answers)
        outcome.f1 = token_f1(answer.text, question.answers)
        if answer.context is not None:
            outcome.context_contains_answer = contains_answer(str(answer.context.get("text", "")), question.answers)
        if judge is not None:
            await _judge(question, name, answer, outcome)
        return outcome

    async def _judge(question: CompareQuestion, name: str, answer: Answer, outcome: AnswerResult) -> None:
        assert judge is not None
        settings = {k: v for k, v in judge.settings.items() if k != "threshold"}
        key = cache_key("verdict", name, settings, question.id, question.question, question.answers, answer.text)
        stored = None if cache is None else await cache.get(key)
        if stored is not None:
            verdict = Verdict.from_dict(stored)
            # The threshold is applied afresh: changing it needs no new verdicts.
            outcome.verdict = dataclasses.replace(verdict, passed=verdict.score >= judge.threshold)
            return
        with counting_retries() as count:
            try:
                outcome.verdict = await judge.ajudge(question.question, answer.text, question.answers)
            except JudgeFailed as exc:
                outcome.judge_error, outcome.judge_error_kind = str(exc), failure_kind(exc)
            except GraphFuseError as exc:
                outcome.judge_error, outcome.judge_error_kind = f"{type(exc).__name__}: {exc}", failure_kind(exc)
            finally:
                outcome.judge_retries = count.retries
        if outcome.verdict is None:
            return
        if cache is not None:
            await cache.set(key, outcome.verdict.to_dict())

    if progress is not None:
        progress(0, len(tasks))
    await _run_all([run(q, name) for q, name in tasks], stop)
    interrupted = stop is not None and stop.is_set() and len(results) < len(tasks)
    if bertscore is not None:
        await _score_bert(bertscore, items, tuple(named), results)

    notes: list[str] = []
    if interrupted:
        notes.append(
            f"interrupted: {len(results)} of {len(tasks)} answers finished and are reported here; the rest did "
            "not run (run the same command again: finished answers and verdicts come from the cache)"
        )
    missing = [q.id for q in items if not q.has_gold]
    if missing:
        what = "judging and exact match/F1 were skipped for them" if judge else "exact match/F1 were skipped for them"
        shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        notes.append(f"{len(missing)} of {len(items)} questions have no gold answer ({shown}): {what}")
    if judge is None:
        notes.append("no judge was given: answers were not graded by an LLM")
    if bertscore is not None:
        notes.append(
            f"BERTScore F1 with {bertscore.model_id} (layer {bertscore.num_layers}, idf "
            f"{'on' if bertscore.idf else 'off'}), not rescaled: not comparable with published rescaled scores"
        )
    for name in named:
        outcomes = [results[(q.id, name)] for q in items if (q.id, name) in results]
        errors = [r.error for r in outcomes if r.error]
        if errors:
            timeouts = sum(r.error_kind == "timeout" for r in outcomes)
            notes.append(f"{name}: {len(errors)} answers failed ({timeouts} timed out), e.g. {errors[0]}")
        failed = [r for r in outcomes if r.judge_error is not None]
        if failed:
            kinds = ", ".join(
                f"{n} {kind}" for kind in FAILURE_KINDS if (n := sum(r.judge_error_kind == kind for r in failed))
            )
            notes.append(
                f"{name}: the judge failed on {len(failed)} answers ({kinds}; counted as failures, not as zeros)"
            )
        retries, judge_retries = sum(r.retries for r in outcomes), sum(r.judge_retries for r in outcomes)
        if retries or judge_retries:
            timed = sum(r.retried_timeouts for r in outcomes)
            notes.append(
                f"{name}: {retries} answer requests were sent again ({timed} after a timeout), "
                f"{judge_retries} judge requests"
            )
    settings: dict[str, Any] = {
        "generator": model,
        "endpoint": _plain(getattr(generator, "endpoint", None)),
        "timeout_s": _plain(getattr(generator, "timeout", None)),
        "max_tokens": max_tokens,
        "concurrency": concurrency,
        "order": f"shuffled (seed {seed})",
        "judge": None if judge is None else judge.settings,
        "bertscore": None if bertscore is None else bertscore.settings,
        "pipelines": {name: _settings_of(p) for name, p in named.items()},
        "cache": None if cache is None else str(cache.path),
    }
    return ComparisonReport(
        tuple(named),
        tuple(items),
        results,
        settings,
        notes,
        elapsed_s=time.perf_counter() - started,
        interrupted=interrupted,
    )


compare_pipelines = sync_form(acompare_pipelines)
"""Sync form of :func:`acompare_pipelines`: same arguments, result and errors, no event loop needed."""


async def _run_all(work: list[Coroutine[Any, Any, None]], stop: asyncio.Event | None) -> None:
    """Run every task; with ``stop``, cancel what is in flight once it is set."""
    tasks = [asyncio.ensure_future(w) for w in work]
    if not tasks:
        return
    together = asyncio.gather(*tasks)
    if stop is None:
        await together
        return
    stopped = asyncio.ensure_future(stop.wait())
    waiting: set[asyncio.Future[Any]] = {together, stopped}
    try:
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:  # the caller was cancelled: so is the work
        together.cancel()
        raise
    finally:
        stopped.cancel()
    if together.done():
        together.result()  # an unexpected error of a task propagates
        return
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    with contextlib.suppress(asyncio.CancelledError):
        await together


def _plain(value: object) -> str | float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return value if isinstance(value, str) else None


async def _score_bert(
    scorer: BERTScore,
    items: Sequence[CompareQuestion],
    names: Sequence[str],
    results: dict[tuple[str, str], AnswerResult],
) -> None:
    """BERTScore F1 of every answer to a question with gold answers, in one batch."""
    scored = [(q, results[(q.id, n)]) for q in items if q.has_gold for n in names if (q.id, n) in results]
    scored = [(q, r) for q, r in scored if r.answer is not None]
    candidates = [r.answer.text if r.answer is not None else "" for _, r in scored]
    values = await asyncio.to_thread(scorer.score, candidates, [q.answers for q, _ in scored])
    for (_, outcome), value in zip(scored, values, strict=True):
        outcome.bertscore_f1 = None if value is None else value.f1


def _settings_of(pipeline: AnswerPipeline) -> dict[str, Any]:
    settings = getattr(pipeline, "settings", None)
    out = dict(settings) if isinstance(settings, Mapping) else {"kind": type(pipeline).__name__}
    out["fingerprint"] = pipeline.fingerprint
    return {k: (v if v is None or isinstance(v, (str, int, float, bool)) else str(v)) for k, v in out.items()}

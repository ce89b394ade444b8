"""The pipeline: an immutable sequence of stages and a scorer."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence, Sized
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, TypeVar

from opentelemetry.trace import ProxyTracerProvider, Status, StatusCode, get_tracer_provider

from .._core import _deadline
from .._core._capabilities import ChecksOptions, ExplainsScores, SignalStage
from .._core._errors import DeadlineExceeded, EmptyPipeline, GraphFuseError, InvalidInput, NoCandidates, StageFailed
from .._core._filters import FilterLike
from .._core._observability import (
    PIPELINE_DURATION,
    PIPELINE_RESULTS,
    STAGE_CANDIDATES,
    STAGE_DURATION,
    logger,
    tracer,
)
from .._core._protocols import Scorer, Stage
from .._core._sync import sync_form
from .._core._types import Candidate, Query, Result, check_signal
from ._passages import Passages, cap_per_document, check_granularity, check_max_per_document
from ._result_cache import ResultCache

__all__ = ["Pipeline", "StageRunContext", "run_signal_stage", "run_stage", "run_stages"]

_T = TypeVar("_T")
_L = TypeVar("_L", bound=Sized)


@dataclass
class StageRunContext:
    """The per-run context handed to every stage (the :class:`graphfuse.RunContext` a pipeline makes).

    Hosts running stages outside a pipeline (:func:`run_stage`) create one per run.
    """

    values: dict[str, Any] = field(default_factory=dict)

    def remaining(self) -> float | None:
        """Seconds left before the run's deadline (``graphfuse.deadline``), or ``None``."""
        return _deadline.remaining()


def _check_top_k(top_k: object) -> int:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k <= 0:
        raise InvalidInput(f"top_k must be a positive integer, got {top_k!r}")
    return top_k


class Pipeline:
    """Stages run in order over shared candidates; the scorer ranks the survivors.

    A pipeline is immutable and safe to share across threads and tasks: every run has its
    own candidates and context. ``retrieve`` is the sync form of ``aretrieve`` and also works
    inside a running event loop.
    """

    __slots__ = (
        "_cache_identity",
        "_cache_name",
        "_passages",
        "_require_results",
        "_result_cache",
        "_scorer",
        "_stages",
    )

    def __init__(
        self,
        stages: Sequence[Stage],
        scorer: Scorer | Callable[[Mapping[str, float]], float] | None = None,
        *,
        require_results: bool = False,
        passages: Passages | None = None,
    ) -> None:
        # The default scorer, loaded with the first pipeline: `import graphfuse` stays at its cost.
        from ..scoring import WeightedScorer, as_scorer

        if passages is not None and not isinstance(passages, Passages):
            raise InvalidInput(f"passages must be a graphfuse.Passages, got {type(passages).__name__}")

        stages = tuple(stages)
        if not stages:
            raise EmptyPipeline("a pipeline needs at least one stage")
        names: list[str] = []
        for stage in stages:
            name = getattr(stage, "name", None)
            if not isinstance(name, str) or not name or not callable(getattr(stage, "run", None)):
                raise InvalidInput(f"{stage!r} is not a Stage (needs a 'name' and an async 'run')")
            names.append(name)
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise InvalidInput(f"stage names must be unique in a pipeline, repeated: {sorted(dup)}")
        self._stages: tuple[Stage, ...] = stages
        self._scorer: Scorer = WeightedScorer() if scorer is None else as_scorer(scorer)
        self._require_results = require_results
        self._passages = passages
        self._result_cache: ResultCache | None = None
        self._cache_name: str | None = None
        self._cache_identity = ""

    @property
    def passages(self) -> Passages | None:
        """How results become passages (:class:`~graphfuse.Passages`; the presets attach one), or ``None``.

        Without one, results are what the stages ranked (a pipeline built by hand keeps its
        behaviour); ``max_per_document`` still caps passages per document when given.
        """
        return self._passages

    def with_passages(self, passages: Passages | None) -> Pipeline:
        """A new pipeline with the same stages and scorer and another passage selection (``None``: none)."""
        same = Pipeline(self._stages, self._scorer, require_results=self._require_results, passages=passages)
        return same.with_result_cache(self._result_cache, name=self._cache_name)

    @property
    def stages(self) -> tuple[Stage, ...]:
        """The stages, in run order."""
        return self._stages

    @property
    def scorer(self) -> Scorer:
        """The scorer that produces the final score."""
        return self._scorer

    def with_scorer(self, scorer: Scorer) -> Pipeline:
        """A new pipeline with the same stages and another scorer."""
        same = Pipeline(self._stages, scorer, require_results=self._require_results, passages=self._passages)
        return same.with_result_cache(self._result_cache, name=self._cache_name)

    @property
    def result_cache(self) -> ResultCache | None:
        """The :class:`~graphfuse.ResultCache` results are kept in (:meth:`with_result_cache`), or ``None``."""
        return self._result_cache

    def with_result_cache(self, cache: ResultCache | None, *, name: str | None = None) -> Pipeline:
        """A new pipeline with the same stages, scorer and passages whose results are kept in ``cache``.

        A repeated request (same query, filter, options, ``top_k``, ``min_score`` and shaping, the
        stores unchanged) is then answered from the cache for its TTL; ``aretrieve(..., cache=False)``
        skips it for one call. Without ``name`` only this pipeline object reads its entries; with one
        (``"preset:standard"``), every pipeline of that name and configuration does, in any process
        sharing the cache store and namespace. ``None`` detaches the cache. See docs/stages.md,
        "Result cache".
        """
        same = Pipeline(self._stages, self._scorer, require_results=self._require_results, passages=self._passages)
        if cache is None:
            return same
        if not isinstance(cache, ResultCache):
            raise InvalidInput(f"cache must be a graphfuse.ResultCache, got {type(cache).__name__}")
        parts: list[object] = [*self._stages, self._scorer, self._passages, self._require_results]
        same._cache_identity = cache.pipeline_identity(name, parts)
        same._result_cache = cache
        same._cache_name = name
        return same

    def __repr__(self) -> str:
        names = " -> ".join(s.name for s in self._stages)
        return f"Pipeline({names}; scorer={type(self._scorer).__name__})"

    async def aretrieve(
        self,
        query: str | Query,
        top_k: int = 10,
        min_score: float | None = None,
        *,
        filter: FilterLike | None = None,
        options: Mapping[str, Mapping[str, Any]] | None = None,
        timeout: float | None = None,
        granularity: str | None = None,
        max_per_document: int | None = None,
        max_document_tokens: int | None = None,
        cache: bool = True,
    ) -> list[Result]:
        """Run every stage, score, and return the ``top_k`` best results (best first).

        ``filter`` is a metadata filter applied by every stage that reads a store; ``options``
        are per-call stage options keyed by stage name; ``timeout`` (seconds) bounds the whole
        run and raises :class:`DeadlineExceeded`. A failing stage raises :class:`StageFailed`,
        which is also of the stage's error's class when that is a GraphFuse error
        (``except RateLimited`` catches a rerank stage's 429).

        With a passage selection (:attr:`passages`, which every preset has), a result is a
        passage of at most the indexer's chunk size naming its document
        (:attr:`Result.document_id`, :attr:`Result.document_title`), at most
        ``max_per_document`` of one document (default 2); ``granularity="document"`` returns
        whole documents instead, each cut to ``max_document_tokens`` tokens (default 2048). The
        defaults are the :class:`~graphfuse.Passages`' own.

        With a :attr:`result_cache`, a repeated request is answered from it; ``cache=False`` runs
        the stages for this call (and does not store the results).
        """
        q = Query.of(query, filter=filter, options=options)
        if not isinstance(cache, bool):
            raise InvalidInput(f"cache must be True or False, got {cache!r}")
        _check_top_k(top_k)
        if granularity is not None:
            check_granularity(granularity)
            if self._passages is None:
                raise InvalidInput(
                    "granularity needs a pipeline with a passage selection (graphfuse.Passages): "
                    "build it from a preset, or pass passages= to Pipeline"
                )
        if max_per_document is not None:
            check_max_per_document(max_per_document)
        if max_document_tokens is not None:
            check_max_per_document(max_document_tokens, "max_document_tokens")
        grain = (granularity, max_per_document, max_document_tokens)
        if min_score is not None and (
            isinstance(min_score, bool) or not isinstance(min_score, (int, float)) or not math.isfinite(min_score)
        ):
            raise InvalidInput(f"min_score must be a finite number, got {min_score!r}")
        unknown = set(q.options) - {s.name for s in self._stages}
        if unknown:
            raise InvalidInput(f"options given for stages not in this pipeline: {sorted(unknown)}")
        for stage in self._stages:
            # A stage that can validate its per-call options does so before any I/O.
            if stage.name in q.options and isinstance(stage, ChecksOptions):
                stage.check_options(q.options[stage.name])
        with _deadline.deadline(timeout):
            left = _deadline.remaining()
            try:
                if left is None:
                    return await self._cached_run(q, top_k, min_score, grain, cache)
                return await asyncio.wait_for(
                    self._cached_run(q, top_k, min_score, grain, cache), timeout=max(left, 0.0)
                )
            except DeadlineExceeded:
                raise
            except asyncio.TimeoutError as exc:
                raise DeadlineExceeded(f"retrieval did not finish within {timeout} s") from exc

    retrieve = sync_form(aretrieve)
    """Sync form of :meth:`aretrieve`: same arguments, result and errors, no event loop needed."""

    async def _cached_run(
        self,
        q: Query,
        top_k: int,
        min_score: float | None,
        grain: tuple[str | None, int | None, int | None],
        cache: bool,
    ) -> list[Result]:
        if self._result_cache is None or not cache:
            return await self._run(q, top_k, min_score, grain)
        shape = (top_k, min_score, *grain)
        return await self._result_cache.fetch(
            self._cache_identity, q, shape, lambda: self._run(q, top_k, min_score, grain)
        )

    async def _run(
        self,
        q: Query,
        top_k: int,
        min_score: float | None,
        grain: tuple[str | None, int | None, int | None] = (None, None, None),
    ) -> list[Result]:
        started = time.perf_counter()
        context = StageRunContext()
        candidates: list[Candidate] = []
        with tracer.start_as_current_span("graphfuse.pipeline") as span:
            span.set_attribute("graphfuse.stages", [s.name for s in self._stages])
            span.set_attribute("graphfuse.top_k", top_k)
            for stage in self._stages:
                candidates = await self._run_stage(stage, q, candidates, context)
            scores, shares = _scored(self._scorer, candidates)
            order = sorted(range(len(candidates)), key=lambda i: (-scores[i], candidates[i].id))
            ranked = [
                Result(candidates[i].document, float(scores[i]), candidates[i].signals, shares[i])
                for i in order
                if min_score is None or scores[i] >= min_score
            ]
            granularity, per_document, document_tokens = grain
            if self._passages is not None:
                results = await self._passages.select(
                    q,
                    ranked,
                    top_k,
                    granularity=granularity,
                    max_per_document=per_document,
                    max_document_tokens=document_tokens,
                    context=context,
                )
            elif per_document is not None:
                results = cap_per_document(ranked, per_document)[:top_k]
            else:
                results = ranked[:top_k]
            elapsed = time.perf_counter() - started
            PIPELINE_DURATION.record(elapsed)
            PIPELINE_RESULTS.record(len(results))
            span.set_attribute("graphfuse.results", len(results))
            logger.debug("pipeline finished: %d results in %.2f ms", len(results), elapsed * 1000)
            if not results and self._require_results:
                raise NoCandidates(f"no results for query {q.text[:80]!r}")
            return results

    async def _run_stage(
        self, stage: Stage, q: Query, candidates: list[Candidate], context: StageRunContext
    ) -> list[Candidate]:
        return await run_stage(stage, q, candidates, context)


async def run_stage(
    stage: Stage, query: Query, candidates: Sequence[Candidate], context: StageRunContext | None = None
) -> list[Candidate]:
    """Run one stage outside a :class:`Pipeline`, exactly as a pipeline runs it.

    The same log lines, metrics (``graphfuse_stage_duration_seconds``,
    ``graphfuse_stage_candidates``) and tracing span (``graphfuse.stage.<name>``); the output
    checked the same way (Candidates, unique ids); any failure but cancellation, a deadline or a
    :class:`StageFailed` raised as :class:`StageFailed` naming the stage (of the cause's class
    too when it is a GraphFuse error: ``except RateLimited`` catches it). ``context`` is the
    per-run context (a fresh one when ``None``): pass the same one to stages of one run.
    """
    return await _run_stage(stage, query, candidates, StageRunContext() if context is None else context)


async def run_stages(
    stages: Sequence[Stage], query: Query, candidates: Sequence[Candidate], context: StageRunContext | None = None
) -> list[Candidate]:
    """Run ``stages`` in order over ``candidates`` (one shared context), as :func:`run_stage` runs each."""
    ctx = StageRunContext() if context is None else context
    out = list(candidates)
    for stage in stages:
        out = await _run_stage(stage, query, out, ctx)
    return out


def _tracing() -> bool:
    """Whether spans can be recorded: an OpenTelemetry tracer provider is set (in code or the environment).

    Without one every span is a no-op; a stage run then skips creating and entering it (the
    same logs and metrics), which is most of the cost of a small stage's bookkeeping.
    """
    return not isinstance(get_tracer_provider(), ProxyTracerProvider)


def _scored(scorer: Scorer, candidates: list[Candidate]) -> tuple[Sequence[float], list[dict[str, float]]]:
    """The scorer's scores and shares of the candidates, inside the run's ``graphfuse.scoring`` span
    (the spec's ``[Scoring]``: one per pipeline run, after the stages' spans)."""
    with tracer.start_as_current_span("graphfuse.scoring") if _tracing() else nullcontext() as span:
        if span is not None:
            span.set_attribute("graphfuse.scorer", type(scorer).__name__)
            span.set_attribute("graphfuse.candidates", len(candidates))
        try:
            scores = scorer.score(candidates)
            if len(scores) != len(candidates):
                who = type(scorer).__name__
                raise GraphFuseError(f"scorer {who} returned {len(scores)} scores for {len(candidates)} candidates")
            shares: list[dict[str, float]] = (
                scorer.explain(candidates) if isinstance(scorer, ExplainsScores) else [{} for _ in candidates]
            )
        except Exception as exc:
            if span is not None:
                span.record_exception(exc)
                span.set_status(Status(StatusCode.ERROR, str(exc)))
            raise
    return scores, shares


def _checked(out: list[Candidate]) -> list[Candidate]:
    # The common case in one pass at C speed: Candidates (not subclasses) with distinct ids.
    if all(type(c) is Candidate for c in out) and len({c.id for c in out}) == len(out):
        return out
    seen: set[str] = set()
    for c in out:
        if not isinstance(c, Candidate):
            raise InvalidInput(f"returned {type(c).__name__}, not a Candidate")
        if c.id in seen:
            raise InvalidInput(f"returned document {c.id!r} twice")
        seen.add(c.id)
    return out


async def _run_stage(
    stage: Stage, q: Query, candidates: Sequence[Candidate], context: StageRunContext
) -> list[Candidate]:
    async def run() -> list[Candidate]:
        return _checked(list(await stage.run(q, tuple(candidates), context)))

    return await _observed(stage.name, len(candidates), run)


async def _observed(name: str, count_in: int, run: Callable[[], Awaitable[_L]]) -> _L:
    """``await run()`` as one stage run: debug logs, duration and count metrics, a span when
    tracing is configured, and any failure but cancellation/deadline raised as ``StageFailed``
    (which keeps a GraphFuse error's class: ``StageFailed(name, RateLimited(...))`` is a ``RateLimited``)."""
    started = time.perf_counter()
    logger.debug("stage %s start: %d candidates", name, count_in)
    # (No span at all without a tracer provider: creating the no-op one costs per call.)
    with tracer.start_as_current_span(f"graphfuse.stage.{name}") if _tracing() else nullcontext() as span:
        if span is not None:
            span.set_attribute("graphfuse.stage", name)
            span.set_attribute("graphfuse.candidates_in", count_in)
        try:
            out = await run()
        except (asyncio.CancelledError, DeadlineExceeded, StageFailed):
            raise
        except Exception as exc:
            if span is not None:
                span.record_exception(exc)
                span.set_status(Status(StatusCode.ERROR, str(exc)))
            logger.warning("stage %s failed: %s", name, exc)
            raise StageFailed(name, exc) from exc
        if span is not None:
            span.set_attribute("graphfuse.candidates_out", len(out))
    return _finished(name, started, len(out), out)


def _finished(name: str, started: float, count: int, out: _T) -> _T:
    elapsed = time.perf_counter() - started
    STAGE_DURATION.record(elapsed, {"stage": name})
    STAGE_CANDIDATES.record(count, {"stage": name})
    logger.debug("stage %s end: %d candidates in %.2f ms", name, count, elapsed * 1000)
    return out


async def run_signal_stage(
    stage: SignalStage,
    query: Query,
    ids: Sequence[str],
    values: Sequence[Any],
    context: StageRunContext | None = None,
) -> list[float]:
    """Run a :class:`~graphfuse.hosts.SignalStage` on plain values: one signal value per id, in order.

    ``values[i]`` is ``stage.signal_input`` read from the record with id ``ids[i]`` (ids
    distinct, as candidates' are). What :func:`run_stage` would set as the stage's signal on
    candidates built from those records, with the same log lines, metrics, tracing span and
    error semantics (a failure raised as :class:`StageFailed` naming the stage); each value is
    checked as a signal (a float in [0, 1]). For hosts that keep their own records (LlamaIndex
    nodes, LangChain documents): no :class:`~graphfuse.Document` or
    :class:`~graphfuse.Candidate` is built.
    """
    if len(ids) != len(values):
        raise InvalidInput(f"run_signal_stage got {len(ids)} ids and {len(values)} values")
    ctx = StageRunContext() if context is None else context

    async def run() -> list[float]:
        return _signal_values(stage, await stage.signal_values(query, ids, values, ctx), len(ids))

    return await _observed(stage.name, len(ids), run)


def _signal_values(stage: SignalStage, values: object, expected: int) -> list[float]:
    if not isinstance(values, list) or len(values) != expected:
        got = f"{len(values)} values" if isinstance(values, list) else type(values).__name__
        raise InvalidInput(f"signal_values returned {got}, expected a list of {expected} floats")
    signal = stage.signal
    check_signal(signal, 0.0)  # the name, once
    # check_signal per value; the common case (a float in [0, 1]) inline.
    return [v if type(v) is float and 0.0 <= v <= 1.0 else check_signal(signal, v) for v in values]

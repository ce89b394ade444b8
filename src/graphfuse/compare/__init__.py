"""Answer-level comparison: LLM-only vs basic RAG vs GraphRAG, each answer judged by an LLM.

Answer pipelines (:func:`llm_only`, :func:`basic_rag`, :func:`graphrag`,
:func:`context_pipeline`, or a host's :class:`HostAnswerPipeline`) answer each question with a
:class:`Generator`; :func:`compare_pipelines` grades the answers with a :class:`Judge` and the
metrics (exact match, token F1, optionally :class:`BERTScore` F1, whether the context held the
answer), caches them on disk (:class:`CompareCache`) and :func:`write_report` writes the table and charts. Guide, worked
example and options: ``docs/compare.md``; ``graphfuse compare`` is the command line.
"""

from ._bertscore import BERTScore, BERTScoreResult
from ._cache import CompareCache, cache_key
from ._generation import (
    ContextWindowExceeded,
    Generation,
    Generator,
    UsageSource,
    check_messages,
    describe_generator,
)
from ._harness import (
    FAILURE_KINDS,
    AnswerResult,
    ComparisonReport,
    acompare_pipelines,
    compare_pipelines,
    failure_kind,
)
from ._hosts import (
    HostAnswerPipeline,
    HostDocument,
    check_context_window,
    host_generation,
    ranked_results,
    usage_pair,
)
from ._judge import CRITERIA, JUDGE_PROMPT, VERDICT_SCHEMA, Judge, JudgeFailed, Verdict, parse_verdict
from ._metrics import contains_answer, exact_match, normalize_answer, token_f1
from ._pipelines import (
    ANSWER_PROMPT,
    BUILTIN_PIPELINES,
    CONTEXT_PROMPT,
    Answer,
    AnswerPipeline,
    ContextPipeline,
    EmptyAnswer,
    Retrieved,
    basic_rag,
    builtin_pipelines,
    context_pipeline,
    graphrag,
    llm_only,
)
from ._questions import CompareQuestion, check_questions, load_questions
from ._report import markdown_report, write_report
from ._tokens import count_messages, default_counter

__all__ = [
    "ANSWER_PROMPT",
    "BUILTIN_PIPELINES",
    "CONTEXT_PROMPT",
    "CRITERIA",
    "FAILURE_KINDS",
    "JUDGE_PROMPT",
    "VERDICT_SCHEMA",
    "Answer",
    "AnswerPipeline",
    "AnswerResult",
    "BERTScore",
    "BERTScoreResult",
    "CompareCache",
    "CompareQuestion",
    "ComparisonReport",
    "ContextPipeline",
    "ContextWindowExceeded",
    "EmptyAnswer",
    "Generation",
    "Generator",
    "HostAnswerPipeline",
    "HostDocument",
    "Judge",
    "JudgeFailed",
    "Retrieved",
    "UsageSource",
    "Verdict",
    "acompare_pipelines",
    "basic_rag",
    "builtin_pipelines",
    "cache_key",
    "check_context_window",
    "check_messages",
    "check_questions",
    "compare_pipelines",
    "contains_answer",
    "context_pipeline",
    "count_messages",
    "default_counter",
    "describe_generator",
    "exact_match",
    "failure_kind",
    "graphrag",
    "host_generation",
    "llm_only",
    "load_questions",
    "markdown_report",
    "normalize_answer",
    "parse_verdict",
    "ranked_results",
    "token_f1",
    "usage_pair",
    "write_report",
]

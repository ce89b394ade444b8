"""Answer-level comparison: LLM-only vs basic RAG vs GraphRAG, judged by an LLM (document 003).

::

    from graphfuse.compare import Judge, builtin_pipelines, compare_pipelines, load_questions

    pipelines = builtin_pipelines(["llm_only", "basic_rag", "graphrag"], vector=vector_pipeline, graph=graph_pipeline)
    report = compare_pipelines(load_questions("questions.jsonl"), pipelines, generator, judge=Judge(judge_generator))
    report.to_dict()  # {"pipelines": {...}, "questions": [...]}

- Generators (:class:`Generator`): anything with ``async agenerate(messages, *, max_tokens)``
  returning a :class:`Generation`; plugins register them as the component kind
  ``"generator"`` (``graphfuse-openai`` provides ``openai``), the LlamaIndex and LangChain
  integrations adapt their hosts' LLMs and chat models.
- Answer pipelines (:class:`AnswerPipeline`): :func:`llm_only`, :func:`basic_rag`,
  :func:`graphrag`, :func:`context_pipeline` over any GraphFuse pipeline; the integrations
  adapt retrievers, query engines and runnables on :class:`HostAnswerPipeline` (settings,
  fingerprint, answers from retrieved documents or from the host's own model), with
  :func:`host_generation` and :func:`usage_pair` for their generators.
- :class:`Judge`: document 003's verdict, schema-checked, retried, failures recorded.
- Metrics: :func:`exact_match`, :func:`token_f1` (SQuAD normalisation), :func:`contains_answer`.
- :class:`CompareCache`: answers and verdicts on disk, so an interrupted run resumes.
- :func:`write_report`: ``report.md`` and PNG charts. ``graphfuse compare`` is the CLI.
"""

from ._cache import CompareCache, cache_key
from ._generation import (
    ContextWindowExceeded,
    Generation,
    Generator,
    UsageSource,
    check_messages,
    describe_generator,
)
from ._harness import AnswerResult, ComparisonReport, acompare_pipelines, compare_pipelines
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
    "JUDGE_PROMPT",
    "VERDICT_SCHEMA",
    "Answer",
    "AnswerPipeline",
    "AnswerResult",
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

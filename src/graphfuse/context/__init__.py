"""Context for the LLM: token counting, budgets, and assembling retrieved results into a prompt context.

::

    from graphfuse.context import TokenBudget, get_token_counter

    ctx = pipeline.context("Who directed Inception?", budget=600, format="evidence")
    ctx.text      # what the model reads: "[1] Inception: ..." markers, sources[n - 1] is [n]
    ctx.tokens    # its token count by ctx.counter ("cl100k_base", or "regex" without tiktoken)
    ctx.sources   # (ContextSource(id, title, score), ...); ctx.dropped: what did not fit

Three formats (:data:`FORMATS`): ``passages`` (whole passages by score), ``evidence`` (the
sentences carrying the query's and the bridge entities) and ``graph`` (document 003's
ENTITIES / RELATIONSHIPS / SUPPORTING TEXT). Token counters are components of kind
``token_counter`` in the plugin registry (hook ``register_token_counters``). Hosts assemble
their own retrieved objects with :class:`ContextAssembler`, :func:`citations` and
:func:`context_parts`.
"""

from ._budget import Allocation, TokenBudget
from ._build import abuild_context, build_context
from ._counters import (
    DEFAULT_COUNTER,
    FALLBACK_COUNTER,
    RegexTokenCounter,
    TiktokenCounter,
    TokenCounter,
    get_token_counter,
)
from ._graph import GraphCaps
from ._hosts import NO_QUERY, Citation, ContextAssembler, check_budget, citations, context_parts, resolve_counter
from ._retrieve import aretrieve_context, pipeline_embedder, pipeline_graph_store, retrieve_context
from ._types import FORMATS, Context, ContextSource, DroppedSource, Format

__all__ = [
    "DEFAULT_COUNTER",
    "FALLBACK_COUNTER",
    "FORMATS",
    "NO_QUERY",
    "Allocation",
    "Citation",
    "Context",
    "ContextAssembler",
    "ContextSource",
    "DroppedSource",
    "Format",
    "GraphCaps",
    "RegexTokenCounter",
    "TiktokenCounter",
    "TokenBudget",
    "TokenCounter",
    "abuild_context",
    "aretrieve_context",
    "build_context",
    "check_budget",
    "citations",
    "context_parts",
    "get_token_counter",
    "pipeline_embedder",
    "pipeline_graph_store",
    "resolve_counter",
    "retrieve_context",
]

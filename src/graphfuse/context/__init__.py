"""Context for the LLM: token counting, budgets, and assembling retrieved results into a prompt context.

``retrieve_context(pipeline, query, budget=..., format=...)`` (or :func:`build_context` over results)
returns a :class:`Context` whose text never exceeds the budget by its :class:`TokenCounter`,
with numbered sources and what was dropped (and, given ``history=``, the last conversation
turns that fit their share, in :attr:`Context.prompt_text`); the :data:`FORMATS` are ``passages``, ``evidence``
and ``graph`` (ENTITIES / RELATIONSHIPS / SUPPORTING TEXT). Hosts assemble their own retrieved
objects with :class:`ContextAssembler`. Guide: ``docs/context.md``.
"""

from ..defaults import WHOLE_PAGE_CHUNKS
from ._budget import Allocation, TokenBudget
from ._build import abuild_context, build_context, check_format
from ._counters import (
    DEFAULT_COUNTER,
    FALLBACK_COUNTER,
    RegexTokenCounter,
    TiktokenCounter,
    TokenCounter,
    get_token_counter,
)
from ._graph import GraphCaps
from ._history import HISTORY_ROLES, HISTORY_TURNS, HistoryLike, Role, Turn, history_turns
from ._hosts import NO_QUERY, Citation, ContextAssembler, check_budget, citations, context_parts, resolve_counter
from ._retrieve import aretrieve_context, pipeline_embedder, pipeline_graph_store, retrieve_context
from ._types import FORMATS, Context, ContextSource, DroppedSource, Format

__all__ = [
    "DEFAULT_COUNTER",
    "FALLBACK_COUNTER",
    "FORMATS",
    "HISTORY_ROLES",
    "HISTORY_TURNS",
    "NO_QUERY",
    "WHOLE_PAGE_CHUNKS",
    "Allocation",
    "Citation",
    "Context",
    "ContextAssembler",
    "ContextSource",
    "DroppedSource",
    "Format",
    "GraphCaps",
    "HistoryLike",
    "RegexTokenCounter",
    "Role",
    "TiktokenCounter",
    "TokenBudget",
    "TokenCounter",
    "Turn",
    "abuild_context",
    "aretrieve_context",
    "build_context",
    "check_budget",
    "check_format",
    "citations",
    "context_parts",
    "get_token_counter",
    "history_turns",
    "pipeline_embedder",
    "pipeline_graph_store",
    "resolve_counter",
    "retrieve_context",
]

"""Context assembly for a host's own objects: settings checked once, host objects in, a Context out.

A host (LangChain, LlamaIndex, your own framework) builds a :class:`ContextAssembler`, turns its
retrieved objects into results with :meth:`ContextAssembler.results` through accessors it
supplies, assembles them, and maps the context back onto its objects with :func:`citations` and
:func:`context_parts`. See ``docs/context.md`` ("In a host framework").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast

from .._core._errors import GraphFuseError, InvalidInput
from .._core._filters import FilterLike, MetadataFilter
from .._core._protocols import GraphStore
from .._core._sync import sync_form
from .._core._types import Document, Result
from ..hosts import NO_QUERY
from ._budget import TokenBudget
from ._build import abuild_context, check_format
from ._counters import TokenCounter, get_token_counter
from ._graph import GraphCaps
from ._history import HistoryLike
from ._types import Context, ContextSource

__all__ = [
    "NO_QUERY",
    "Citation",
    "ContextAssembler",
    "check_budget",
    "citations",
    "context_parts",
    "resolve_counter",
]

T = TypeVar("T")


def check_budget(budget: object) -> int | TokenBudget:
    """``budget`` if it is a positive int (context tokens) or a :class:`TokenBudget`, else
    :class:`~graphfuse.InvalidInput` (a bool is not a number of tokens)."""
    if isinstance(budget, TokenBudget):
        return budget
    if isinstance(budget, bool) or not isinstance(budget, int):
        raise InvalidInput(f"budget must be a positive int (context tokens) or a TokenBudget, got {budget!r}")
    if budget <= 0:
        raise InvalidInput(f"budget must be a positive number of tokens, got {budget}")
    return budget


def resolve_counter(counter: object) -> TokenCounter:
    """The token counter ``counter`` names: ``None`` is :func:`get_token_counter`'s default, a string
    a registered counter's name, else an object with a ``name`` string and a ``count`` method."""
    if counter is None or isinstance(counter, str):
        return get_token_counter(counter)
    name = getattr(counter, "name", None)
    if not isinstance(name, str) or not name or not callable(getattr(counter, "count", None)):
        raise InvalidInput(
            f"counter must be a token counter name or a TokenCounter (a 'name' string and a 'count' method), "
            f"got {counter!r}"
        )
    return cast("TokenCounter", counter)


def _finite(score: object) -> float | None:
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        return None
    return float(score)


class ContextAssembler:
    """A host's context settings, checked when it is built, and the assembly of its objects.

    ``budget``: context tokens or a :class:`TokenBudget` (:func:`check_budget`); ``format``: one
    of :data:`FORMATS`; ``counter``: see :func:`resolve_counter`; ``graph_store`` (a
    :class:`~graphfuse.GraphStore`) the graph format reads relations from; ``filter`` bounds
    every assembly (results outside it are dropped, the graph format's neighbours are read
    within it); ``caps`` a :class:`GraphCaps`. ``graph_store_optional=True`` lets a host build a
    graph-format assembler without a store when it will hand one to a pipeline
    (:meth:`options`). Bad settings raise :class:`~graphfuse.InvalidInput`.
    """

    __slots__ = ("budget", "caps", "counter", "filter", "format", "graph_store")

    def __init__(
        self,
        *,
        budget: object,
        format: object = "passages",
        counter: object = None,
        graph_store: object = None,
        filter: FilterLike | None = None,
        caps: object = None,
        graph_store_optional: bool = False,
    ) -> None:
        self.budget = check_budget(budget)
        self.format = check_format(format)
        self.counter = resolve_counter(counter)
        if graph_store is not None and not all(
            callable(getattr(graph_store, m, None)) for m in ("related", "get_documents")
        ):
            raise InvalidInput(f"graph_store must be a GraphStore, got {graph_store!r}")
        if self.format == "graph" and graph_store is None and not graph_store_optional:
            raise InvalidInput("the 'graph' context format needs a graph store (graph_store=...) for the relations")
        if caps is not None and not isinstance(caps, GraphCaps):
            raise InvalidInput(f"caps must be a graphfuse.context.GraphCaps, got {type(caps).__name__}")
        self.graph_store = cast("GraphStore | None", graph_store)
        self.filter = MetadataFilter.parse(filter)
        self.caps = caps

    def __repr__(self) -> str:
        return f"ContextAssembler(budget={self.budget!r}, format={self.format!r}, counter={self.counter.name!r})"

    def options(self) -> dict[str, Any]:
        """The settings as keyword arguments of :func:`~graphfuse.context.aretrieve_context` (and the sync form)."""
        return {
            "budget": self.budget,
            "format": self.format,
            "filter": self.filter,
            "counter": self.counter,
            "graph_store": self.graph_store,
            "caps": self.caps,
        }

    def results(
        self,
        items: Iterable[T],
        *,
        id: Callable[[T], str],
        content: Callable[[T], str],
        metadata: Callable[[T], Mapping[str, Any]],
        score: Callable[[T], object],
        parent: Callable[[T], str | None] | None = None,
        title_key: str = "title",
        unscored: Literal["rank", "zero"] = "rank",
    ) -> list[Result]:
        """The host's objects, best first, as results (one per object; chunks are merged when assembled).

        ``id``, ``content``, ``metadata`` and ``score`` read an object (``metadata`` is copied);
        ``parent(item)`` names the document an object is a part of, written as ``parent_id``
        when the metadata has none and it differs from the id (so its chunks merge into one
        passage). ``title_key`` names the metadata key shown as the title. Scores: with
        ``unscored="rank"``, every object's finite score when all have one, else their rank
        ``(n - rank) / n``; with ``"zero"``, each finite score, 0.0 for the others.
        """
        if not isinstance(title_key, str) or not title_key:
            raise InvalidInput(f"title_key must be a non-empty metadata key, got {title_key!r}")
        listed = list(items)
        scores = [_finite(score(item)) for item in listed]
        n = len(listed)
        if unscored == "rank" and None in scores:
            scores = [(n - rank) / n for rank in range(n)]
        out = []
        for item, value in zip(listed, scores, strict=True):
            doc_id = id(item)
            meta = dict(metadata(item))
            if title_key != "title" and (title := meta.get(title_key)) is not None:
                meta["title"] = str(title)
            if parent is not None:
                found, own = parent(item), meta.get("parent_id")
                if not (isinstance(own, str) and own) and found and found != doc_id:
                    meta["parent_id"] = found
            out.append(Result(Document(doc_id, content(item), meta), 0.0 if value is None else value, {}))
        return out

    def abuild(
        self,
        query: str | None,
        results: Sequence[Result],
        *,
        filter: FilterLike | None = None,
        history: HistoryLike | None = None,
    ) -> Coroutine[Any, Any, Context]:
        """Assemble ``results`` for ``query`` (:func:`abuild_context` with these settings); ``filter`` is
        ANDed with the assembler's; ``history`` is the conversation so far (oldest turn first), packed
        into its share of the budget. Without a query only the ``passages`` format can assemble
        (passages are then taken by score, a passage that does not fit is cut or dropped)."""
        if query is None and results and self.format != "passages":
            raise InvalidInput(
                f"the {self.format!r} format selects by the query, and none came with the documents: "
                "give the query text"
            )
        return abuild_context(
            NO_QUERY if query is None else query,
            results,
            budget=self.budget,
            format=self.format,
            counter=self.counter,
            graph_store=self.graph_store,
            filter=_both(self.filter, MetadataFilter.parse(filter)),
            caps=self.caps,
            history=history,
        )

    build = sync_form(abuild)
    """Sync form of :meth:`abuild`: same arguments, result and errors, no event loop needed."""


def _both(left: MetadataFilter | None, right: MetadataFilter | None) -> MetadataFilter | None:
    if left is None or right is None:
        return left or right
    return MetadataFilter(left.conditions + right.conditions)


@dataclass(frozen=True, slots=True)
class Citation:
    """Source ``marker`` (``[n]`` in the text) of a context and the positions, in the results it was
    assembled from, of the results it stands for (empty for a graph neighbour no result held)."""

    marker: int
    source: ContextSource
    indices: tuple[int, ...]


def citations(context: Context, results: Sequence[Result]) -> list[Citation]:
    """The context's sources in marker order, each with the results it merged (same ``parent_id``,
    or the same id)."""
    members: dict[str, list[int]] = {}
    for i, r in enumerate(results):
        parent = r.document.metadata.get("parent_id")
        members.setdefault(parent if isinstance(parent, str) and parent else r.id, []).append(i)
    return [Citation(n, s, tuple(members.get(s.id, ()))) for n, s in enumerate(context.sources, start=1)]


def context_parts(context: Context) -> list[str]:
    """The text of each source of a ``passages`` or ``evidence`` context, in marker order: part ``n``
    starts at marker ``[n]``, and the parts joined with blank lines are the text."""
    if context.format == "graph":
        raise InvalidInput("a 'graph' context is one text (entities, relationships, supporting text), not parts")
    count = len(context.sources)
    text = context.text
    if count == 0:
        return []
    if not text.startswith("[1] "):
        raise GraphFuseError("context text does not start with the marker [1]")
    starts = [0]
    for n in range(2, count + 1):
        at = text.find(f"\n\n[{n}] ", starts[-1])
        if at < 0:
            raise GraphFuseError(f"context text has no marker [{n}]")
        starts.append(at + 2)
    ends = [s - 2 for s in starts[1:]] + [len(text)]
    return [text[s:e] for s, e in zip(starts, ends, strict=True)]

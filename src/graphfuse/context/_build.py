"""Building a context from ranked results: the one entry point behind ``retrieve_context``."""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import numpy as np

from .._core._errors import GraphFuseError, InvalidInput, PluginError
from .._core._filters import FilterLike, MetadataFilter
from .._core._protocols import Embedder, GraphStore
from .._core._sentences import sentence_spans
from .._core._sync import sync_form
from .._core._types import CHUNKS_KEY, KIND_KEY, RELATED_TO, Relation, Result
from ..defaults import WHOLE_PAGE_CHUNKS
from ..embedders import memo_for
from ._budget import Allocation, TokenBudget, resolve_budget
from ._counters import TokenCounter, check_counter, checked_count, get_token_counter
from ._evidence import relation_query
from ._graph import GraphCaps, serialize_graph
from ._history import (
    HISTORY_TURNS,
    HistoryLike,
    PackedHistory,
    Turn,
    history_block,
    history_turns,
    int_budget_history_room,
    pack_history,
)
from ._items import Item, chunked_pages, item_body, item_label, items_from_results
from ._packing import Budgeter, pack_evidence, pack_passages
from ._preselect import worth_embedding
from ._types import FORMATS, Context, DroppedSource

__all__ = [
    "abuild_context",
    "build_context",
    "check_format",
    "fetch_neighbourhood",
    "sentence_similarity",
    "widen_items",
]


def check_format(format: object) -> str:
    """``format`` if it is one of :data:`FORMATS`, else ``InvalidInput`` listing them."""
    if not isinstance(format, str) or format not in FORMATS:
        raise InvalidInput(f"unknown context format {format!r}; formats are: {', '.join(FORMATS)}")
    return format


async def abuild_context(
    query: str,
    results: Sequence[Result],
    *,
    budget: int | TokenBudget,
    format: str = "passages",
    counter: TokenCounter | None = None,
    graph_store: GraphStore | None = None,
    filter: FilterLike | None = None,
    caps: GraphCaps | None = None,
    embedder: Embedder | None = None,
    history: HistoryLike | None = None,
) -> Context:
    """Assemble ``results`` (best first) into a :class:`Context` for ``query`` within ``budget``.

    ``budget`` is the number of context tokens, or a :class:`TokenBudget` (the query is
    counted and reserved). ``format``: ``"passages"`` (whole passages by score, shortened to
    their query-relevant sentences or dropped when they do not fit), ``"evidence"`` (the
    sentences that carry the query's and the bridge entities, each passage's subject
    sentence) or ``"graph"`` (a compact subgraph: ENTITIES / RELATIONSHIPS / SUPPORTING TEXT,
    which needs ``graph_store`` for the relations; neighbours are read within ``filter``
    only). ``counter`` defaults to :func:`get_token_counter`. The text never has more than
    the budget's tokens by that counter.

    With an ``embedder`` (the one the pipeline searches with, say), sentences are also scored
    by their similarity to the query, which finds answers worded unlike the question. Only the
    sentences that can still win are embedded: scored by words first, at most
    :func:`~graphfuse.context._preselect.pool_size` of the budget (the rest keep their word
    score), and only where the format uses similarity (a passage shown whole needs none); their
    vectors are remembered by the text's hash for the next calls with the same embedder.

    ``history`` is the conversation so far, oldest turn first (:class:`Turn` objects or
    ``{"role", "content"}`` mappings; roles ``user``, ``assistant``, ``system``). Its last
    :data:`HISTORY_TURNS` turns are taken newest first while they fit the history's share of
    the budget (what they need, at most 15 % and at most 500 tokens: a :class:`TokenBudget`'s
    ``history_share`` and ``history_cap``, the same rule for an int budget, whose history share
    then comes out of it); a turn that does not fit ends the history (an older one is never
    shown without the newer ones), and a newest turn that does not fit alone is cut to fit.
    The kept turns are :attr:`Context.history` (oldest first), the retrieved context gets the
    rest of the budget, and :attr:`Context.prompt_text` is the history block (in chronological
    order) followed by the context text, both counted by ``counter``.
    """
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("query text must be a non-empty string")
    turns = history_turns(history)
    fmt = check_format(format)
    counter = get_token_counter() if counter is None else check_counter(counter)
    flt = MetadataFilter.parse(filter)
    if embedder is not None and not (
        callable(getattr(embedder, "embed_documents", None)) and callable(getattr(embedder, "embed_query", None))
    ):
        raise InvalidInput(f"embedder must be a graphfuse Embedder (embed_query, embed_documents), got {embedder!r}")
    if caps is not None and not isinstance(caps, GraphCaps):
        raise InvalidInput(f"caps must be a GraphCaps, got {type(caps).__name__}")
    query_tokens = checked_count(counter, query) if isinstance(budget, TokenBudget) else None
    tokens, allocation = resolve_budget(budget, query_tokens)
    packed = None
    if turns:
        tokens, allocation, packed = _with_history(budget, tokens, query_tokens, turns, counter)
    b = Budgeter(counter, tokens)
    empty_cost = b.count("")
    if empty_cost > tokens:
        raise PluginError(f"token counter {counter.name!r} counts the empty string as {empty_cost} tokens")
    items, missing = items_from_results(list(results))
    if fmt == "evidence" and graph_store is not None and items:
        items = await widen_items(graph_store, list(results), items, flt)
    if flt is not None:
        # Results normally come from a pipeline that applied the filter; assembled by hand they may not.
        outside = [it for it in items if not flt.matches(it.metadata)]
        items = [it for it in items if flt.matches(it.metadata)]
    else:
        outside = []
    sections: dict[str, int] = {}
    similarity: dict[str, float] | None = None
    relation: dict[str, float] | None = None
    if embedder is not None and items:
        # Only the sentences that can still win are embedded (see _preselect), each once per embedder.
        wanted = worth_embedding(query, items, fmt, b, caps)
        if wanted:
            similarity, relation = await sentence_similarity(embedder, query, items, wanted)
    if fmt == "passages":
        text, sources, dropped = pack_passages(query, items, b, similarity, relation)
    elif fmt == "evidence":
        text, sources, dropped = pack_evidence(query, items, b, similarity, relation)
    else:
        if graph_store is None:
            raise InvalidInput("the 'graph' context format needs a graph store (graph_store=...) for the relations")
        caps = caps or GraphCaps()
        room = max(0, caps.max_entities - len(items))
        neighbours, relations = await fetch_neighbourhood(graph_store, items, flt, max_neighbours=room)
        text, sources, dropped, sections = serialize_graph(
            query, items, neighbours, relations, b, caps, similarity, relation
        )
    dropped += [DroppedSource(r.id, _title(r), float(r.score), "no content") for r in missing]
    dropped += [DroppedSource(it.id, it.title, it.score, "filter") for it in outside]
    n = b.count(text)
    if n > tokens:  # pragma: no cover - every packer checks the final text; a guard, not a path
        raise PluginError(f"context of {n} tokens exceeds the budget of {tokens} (counter {counter.name!r})")
    kept = _whole_prompt_fits(packed, text, n, counter) if packed is not None else None
    return Context(
        text,
        n,
        counter.name,
        fmt,
        tuple(sources),
        tuple(dropped),
        tokens,
        allocation,
        sections,
        history=kept.turns if kept is not None else (),
        history_tokens=kept.tokens if kept is not None else 0,
        history_dropped=kept.dropped if kept is not None else 0,
    )


build_context = sync_form(abuild_context)
"""Sync form of :func:`abuild_context`: same arguments, result and errors, no event loop needed."""


def _with_history(
    budget: int | TokenBudget, tokens: int, query_tokens: int | None, turns: Sequence[Turn], counter: TokenCounter
) -> tuple[int, Allocation | None, PackedHistory]:
    """The context tokens, the allocation and the packed history, the history's share taken first."""
    wanted = checked_count(counter, history_block(turns[-HISTORY_TURNS:]))
    if isinstance(budget, TokenBudget):
        room = budget.allocate(query_tokens, wanted).history
        packed = pack_history(turns, counter, room)
        # What the history does not use goes to the context.
        allocation = budget.allocate(query_tokens, packed.tokens)
        return allocation.context, allocation, packed
    room = int_budget_history_room(tokens, wanted)
    packed = pack_history(turns, counter, room)
    return tokens - packed.tokens, None, packed


def _whole_prompt_fits(packed: PackedHistory, text: str, text_tokens: int, counter: TokenCounter) -> PackedHistory:
    """``packed``, less its oldest turns while the prompt (history block + text) counts more than
    the two apart: a counter that is not additive at the seam (cl100k_base is: the block ends in
    a line break) must not push the prompt past the history's share plus the context's budget."""
    turns = list(packed.turns)
    limit = packed.tokens + text_tokens
    while turns and counter.count(history_block(turns) + text) > limit:
        turns = turns[1:]
    if len(turns) == len(packed.turns):
        return packed
    n = counter.count(history_block(turns)) if turns else 0
    return PackedHistory(tuple(turns), n, packed.dropped + len(packed.turns) - len(turns), packed.cut and bool(turns))


async def sentence_similarity(
    embedder: Embedder, query: str, items: Sequence[Item], texts: Sequence[str] | None = None
) -> tuple[dict[str, float], dict[str, float] | None]:
    """Each of ``texts`` (default: every distinct sentence of ``items``) -> its cosine similarity
    to ``query`` by ``embedder``, and to :func:`~graphfuse.context._evidence.relation_query`
    (``None`` when the query names no retrieved title). The sentences are embedded once for
    both, and remembered by their text's hash for later calls with the same embedder (see
    :mod:`graphfuse.embedders._memo`)."""
    if texts is None:
        texts = list(dict.fromkeys(it.text[s:e] for it in items for s, e in sentence_spans(it.text)))
    else:
        texts = list(dict.fromkeys(texts))
    if not texts:
        return {}, None
    asked = relation_query(query, items)
    who = type(embedder).__name__
    memo = memo_for(embedder)
    try:
        if memo is not None:
            q = await memo.embed_query(query)
            r = await memo.embed_query(asked) if asked else None
            m = await memo.embed_documents(texts)
        else:
            q = np.asarray(await embedder.embed_query(query), dtype=np.float64)
            r = np.asarray(await embedder.embed_query(asked), dtype=np.float64) if asked else None
            m = np.asarray(await embedder.embed_documents(texts), dtype=np.float64)
    except GraphFuseError:
        raise
    except Exception as exc:
        raise PluginError(f"embedder {who} failed while scoring context sentences: {exc}") from exc
    if (
        m.ndim != 2
        or m.shape[0] != len(texts)
        or q.ndim != 1
        or m.shape[1] != q.shape[0]
        or (r is not None and r.shape != q.shape)
    ):
        raise PluginError(f"embedder {who} returned vectors of the wrong shape for {len(texts)} sentences")
    lengths = np.linalg.norm(m, axis=1)

    def cosines(v: np.ndarray) -> dict[str, float]:
        norms = lengths * (np.linalg.norm(v) or 1.0)
        cos = (m @ v) / np.where(norms == 0, 1.0, norms)
        return {t: float(c) for t, c in zip(texts, cos, strict=True)}

    return cosines(q), (cosines(r) if r is not None else None)


async def widen_items(
    store: GraphStore, results: Sequence[Result], items: Sequence[Item], flt: MetadataFilter | None
) -> list[Item]:
    """``items`` whose passages are chunks of a short page (at most :data:`~graphfuse.defaults.WHOLE_PAGE_CHUNKS`
    chunks) read the whole page from ``store``, within ``flt``: the sentences evidence chooses
    from. The chunk chosen for the question may lack the fact the next hop needs (a birthplace
    in the page's lead, a death in its last paragraph); a short page is read whole, as it was
    indexed, a long one (documentation, a chat log) only in its chosen chunks. An item keeps
    its id, score, metadata and parts (the results it merged), so sources and citations are
    unchanged; results that are whole documents, and pages or chunk ids the store does not
    hold (a host's own ids), change nothing.
    """
    pages = chunked_pages(results)
    if not pages:
        return list(items)
    parents = await store.get_documents(sorted(pages), filter=flt)
    wanted: list[str] = []
    for page_id, returned in pages.items():
        page = parents.get(page_id)
        n = page.metadata.get(CHUNKS_KEY) if page is not None else None
        if isinstance(n, int) and not isinstance(n, bool) and 1 < n <= WHOLE_PAGE_CHUNKS:
            wanted += [c for i in range(n) if (c := f"{page_id}#{i}") not in returned]
    found = await store.get_documents(wanted, filter=flt) if wanted else {}
    extra: list[Result] = []
    for doc in found.values():
        parent = doc.metadata.get("parent_id")
        if doc.content is not None and isinstance(parent, str) and parent in pages:
            extra.append(Result(doc, 0.0, {}))
    if not extra:
        return list(items)
    widened, _ = items_from_results([r for r in results if r.document.content is not None] + extra)
    by_id = {it.id: it for it in widened}
    out: list[Item] = []
    for it in items:
        wide = by_id.get(it.id)
        out.append(it if wide is None else Item(it.id, it.title, wide.text, it.score, it.metadata, it.parts))
    return out


def _title(result: Result) -> str | None:
    title = result.document.metadata.get("title")
    return title if isinstance(title, str) else None


async def fetch_neighbourhood(
    store: GraphStore, items: Sequence[Item], flt: MetadataFilter | None, *, max_neighbours: int
) -> tuple[list[Item], list[Relation]]:
    """The relations touching ``items`` and up to ``max_neighbours`` related documents within ``flt``.

    Uses the store's ``relations(ids)`` when it has one (the embedded stores do); otherwise
    one-hop ``related`` per document (relation type ``RELATED``, direction from the item).
    A neighbour the filter rejects is left out, with every relation touching it.
    """
    own: dict[str, str] = {}
    for it in items:
        own[it.id] = it.id
        for part in it.parts:
            own[part] = it.id
    if not own:
        return [], []
    reader = getattr(store, "relations", None)
    relations: list[Relation] = []
    if callable(reader):
        got = reader(list(own))
        relations = list(await got if inspect.isawaitable(got) else got)
    else:
        for it in items:
            for hit in await store.related(list(it.parts), depth=1, filter=flt):
                relations.append(Relation(it.id, hit.id, "RELATED"))
    # Neighbours: endpoints outside the items, ranked by links to the items then weight, then id.
    strength: dict[str, tuple[int, float]] = {}
    for rel in relations:
        for end, other in ((rel.source, rel.target), (rel.target, rel.source)):
            if end not in own and other in own:
                links, weight = strength.get(end, (0, 0.0))
                strength[end] = (links + 1, weight + rel.weight)
    ranked = sorted(strength, key=lambda i: (-strength[i][0], -strength[i][1], i))[: max(0, max_neighbours) * 3]
    docs = await store.get_documents(ranked, filter=flt) if ranked else {}
    neighbours: list[Item] = []
    seen: set[str] = set(own.values())
    for doc_id in ranked:
        doc = docs.get(doc_id)
        if doc is None or doc.content is None:
            continue
        parent = doc.metadata.get("parent_id")
        key = parent if isinstance(parent, str) and parent else doc.id
        if key in seen:
            own[doc.id] = key
            continue
        if len(neighbours) >= max_neighbours:
            break
        seen.add(key)
        own[doc.id] = key
        title = item_label(doc)
        neighbours.append(Item(key, title, item_body(doc.content, title), 0.0, doc.metadata, (doc.id,)))
    entity_ids = [n.id for n in neighbours if n.metadata.get(KIND_KEY) == "entity"]
    if callable(reader) and len(entity_ids) > 1:
        # An LLM graph relates its entity nodes to each other (RELATED_TO): those among the neighbours.
        got = reader(entity_ids)
        known = {(r.source, r.target, r.type) for r in relations}
        relations += [
            r
            for r in (await got if inspect.isawaitable(got) else got)
            if r.type == RELATED_TO
            and r.source in own
            and r.target in own
            and (r.source, r.target, r.type) not in known
        ]
    kept = [
        # (A relation between documents, not chunks, is kept as it is: no new Relation to validate.)
        r
        if own[r.source] == r.source and own[r.target] == r.target
        else Relation(own[r.source], own[r.target], r.type, r.weight, r.metadata)
        for r in relations
        if r.source in own and r.target in own and own[r.source] != own[r.target]
    ]
    return neighbours, kept

"""Passage results: documents ranked by a pipeline, returned as the passages an LLM reads.

:class:`Passages` turns a pipeline's ranked results (whole documents or chunks) into passages no
longer than the indexer's chunk size, each naming its page: a split document is replaced by its
chunks that best match the query, at most ``max_per_document`` passages of a page are kept, and
a hub page (more than ``hub_share`` of all chunks) is damped; ``granularity="document"`` returns
whole documents cut to ``max_document_tokens``. See docs/stages.md, "Results: passages that name
their page".
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, cast

import numpy as np
import numpy.typing as npt

from .._core._errors import InvalidInput
from .._core._filters import MetadataFilter
from .._core._protocols import Embedder, GraphStore, VectorStore
from .._core._types import CHUNKS_KEY, Document, Query, Result
from ..defaults import HUB_SHARE, MAX_PER_DOCUMENT, PASSAGE_LEXICAL
from ._run_documents import load_documents

__all__ = [
    "DEFAULT_MAX_DOCUMENT_TOKENS",
    "GRANULARITIES",
    "QUERY_VECTOR",
    "TRUNCATED",
    "PassageTerms",
    "Passages",
    "cap_per_document",
    "check_granularity",
    "check_max_per_document",
    "document_id_of",
]

GRANULARITIES = ("passage", "document")
"""What a result is: a passage of at most the indexer's chunk size (default), or a whole document."""

DEFAULT_MAX_DOCUMENT_TOKENS = 2048
"""With ``granularity="document"``, each document's text is cut to this many tokens (words and
punctuation, the indexer's default tokenizer)."""

TRUNCATED = "graphfuse_truncated_tokens"
"""Metadata key of a document result whose text was cut: how many tokens were left out."""

QUERY_VECTOR = "graphfuse.query_vector"
"""Run-context key under which the semantic stage leaves ``(embedder, vector)`` for reuse."""

_PARENT = "parent_id"
_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)
_K1 = 1.2
_B = 0.75


def check_granularity(value: object) -> str:
    """``value`` if it is one of :data:`GRANULARITIES`, else :class:`~graphfuse.InvalidInput`."""
    if value not in GRANULARITIES:
        raise InvalidInput(f"granularity must be one of {', '.join(map(repr, GRANULARITIES))}, got {value!r}")
    return str(value)


def check_max_per_document(value: object, what: str = "max_per_document") -> int:
    """``value`` if it is a positive integer, else :class:`~graphfuse.InvalidInput`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInput(f"{what} must be a positive integer, got {value!r}")
    return value


def document_id_of(document: Document) -> str:
    """The id of the document a result belongs to: its ``parent_id`` for a chunk, else its own id."""
    parent = document.metadata.get(_PARENT)
    return parent if isinstance(parent, str) and parent else document.id


def cap_per_document(results: Sequence[Result], max_per_document: int) -> list[Result]:
    """``results`` in order, keeping at most ``max_per_document`` of each document (by :func:`document_id_of`)."""
    seen: dict[str, int] = {}
    out: list[Result] = []
    for r in results:
        doc = document_id_of(r.document)
        if seen.get(doc, 0) < max_per_document:
            seen[doc] = seen.get(doc, 0) + 1
            out.append(r)
    return out


def _chunk_count(document: Document) -> int:
    count = document.metadata.get(CHUNKS_KEY)
    return count if isinstance(count, int) and not isinstance(count, bool) else 1


class PassageTerms(Protocol):
    """Where :class:`Passages` reads the words of a document's chunks instead of tokenising their texts.

    :meth:`term_counts` gives, for the passages ``ids``, how often each of ``terms`` (tokens of
    :func:`~graphfuse.bm25_tokens`) occurs in each one's text (``counts[k, j]``, ``ids[k]``,
    ``terms[j]``) and each text's token count; ``None`` when it does not hold every one of
    ``ids``. It must describe the texts the graph store holds for those ids (the ``multihop``
    preset passes :class:`~graphfuse.multihop.PassageLexicon` over the corpus index it searches,
    built for the same store generation).
    """

    def term_counts(
        self, ids: Sequence[str], terms: Sequence[str]
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None: ...


def _token_counts(
    texts: Sequence[str], terms: Sequence[str]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """:meth:`PassageTerms.term_counts` of ``texts``, by tokenising them."""
    from .._core._text import bm25_tokens  # compiles its CJK patterns: on first use, not at import

    column = {t: j for j, t in enumerate(terms)}
    counts = np.zeros((len(texts), len(terms)))
    lengths = np.zeros(len(texts))
    for k, text in enumerate(texts):
        tokens = bm25_tokens(text)
        lengths[k] = len(tokens)
        for t in tokens:
            j = column.get(t)
            if j is not None:
                counts[k, j] += 1
    return counts, lengths


def _bm25(counts: npt.NDArray[np.float64], lengths: npt.NDArray[np.float64]) -> list[float]:
    """BM25 of a query over passages taken as a corpus of their own (idf within them), from the
    counts of the query's distinct terms (``counts[k, j]``) and the passages' token counts."""
    n = counts.shape[0]
    if not n or not counts.shape[1]:
        return [0.0] * n
    avg = float(lengths.sum()) / n or 1.0
    df = (counts > 0).sum(axis=0)
    idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
    norm = _K1 * (1 - _B + _B * lengths / avg)
    scores = idf * counts * (_K1 + 1) / (counts + norm[:, None])
    return [float(v) for v in scores.sum(axis=1)]


_Passage = tuple[str, str, float, "Document | None", Result]
"""A passage to return: (id, its document's id, score, its document if loaded, the result whose signals it carries)."""


def _normalised(values: Sequence[float]) -> list[float]:
    top = max(values, default=0.0)
    return [v / top if top > 0 else 0.0 for v in values]


class Passages:
    """Turns a pipeline's ranked results into passages (see the module docs); presets attach one.

    ``graph_store`` loads a document's chunks; ``vector_store`` and ``embedder`` (optional, both
    or neither) score them by cosine to the query within the document; ``lexical`` weighs the
    BM25 match against the cosine (0..1; 1.0 = words only, the only choice without an embedder).
    ``max_per_document``, ``granularity`` and ``max_document_tokens`` are the defaults of
    :meth:`Pipeline.aretrieve <graphfuse.Pipeline.aretrieve>`'s options of the same names.

    ``terms`` (optional, a :class:`PassageTerms`) holds the words of the chunks: a query without
    a metadata filter then scores a document's chunks from it, with one vector search for all
    the documents expanded, and loads only the chunks it returns. The result is the same as
    loading and tokenising every chunk while ``terms`` describes the store's texts; it does
    that instead for a document whose chunks ``terms`` lacks, or when a chunk it would return
    is gone from the store.
    """

    __slots__ = (
        "_embedder",
        "_granularity",
        "_graph",
        "_hub_share",
        "_lexical",
        "_max_doc_tokens",
        "_max_per_doc",
        "_terms",
        "_vectors",
    )

    def __init__(
        self,
        graph_store: GraphStore,
        vector_store: VectorStore | None = None,
        embedder: Embedder | None = None,
        *,
        max_per_document: int = MAX_PER_DOCUMENT,
        granularity: str = "passage",
        max_document_tokens: int = DEFAULT_MAX_DOCUMENT_TOKENS,
        lexical: float = PASSAGE_LEXICAL,
        hub_share: float = HUB_SHARE,
        terms: PassageTerms | None = None,
    ) -> None:
        if not callable(getattr(graph_store, "get_documents", None)):
            raise InvalidInput(f"graph_store does not look right: {graph_store!r} has no 'get_documents'")
        if (vector_store is None) != (embedder is None):
            raise InvalidInput("Passages takes a vector_store and an embedder together, or neither")
        if isinstance(lexical, bool) or not isinstance(lexical, (int, float)) or not 0.0 <= lexical <= 1.0:
            raise InvalidInput(f"lexical must be a number in [0, 1], got {lexical!r}")
        self._graph = graph_store
        self._vectors = vector_store
        self._embedder = embedder
        self._max_per_doc = check_max_per_document(max_per_document)
        self._granularity = check_granularity(granularity)
        self._max_doc_tokens = check_max_per_document(max_document_tokens, "max_document_tokens")
        self._lexical = float(lexical) if embedder is not None else 1.0
        if isinstance(hub_share, bool) or not isinstance(hub_share, (int, float)) or not 0.0 < hub_share <= 1.0:
            raise InvalidInput(f"hub_share must be a number in (0, 1], got {hub_share!r}")
        self._hub_share = float(hub_share)
        if terms is not None and not callable(getattr(terms, "term_counts", None)):
            raise InvalidInput(f"terms must offer term_counts(ids, terms) (a PassageTerms), got {terms!r}")
        self._terms = terms

    def __repr__(self) -> str:
        return (
            f"Passages(max_per_document={self._max_per_doc}, granularity={self._granularity!r}, "
            f"max_document_tokens={self._max_doc_tokens}, lexical={self._lexical})"
        )

    def with_defaults(
        self,
        *,
        max_per_document: int | None = None,
        granularity: str | None = None,
        max_document_tokens: int | None = None,
    ) -> Passages:
        """A copy with other defaults (``None`` keeps this one's); checked as in the constructor.

        ``pipeline.with_passages(pipeline.passages.with_defaults(granularity="document"))`` is a
        pipeline whose every call (``retrieve``, ``context``) returns whole documents.
        """
        out = Passages.__new__(Passages)
        for name in Passages.__slots__:
            setattr(out, name, getattr(self, name))
        if max_per_document is not None:
            out._max_per_doc = check_max_per_document(max_per_document)
        if granularity is not None:
            out._granularity = check_granularity(granularity)
        if max_document_tokens is not None:
            out._max_doc_tokens = check_max_per_document(max_document_tokens, "max_document_tokens")
        return out

    @property
    def max_per_document(self) -> int:
        """The default cap of passages per document."""
        return self._max_per_doc

    @property
    def granularity(self) -> str:
        """The default granularity (``"passage"`` or ``"document"``)."""
        return self._granularity

    @property
    def max_document_tokens(self) -> int:
        """The default size of a document result, in tokens."""
        return self._max_doc_tokens

    @property
    def graph_store(self) -> GraphStore:
        """The graph store chunks are loaded from."""
        return self._graph

    async def select(
        self,
        query: Query,
        ranked: Sequence[Result],
        top_k: int,
        *,
        granularity: str | None = None,
        max_per_document: int | None = None,
        max_document_tokens: int | None = None,
        context: Any = None,
    ) -> list[Result]:
        """The ``top_k`` results of ``ranked`` (best first, as scored) at ``granularity``."""
        grain = self._granularity if granularity is None else check_granularity(granularity)
        cap = self._max_per_doc if max_per_document is None else check_max_per_document(max_per_document)
        size = (
            self._max_doc_tokens
            if max_document_tokens is None
            else check_max_per_document(max_document_tokens, "max_document_tokens")
        )
        ranked = await self._hydrated(ranked, query, context)
        if grain == "document":
            return await self._documents(query, ranked, top_k, size, context)
        return await self._passages(query, ranked, top_k, cap, context)

    async def _hydrated(self, ranked: Sequence[Result], query: Query, context: Any) -> list[Result]:
        # Only results still without content (a BM25 hit is an id) are loaded; a document no
        # longer there, or outside the filter, is dropped, as the hydrate stage would.
        wanted = [r.id for r in ranked if r.document.content is None]
        if not wanted:
            return list(ranked)
        docs = await load_documents(self._graph, wanted, context, filter=query.filter)
        out = []
        for r in ranked:
            if r.document.content is not None:
                out.append(r)
            elif (doc := docs.get(r.id)) is not None:
                out.append(Result(doc, r.score, r.signals, r.contributions))
        return out

    async def _passages(
        self, query: Query, ranked: Sequence[Result], top_k: int, cap: int, context: Any
    ) -> list[Result]:
        quick = self._terms is not None and query.filter is None
        cosines: tuple[set[str], dict[str, float]] = (set(), {})
        if quick and self._lexical < 1.0 and self._vectors is not None:
            # The cosines of the chunks of the pages that fill the list if no page is a hub, searched
            # while the hubs are found (a hub lets a further page in: its chunks are searched later).
            guess = [r for r, _, split in _taken(ranked, top_k, {}) if split]
            count = sum(_chunk_count(r.document) for r in guess)
            search = self._cosines(query, [r.id for r in guess], count, context) if guess else _nothing()
            damp, found = await asyncio.gather(self._hub_damping(query, ranked[: 4 * top_k], context), search)
            cosines = ({r.id for r in guess}, found)
        else:
            damp = await self._hub_damping(query, ranked[: 4 * top_k], context)
        taken = _taken(ranked, top_k, damp)
        if quick:
            chosen = await self._chosen(query, taken, top_k, cap, context, quick=True, cosines=cosines)
            loaded = await self._results(chosen, context)
            if loaded is not None:
                return loaded
        return cast("list[Result]", await self._results(await self._chosen(query, taken, top_k, cap, context), context))

    async def _chosen(
        self,
        query: Query,
        taken: Sequence[tuple[Result, float, bool]],
        top_k: int,
        cap: int,
        context: Any,
        *,
        quick: bool = False,
        cosines: tuple[set[str], dict[str, float]] | None = None,
    ) -> list[_Passage]:
        """The passages of ``taken``, best first; ``quick``: chunks scored from :class:`PassageTerms`, unloaded."""
        split = [r for r, _, expand in taken if expand]
        expanded = iter(await self._expand_all(query, split, context, quick=quick, cosines=cosines))
        scored: dict[str, tuple[float, int, _Passage]] = {}
        order = 0
        for r, factor, expand in taken:
            own: list[_Passage] = [(r.id, document_id_of(r.document), r.score, r.document, r)]
            for found in next(expanded) if expand else own:
                passage = found if factor >= 1.0 else (found[0], found[1], found[2] * factor, found[3], found[4])
                old = scored.get(passage[0])
                if old is None or passage[2] > old[0]:
                    scored[passage[0]] = (passage[2], old[1] if old is not None else order, passage)
                order += 1
        best = sorted(scored.values(), key=lambda t: (-t[0], t[1]))
        seen: dict[str, int] = {}
        out: list[_Passage] = []
        for _, _, passage in best:  # at most cap passages of a document (cap_per_document)
            if seen.get(passage[1], 0) < cap:
                seen[passage[1]] = seen.get(passage[1], 0) + 1
                out.append(passage)
                if len(out) >= top_k:
                    break
        return out

    async def _results(self, chosen: list[_Passage], context: Any) -> list[Result] | None:
        """``chosen`` as results, its unloaded chunks loaded; ``None`` if one is gone (or empty) in the store."""
        wanted = [p[0] for p in chosen if p[3] is None]
        docs = await load_documents(self._graph, wanted, context) if wanted else {}
        out = []
        for passage_id, _, score, document, base in chosen:
            if document is None:
                document = docs.get(passage_id)
                if document is None or document.content is None:
                    return None
            out.append(base if document is base.document and score == base.score else _result(document, score, base))
        return out

    async def _hub_damping(self, query: Query, ranked: Sequence[Result], context: Any) -> dict[str, float]:
        """``{document id: factor < 1}`` for the hub pages among ``ranked`` (see the class docs)."""
        if self._vectors is None or not ranked:
            return {}
        counts: dict[str, int] = {}
        parents: set[str] = set()
        for r in ranked:
            doc = document_id_of(r.document)
            if doc == r.document.id:
                counts[doc] = _chunk_count(r.document)
            else:
                parents.add(doc)
        missing = sorted(parents - counts.keys())
        if missing:
            for doc_id, page in (await load_documents(self._graph, missing, context, filter=query.filter)).items():
                counts[doc_id] = _chunk_count(page)
        if max(counts.values(), default=0) <= 1:
            return {}
        total = await self._vectors.count()
        if total <= 0:
            return {}
        out: dict[str, float] = {}
        for doc_id, n in counts.items():
            share = n / total
            if n > 1 and share > self._hub_share:
                out[doc_id] = self._hub_share / share
        return out

    async def _expand_all(
        self,
        query: Query,
        results: Sequence[Result],
        context: Any,
        *,
        quick: bool,
        cosines: tuple[set[str], dict[str, float]] | None = None,
    ) -> list[list[_Passage]]:
        """Each of ``results`` (split documents) as its passages scored within the document.

        ``cosines``: the pages whose chunks were searched already, and their chunks' cosines.
        """
        from .._core._text import bm25_tokens  # compiles its CJK patterns: on first use, not at import

        terms = sorted(set(bm25_tokens(query.text)))
        held: list[tuple[list[str], list[float]] | None] = [None] * len(results)
        if quick and self._terms is not None and results:
            groups = [[f"{r.id}#{i}" for i in range(_chunk_count(r.document))] for r in results]
            # One call for every document; a document whose chunks it lacks is asked alone below.
            together = self._terms.term_counts([i for ids in groups for i in ids], terms)
            start = 0
            for k, ids in enumerate(groups):
                found: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None
                if together is not None:
                    found = together[0][start : start + len(ids)], together[1][start : start + len(ids)]
                    start += len(ids)
                else:
                    found = self._terms.term_counts(ids, terms)
                if found is not None:
                    held[k] = (ids, _bm25(*found))
        searched, known = (set(), {}) if cosines is None else (cosines[0], dict(cosines[1]))
        if self._lexical < 1.0 and self._vectors is not None:
            # The pages whose chunks were not searched yet (the caller searched the likely ones).
            rest = [(r.id, len(h[0])) for r, h in zip(results, held, strict=True) if h is not None]
            rest = [(page, n) for page, n in rest if page not in searched]
            if rest:
                known.update(await self._cosines(query, [p for p, _ in rest], sum(n for _, n in rest), context))
        out: list[list[_Passage]] = []
        for r, h in zip(results, held, strict=True):
            if h is None:
                out.append(await self._expand(query, r, terms, context))
                continue
            ids, lexical = h
            # Not loaded: only the chunks that make the list are (_results).
            out.append(self._scored(r, ids, [None] * len(ids), lexical, [known.get(i, 0.0) for i in ids]))
        return out

    async def _expand(self, query: Query, result: Result, terms: Sequence[str], context: Any) -> list[_Passage]:
        doc = result.document
        ids = [f"{doc.id}#{i}" for i in range(_chunk_count(doc))]
        found = await load_documents(self._graph, ids, context, filter=query.filter)
        chunks = [found[i] for i in ids if i in found and found[i].content is not None]
        if not chunks:
            return [(result.id, document_id_of(doc), result.score, doc, result)]
        lexical = _bm25(*_token_counts([c.content or "" for c in chunks], terms))
        cosine: list[float] = []
        if self._lexical < 1.0 and self._vectors is not None:
            by_id = await self._cosines(query, [doc.id], len(ids), context)
            cosine = [by_id.get(c.id, 0.0) for c in chunks]
        return self._scored(result, [c.id for c in chunks], chunks, lexical, cosine)

    def _scored(
        self,
        result: Result,
        ids: Sequence[str],
        chunks: Sequence[Document | None],
        lexical: list[float],
        cosine: list[float],
    ) -> list[_Passage]:
        """``result``'s chunks, scored by their match (words, and cosine when weighed) relative to the best one."""
        match = _normalised(lexical)
        if self._lexical < 1.0 and self._vectors is not None:
            semantic = _normalised(cosine)
            match = [self._lexical * m + (1.0 - self._lexical) * s for m, s in zip(match, semantic, strict=True)]
        top = max(match)
        page = result.id
        if top <= 0:
            # Nothing of the query in any chunk: the opening passage stands for the document.
            return [(ids[0], page, result.score, chunks[0], result)]
        return [
            (i, page, result.score * m / top, chunk, result)
            for i, chunk, m in zip(ids, chunks, match, strict=True)
            if m > 0
        ]

    async def _cosines(self, query: Query, parents: Sequence[str], count: int, context: Any) -> dict[str, float]:
        """The cosine (floored at 0) of each chunk of ``parents`` (``count`` chunks in all) to the query."""
        assert self._vectors is not None
        assert self._embedder is not None
        vector = self._query_vector(context)
        if vector is None:
            vector = list(await self._embedder.embed_query(query.text))
            values = getattr(context, "values", None)
            if isinstance(values, dict):
                values[QUERY_VECTOR] = (self._embedder, vector)
        within = parents[0] if len(parents) == 1 else {"$in": list(parents)}
        only = MetadataFilter.parse({_PARENT: within})
        assert only is not None
        only = only & query.filter
        hits = await self._vectors.search(vector, limit=count, filter=only)
        return {h.id: max(0.0, float(h.score)) for h in hits}

    def _query_vector(self, context: Any) -> list[float] | None:
        values = getattr(context, "values", None)
        if not isinstance(values, Mapping):
            return None
        found = values.get(QUERY_VECTOR)
        if isinstance(found, tuple) and len(found) == 2 and found[0] is self._embedder:
            return list(found[1])
        return None

    async def _documents(
        self, query: Query, ranked: Sequence[Result], top_k: int, size: int, context: Any
    ) -> list[Result]:
        first: dict[str, Result] = {}
        for r in ranked:
            doc = document_id_of(r.document)
            if doc not in first:
                first[doc] = r
                if len(first) >= top_k:
                    break
        need = [d for d, r in first.items() if r.document.id != d]
        loaded = await load_documents(self._graph, need, context, filter=query.filter) if need else {}
        out: list[Result] = []
        for d, r in first.items():
            document = r.document if r.document.id == d else loaded.get(d)
            if document is None:
                continue
            out.append(Result(_cut(document, size), r.score, r.signals, r.contributions))
        return out


def _taken(ranked: Sequence[Result], top_k: int, damp: Mapping[str, float]) -> list[tuple[Result, float, bool]]:
    """``(result, hub factor, expand it)`` for the results whose document can reach the list.

    Documents past the top_k-th distinct one cannot (their passages score at most the
    document's score); a damped hub does not count towards the documents that fill the list.
    """
    documents: list[str] = []
    taken: list[tuple[Result, float, bool]] = []
    for r in ranked:
        doc = document_id_of(r.document)
        if doc not in documents:
            if sum(1 for d in documents if d not in damp) >= top_k:
                break
            documents.append(doc)
        split = r.document.metadata.get(_PARENT) is None and _chunk_count(r.document) > 1
        taken.append((r, damp.get(doc, 1.0), split))
    return taken


async def _nothing() -> dict[str, float]:
    return {}


def _result(document: Document, score: float, base: Result) -> Result:
    return Result(document, score, base.signals, base.contributions)


def _cut(document: Document, size: int) -> Document:
    text = document.content or ""
    spans = [m.span() for m in _TOKEN.finditer(text)]
    if len(spans) <= size:
        return document
    meta = {**document.metadata, TRUNCATED: len(spans) - size}
    return Document(document.id, text[: spans[size - 1][1]], meta, document.created_at, document.updated_at)

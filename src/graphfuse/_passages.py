"""Passage results: documents ranked by a pipeline, returned as the passages an LLM reads.

:class:`Passages` turns a pipeline's ranked results (whole documents or chunks) into passages no
longer than the indexer's chunk size, each naming its page: a split document is replaced by its
chunks that best match the query, at most ``max_per_document`` passages of a page are kept, and
a hub page (more than ``hub_share`` of all chunks) is damped; ``granularity="document"`` returns
whole documents cut to ``max_document_tokens``. See docs/stages.md, "Results: passages that name
their page".
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ._errors import InvalidInput
from ._filters import MetadataFilter
from ._protocols import Embedder, GraphStore, VectorStore
from ._types import Document, Query, Result
from .defaults import HUB_SHARE, MAX_PER_DOCUMENT, PASSAGE_LEXICAL

__all__ = [
    "DEFAULT_MAX_DOCUMENT_TOKENS",
    "GRANULARITIES",
    "QUERY_VECTOR",
    "TRUNCATED",
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
_CHUNKS = "graphfuse_chunks"
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
    count = document.metadata.get(_CHUNKS)
    return count if isinstance(count, int) and not isinstance(count, bool) else 1


def _lexical(query: str, texts: Sequence[str]) -> list[float]:
    """BM25 of ``query`` over ``texts`` taken as a corpus of their own (idf within the document)."""
    from ._text import bm25_tokens  # compiles its CJK patterns: on first use, not at import

    terms = set(bm25_tokens(query))
    docs = [bm25_tokens(t) for t in texts]
    if not terms or not docs:
        return [0.0] * len(texts)
    n = len(docs)
    avg = sum(len(d) for d in docs) / n or 1.0
    counts = [dict.fromkeys(d, 0) for d in docs]
    for d, c in zip(docs, counts, strict=True):
        for t in d:
            c[t] += 1
    df = {t: sum(1 for c in counts if t in c) for t in terms}
    out: list[float] = []
    for d, c in zip(docs, counts, strict=True):
        score = 0.0
        for t in terms:
            tf = c.get(t, 0)
            if tf:
                idf = math.log(1.0 + (n - df[t] + 0.5) / (df[t] + 0.5))
                score += idf * tf * (_K1 + 1) / (tf + _K1 * (1 - _B + _B * len(d) / avg))
        out.append(score)
    return out


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
    """

    __slots__ = (
        "_embedder",
        "_granularity",
        "_graph",
        "_hub_share",
        "_lexical",
        "_max_doc_tokens",
        "_max_per_doc",
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
        ranked = await self._hydrated(ranked, query)
        if grain == "document":
            return await self._documents(query, ranked, top_k, size)
        return await self._passages(query, ranked, top_k, cap, context)

    async def _hydrated(self, ranked: Sequence[Result], query: Query) -> list[Result]:
        # Only results still without content (a BM25 hit is an id) are loaded; a document no
        # longer there, or outside the filter, is dropped, as the hydrate stage would.
        wanted = [r.id for r in ranked if r.document.content is None]
        if not wanted:
            return list(ranked)
        docs = await self._graph.get_documents(wanted, filter=query.filter)
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
        # Documents past the top_k-th distinct one cannot reach the list (their passages score
        # at most the document's score), so only the first top_k documents are expanded.
        scored: dict[str, tuple[float, int, Result]] = {}
        documents: list[str] = []
        order = 0
        damp = await self._hub_damping(query, ranked[: 4 * top_k])

        def add(result: Result) -> None:
            nonlocal order
            old = scored.get(result.id)
            if old is None or result.score > old[0]:
                scored[result.id] = (result.score, old[1] if old is not None else order, result)
            order += 1

        for r in ranked:
            doc = document_id_of(r.document)
            if doc not in documents:
                # A damped hub does not count towards the documents that fill the list.
                if sum(1 for d in documents if d not in damp) >= top_k:
                    break
                documents.append(doc)
            factor = damp.get(doc, 1.0)
            if r.document.metadata.get(_PARENT) is None and _chunk_count(r.document) > 1:
                for passage in await self._expand(query, r, context):
                    add(_scaled(passage, factor))
            else:
                add(_scaled(r, factor))
        best = sorted(scored.values(), key=lambda t: (-t[0], t[1]))
        return cap_per_document([r for _, _, r in best], cap)[:top_k]

    async def _hub_damping(self, query: Query, ranked: Sequence[Result]) -> dict[str, float]:
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
            for doc_id, page in (await self._graph.get_documents(missing, filter=query.filter)).items():
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

    async def _expand(self, query: Query, result: Result, context: Any) -> list[Result]:
        doc = result.document
        ids = [f"{doc.id}#{i}" for i in range(_chunk_count(doc))]
        found = await self._graph.get_documents(ids, filter=query.filter)
        chunks = [found[i] for i in ids if i in found and found[i].content is not None]
        if not chunks:
            return [result]
        match = _normalised(_lexical(query.text, [c.content or "" for c in chunks]))
        if self._lexical < 1.0 and self._vectors is not None:
            cosine = await self._cosines(query, doc.id, [c.id for c in chunks], context)
            semantic = _normalised(cosine)
            match = [self._lexical * m + (1.0 - self._lexical) * s for m, s in zip(match, semantic, strict=True)]
        top = max(match)
        if top <= 0:
            # Nothing of the query in any chunk: the opening passage stands for the document.
            return [Result(chunks[0], result.score, result.signals, result.contributions)]
        return [
            Result(chunk, result.score * m / top, result.signals, result.contributions)
            for chunk, m in zip(chunks, match, strict=True)
            if m > 0
        ]

    async def _cosines(self, query: Query, parent: str, ids: Sequence[str], context: Any) -> list[float]:
        assert self._vectors is not None
        assert self._embedder is not None
        vector = self._query_vector(context)
        if vector is None:
            vector = list(await self._embedder.embed_query(query.text))
            values = getattr(context, "values", None)
            if isinstance(values, dict):
                values[QUERY_VECTOR] = (self._embedder, vector)
        only = MetadataFilter.parse({_PARENT: parent})
        assert only is not None
        only = only & query.filter
        hits = await self._vectors.search(vector, limit=len(ids), filter=only)
        by_id = {h.id: max(0.0, float(h.score)) for h in hits}
        return [by_id.get(i, 0.0) for i in ids]

    def _query_vector(self, context: Any) -> list[float] | None:
        values = getattr(context, "values", None)
        if not isinstance(values, Mapping):
            return None
        found = values.get(QUERY_VECTOR)
        if isinstance(found, tuple) and len(found) == 2 and found[0] is self._embedder:
            return list(found[1])
        return None

    async def _documents(self, query: Query, ranked: Sequence[Result], top_k: int, size: int) -> list[Result]:
        first: dict[str, Result] = {}
        for r in ranked:
            doc = document_id_of(r.document)
            if doc not in first:
                first[doc] = r
                if len(first) >= top_k:
                    break
        need = [d for d, r in first.items() if r.document.id != d]
        loaded = await self._graph.get_documents(need, filter=query.filter) if need else {}
        out: list[Result] = []
        for d, r in first.items():
            document = r.document if r.document.id == d else loaded.get(d)
            if document is None:
                continue
            out.append(Result(_cut(document, size), r.score, r.signals, r.contributions))
        return out


def _scaled(result: Result, factor: float) -> Result:
    if factor >= 1.0:
        return result
    return Result(result.document, result.score * factor, result.signals, result.contributions)


def _cut(document: Document, size: int) -> Document:
    text = document.content or ""
    spans = [m.span() for m in _TOKEN.finditer(text)]
    if len(spans) <= size:
        return document
    meta = {**document.metadata, TRUNCATED: len(spans) - size}
    return Document(document.id, text[: spans[size - 1][1]], meta, document.created_at, document.updated_at)

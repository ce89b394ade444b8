"""The interfaces a backend, provider, stage or scorer implements (structural: no base class).

Every I/O method is ``async``: GraphFuse is async-first, and its sync entry points
(``Pipeline.retrieve`` and the integrations' sync paths) drive the same coroutines on a
private event loop. Implementations must be safe to share across tasks and threads, and must
never block the event loop for long: blocking I/O goes to a worker thread
(``asyncio.to_thread``); microsecond in-memory work may run inline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ._filters import MetadataFilter
from ._types import (
    Candidate,
    Document,
    Generation,
    Mention,
    Query,
    RelatedDocument,
    Relation,
    VectorHit,
    VectorRecord,
)

__all__ = [
    "CacheStore",
    "Embedder",
    "EntityExtractor",
    "Generator",
    "GraphStore",
    "Reranker",
    "RunContext",
    "Scorer",
    "Stage",
    "TokenCounter",
    "VectorStore",
]


@runtime_checkable
class GraphStore(Protocol):
    """Documents and typed relations; traversal and PageRank.

    Contract (checked by ``graphfuse.testing.GraphStoreContract``):

    - ``store_documents`` upserts by id (re-storing an id replaces it) and is atomic: a batch
      with a duplicate id or an invalid document raises ``InvalidInput`` and writes nothing.
    - ``get_document`` raises ``NotFound``; ``get_documents`` omits missing ids and, with a
      filter, ids whose metadata does not match.
    - ``delete_documents`` removes the documents and every relation touching them; returns how
      many documents existed.
    - ``create_relations`` is idempotent per (source, target, type); a relation to a missing
      document raises ``NotFound`` and writes nothing; a self-loop raises ``InvalidInput``.
    - ``related`` returns documents within ``depth`` hops (1..3) of any seed, excluding the
      seeds, each with its smallest hop distance; relations are traversed in both directions;
      with a filter, only matching documents are returned *or passed through* on any hop.
    - ``pagerank`` returns scores normalised to [0, 1] (max = 1) for the requested ids
      (all when ``None``); ids without a score are omitted.
    """

    async def store_documents(self, documents: Sequence[Document]) -> None: ...

    async def get_document(self, id: str) -> Document: ...

    async def get_documents(
        self, ids: Sequence[str], *, filter: MetadataFilter | None = None
    ) -> dict[str, Document]: ...

    async def delete_documents(self, ids: Sequence[str]) -> int: ...

    async def create_relations(self, relations: Sequence[Relation]) -> None: ...

    async def delete_relations(self, relations: Sequence[Relation]) -> int: ...

    async def related(
        self,
        ids: Sequence[str],
        *,
        depth: int = 2,
        filter: MetadataFilter | None = None,
        relation_types: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[RelatedDocument]: ...

    async def pagerank(self, ids: Sequence[str] | None = None) -> dict[str, float]: ...

    async def close(self) -> None: ...


@runtime_checkable
class VectorStore(Protocol):
    """Vectors with metadata; cosine-similarity search.

    ``upsert`` is idempotent by id and validates the dimension (``InvalidInput`` on a
    mismatch, nothing written). ``search`` returns at most ``limit`` hits, best first, with
    ``score`` the cosine similarity; ``filter`` and ``min_score`` are applied before the limit.
    """

    @property
    def dimension(self) -> int | None: ...

    async def upsert(self, records: Sequence[VectorRecord]) -> None: ...

    async def search(
        self,
        vector: Sequence[float],
        *,
        limit: int = 50,
        filter: MetadataFilter | None = None,
        min_score: float | None = None,
    ) -> list[VectorHit]: ...

    async def delete(self, ids: Sequence[str]) -> int: ...

    async def count(self) -> int: ...

    async def close(self) -> None: ...


@runtime_checkable
class Embedder(Protocol):
    """Turns text into vectors. Query and document embeddings may differ (asymmetric models).

    Returns exactly one vector of ``dimension`` floats per input text, in input order.
    """

    @property
    def dimension(self) -> int: ...

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...

    async def embed_query(self, text: str) -> list[float]: ...


@runtime_checkable
class Reranker(Protocol):
    """Scores documents against a query: one relevance in [0, 1] per document, input order."""

    async def rerank(self, query: str, documents: Sequence[str]) -> list[float]: ...


@runtime_checkable
class CacheStore(Protocol):
    """A bytes key-value cache with optional TTL (seconds)."""

    async def get(self, key: str) -> bytes | None: ...

    async def get_many(self, keys: Sequence[str]) -> list[bytes | None]: ...

    async def set(self, key: str, value: bytes, *, ttl: float | None = None) -> None: ...

    async def set_many(self, items: Mapping[str, bytes], *, ttl: float | None = None) -> None: ...

    async def delete(self, key: str) -> bool: ...

    async def close(self) -> None: ...


@runtime_checkable
class RunContext(Protocol):
    """What a stage sees of the run besides the query and the candidates."""

    @property
    def values(self) -> dict[str, Any]:
        """A per-run mapping that stages may read and write (shared, namespaced by convention)."""
        ...

    def remaining(self) -> float | None:
        """Seconds left before the run's deadline, or ``None`` without one."""
        ...


@runtime_checkable
class Stage(Protocol):
    """A pipeline stage: receives the query and the candidates, returns candidates.

    A stage never sees another stage; it may add, drop, reorder or re-signal candidates.
    The ids it returns must be unique.
    """

    @property
    def name(self) -> str: ...

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> Sequence[Candidate]: ...


@runtime_checkable
class Scorer(Protocol):
    """Turns each candidate's signals into a final score.

    ``score`` returns one float per candidate (input order); ``explain`` returns, per candidate,
    each signal's contribution to that score (used by the CLI and by ``Result.contributions``).
    """

    def score(self, candidates: Sequence[Candidate]) -> list[float]: ...

    def explain(self, candidates: Sequence[Candidate]) -> list[dict[str, float]]: ...


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens of a text for one tokenizer.

    ``name`` identifies the tokenizer in every report (``Context.counter``); ``count`` must
    return a non-negative integer, 0 for the empty string, and be safe to call from threads.
    """

    name: str

    def count(self, text: str) -> int: ...


@runtime_checkable
class Generator(Protocol):
    """Anything that answers chat messages (``[{"role": ..., "content": ...}, ...]``).

    ``max_tokens`` caps the completion. Optional attributes the comparison harness reads when
    present: ``model`` (a string naming the model, part of every cache key), ``context_window``
    (the model's window in tokens: a prompt that cannot fit is refused before the call) and
    ``supports_json_schema`` (``True`` when ``agenerate`` also takes ``json_schema=`` - a
    JSON schema dict the provider enforces on the answer; the judge uses it).

    Register one with the ``register_generators`` plugin hook (kind ``"generator"``);
    ``graphfuse-openai`` provides ``openai`` (chat completions). Errors follow the GraphFuse
    tree: :class:`~graphfuse.RateLimited`, :class:`~graphfuse.ConnectionFailed`,
    :class:`~graphfuse.AuthenticationFailed`, :class:`~graphfuse.InvalidInput`.
    """

    async def agenerate(self, messages: list[dict[str, str]], *, max_tokens: int | None = None) -> Generation: ...


@runtime_checkable
class EntityExtractor(Protocol):
    """Finds entity mentions in one text. Must be safe to call from worker threads."""

    def extract(self, text: str) -> list[Mention]: ...

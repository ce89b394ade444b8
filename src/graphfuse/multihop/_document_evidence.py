"""The document evidence stage: a passage cut out of a longer document gains what its whole document matches."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._core._errors import InvalidInput
from .._core._protocols import RunContext
from .._core._traits import StageTraits
from .._core._types import Candidate, Query
from ..defaults import DOCUMENT_TOP
from ..stages import NamedStage
from ..validation import check_name, check_options, check_positive_int
from ._bm25 import BM25Index

__all__ = ["DocumentEvidence"]

_OPTIONS = ("top",)


class DocumentEvidence(NamedStage):
    """Give each candidate passage the BM25 score of its whole document, for the ``top`` best documents.

    Passages of a ``BM25Index`` whose metadata ``key`` (``"title"``) is the same are taken as
    parts of one document: a conversation cut into chunks, a thread into its messages, an
    article given as paragraphs; a passage with a title no other passage has is a document of
    its own, one without a title none. Per query the stage scores every document as one text
    (its passages' term counts added up, :meth:`BM25Index.merged`) and gives the candidates
    among the passages of the ``top`` best documents the ``document`` signal ``score / best
    score``. A chunk whose conversation is about what the question asks then gains that match
    even when the topic was named in an earlier chunk and the chunk itself holds only the
    answer. It adds no candidate, and needs no store (the groups are read from the index once,
    when the stage is built). A query with a metadata filter is left as it is: a document's
    other passages may lie outside the filter.

    Per-call options (``options={"document": {...}}``): ``top``.
    """

    traits = StageTraits(needs_stores=False)
    """What this stage declares to hosts (:func:`graphfuse.hosts.stage_traits`)."""

    __slots__ = ("_documents", "_members", "_shared", "_top")

    def __init__(
        self,
        index: BM25Index,
        *,
        key: str = "title",
        top: int = DOCUMENT_TOP,
        name: str = "document",
        signal: str = "document",
    ) -> None:
        if not isinstance(index, BM25Index):
            raise InvalidInput(f"index must be a BM25Index, got {index!r}")
        check_name(key, "key")
        self._top = check_positive_int(top, "top")
        groups: dict[str, list[str]] = {}
        for doc_id, meta in zip(index.ids, index.metadata, strict=True):
            value = meta.get(key)
            if isinstance(value, str) and value.strip():
                groups.setdefault(value, []).append(doc_id)
        self._members = {title: tuple(ids) for title, ids in groups.items()}
        self._shared = sum(1 for ids in self._members.values() if len(ids) > 1)
        self._documents = index.merged(self._members)
        self._set_names(name, signal)

    @property
    def shared(self) -> int:
        """How many documents have more than one passage (0: every document is one passage, and
        the signal would only repeat the passage's own BM25 ranking)."""
        return self._shared

    def __len__(self) -> int:
        return len(self._members)

    def __repr__(self) -> str:
        return (
            f"DocumentEvidence({len(self._members)} documents, {self._shared} of several passages, "
            f"top={self._top}, name={self._name!r})"
        )

    def check_options(self, options: Mapping[str, Any]) -> None:
        """Validate this stage's per-call options (raises :class:`~graphfuse.InvalidInput`)."""
        check_options(self._name, options, _OPTIONS)
        check_positive_int(options.get("top", self._top), f"stage {self._name!r} option 'top'")

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        options = query.options.get(self._name, {})
        self.check_options(options)
        # Under a metadata filter a document's other passages may lie outside it: their words
        # must not rank what the query may see, so the stage stands aside.
        if not self._members or not candidates or query.filter is not None:
            return list(candidates)
        hits = self._documents.search(query.text, options.get("top", self._top))
        if not hits:
            return list(candidates)
        best = hits[0][1]
        value = {passage: score / best for title, score in hits for passage in self._members[title]}
        return [c.with_signal(self._signal, value[c.id]) if c.id in value else c for c in candidates]

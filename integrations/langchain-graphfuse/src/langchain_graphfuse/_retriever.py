"""A GraphFuse pipeline as a LangChain retriever."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, field_validator

from graphfuse import InvalidInput, MetadataFilter, Pipeline, Result
from graphfuse.validation import check_keywords

from ._documents import DocumentMapping, combine_filters, from_graphfuse

__all__ = ["GraphFuseRetriever", "check_k"]

_CALL_KNOBS = ("k", "filter", "min_score", "options", "timeout")
# LangChain itself may pass these through ``invoke(..., **kwargs)``.
_IGNORED = ("verbose",)


def check_k(value: object, what: str = "k") -> int:
    """A positive int (bools refused)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInput(f"{what} must be a positive integer, got {value!r}")
    return value


class GraphFuseRetriever(BaseRetriever):
    """Retrieve with a GraphFuse :class:`~graphfuse.Pipeline`.

    ``k`` results (default 4), ``filter`` a metadata filter applied by every stage,
    ``min_score`` a floor on the fused score, ``options`` per-stage options, ``timeout`` seconds.
    Each of them can be given per call and then applies to that call only:
    ``retriever.invoke(q, k=2, filter={"tenant": "acme"})`` (a per-call filter is ANDed with the
    field's, so a scope set on the retriever cannot be widened by a caller).

    ``search_kwargs={"k": 2, "filter": {...}}`` (as on LangChain's ``VectorStoreRetriever``)
    sets the same fields; a field given both ways, an unknown key in ``search_kwargs`` or an
    unknown constructor argument raises :class:`~graphfuse.InvalidInput` (never silently ignored).

    Each document has ``id`` = the GraphFuse id, the content, the stored metadata (timestamps as
    ISO 8601 strings; GraphFuse's internal ``graphfuse_*`` keys left out) and
    ``metadata["graphfuse"]`` with ``query``, ``score``, ``signals`` and ``contributions``.
    ``ainvoke`` awaits ``pipeline.aretrieve`` on the caller's loop.

    Not serializable (``is_lc_serializable()`` is ``False``, ``dumpd`` gives a
    ``"not_implemented"`` stub): the pipeline holds live objects (stores with open connections,
    an embedder with a loaded model) that have no LangChain serialized form. Rebuild the
    retriever in code (or from a ``graphfuse.presets`` name) where a serialized chain is loaded.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    pipeline: Pipeline
    k: int = 4
    filter: dict[str, Any] | None = None
    min_score: float | None = None
    options: dict[str, dict[str, Any]] | None = None
    timeout: float | None = None

    def __init__(self, **data: Any) -> None:
        fields = set(type(self).model_fields)
        unknown = sorted(set(data) - fields - {"search_kwargs"})
        if unknown:
            raise InvalidInput(
                f"GraphFuseRetriever got unknown argument(s) {unknown}; it takes: {', '.join(sorted(fields))}, "
                "search_kwargs"
            )
        search = data.pop("search_kwargs", None)
        if search is not None:
            if not isinstance(search, Mapping):
                raise InvalidInput(f"search_kwargs must be a mapping such as {{'k': 4}}, got {search!r}")
            bad = sorted(set(search) - set(_CALL_KNOBS))
            if bad:
                raise InvalidInput(f"search_kwargs has unknown key(s) {bad}; it takes: {', '.join(_CALL_KNOBS)}")
            twice = sorted(set(search) & set(data))
            if twice:
                raise InvalidInput(f"{twice} given both as argument(s) and in search_kwargs: give each once")
            data.update(search)
        super().__init__(**data)

    @classmethod
    def is_lc_serializable(cls) -> bool:
        """``False``: the pipeline holds live stores and models (see the class docstring)."""
        return False

    @field_validator("k")
    @classmethod
    def _valid_k(cls, value: int) -> int:
        return check_k(value)

    @field_validator("filter")
    @classmethod
    def _valid_filter(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        MetadataFilter.parse(value)
        return value

    def _call(self, kwargs: Mapping[str, Any]) -> dict[str, Any]:
        check_keywords(kwargs, _CALL_KNOBS, "GraphFuseRetriever", hidden=_IGNORED)
        return {
            "top_k": check_k(kwargs.get("k", self.k)),
            "min_score": kwargs.get("min_score", self.min_score),
            "filter": combine_filters(self.filter, kwargs.get("filter")),
            "options": kwargs.get("options", self.options),
            "timeout": kwargs.get("timeout", self.timeout),
        }

    @staticmethod
    def _documents(query: str, results: list[Result], filter: MetadataFilter | None) -> list[Document]:
        mapping = DocumentMapping()
        return [
            from_graphfuse(
                r.document,
                query=query,
                filter=filter,
                signals=r.signals,
                mapping=mapping,
                score=r.score,
                contributions=r.contributions,
            )
            for r in results
        ]

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        call = self._call(kwargs)
        results = self.pipeline.retrieve(query, **call)
        return self._documents(query, results, call["filter"])

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        call = self._call(kwargs)
        results = await self.pipeline.aretrieve(query, **call)
        return self._documents(query, results, call["filter"])

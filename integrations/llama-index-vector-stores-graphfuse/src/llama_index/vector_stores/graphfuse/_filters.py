"""LlamaIndex ``MetadataFilters`` as a GraphFuse metadata filter (applied by every stage)."""

from __future__ import annotations

from typing import Any

from llama_index.core.vector_stores.types import FilterCondition, FilterOperator, MetadataFilter, MetadataFilters

from graphfuse import InvalidInput
from graphfuse import MetadataFilter as GraphFuseFilter

__all__ = ["graphfuse_filter"]

_OPERATORS = {
    FilterOperator.EQ: "$eq",
    FilterOperator.NE: "$ne",
    FilterOperator.GT: "$gt",
    FilterOperator.GTE: "$gte",
    FilterOperator.LT: "$lt",
    FilterOperator.LTE: "$lte",
    FilterOperator.IN: "$in",
    FilterOperator.NIN: "$nin",
}


def _condition(f: MetadataFilter) -> tuple[str, Any]:
    if f.operator == FilterOperator.IS_EMPTY:
        return f.key, {"$exists": False}
    op = _OPERATORS.get(FilterOperator(f.operator))
    if op is None:
        known = ", ".join(o.value for o in (*_OPERATORS, FilterOperator.IS_EMPTY))
        raise InvalidInput(
            f"metadata filter on {f.key!r}: operator {FilterOperator(f.operator).value!r} is not supported by "
            f"GraphFuseVectorStore (supported: {known})"
        )
    value = f.value
    if op in ("$in", "$nin") and not isinstance(value, list):
        raise InvalidInput(f"metadata filter on {f.key!r}: {op[1:]} needs a list of values, got {value!r}")
    return f.key, {op: value}


def graphfuse_filter(filters: MetadataFilters | None, doc_ids: list[str] | None = None) -> GraphFuseFilter | None:
    """``filters`` (an AND of conditions, nested ANDs included) and ``doc_ids`` (nodes whose
    ``ref_doc_id`` is one of them) as one GraphFuse filter, or ``None``.

    GraphFuse filters are conjunctions, pushed into every stage (graph hops included): ``OR``
    and ``NOT``, and the operators without a GraphFuse equivalent (``text_match``, ``contains``,
    ``any``, ``all``), raise :class:`~graphfuse.InvalidInput` naming what was asked. Two
    conditions on one key are refused the same way (write them as one range).
    """
    spec: dict[str, dict[str, Any]] = {}

    def put(key: str, condition: dict[str, Any]) -> None:
        if key in spec and set(spec[key]) & set(condition):
            raise InvalidInput(f"metadata filters: two conditions with the same operator on {key!r}")
        spec.setdefault(key, {}).update(condition)

    def walk(group: MetadataFilters) -> None:
        if group.condition not in (None, FilterCondition.AND) and len(group.filters) > 1:
            raise InvalidInput(
                f"metadata filters: condition {FilterCondition(group.condition).value!r} is not supported by "
                "GraphFuseVectorStore (its filters are conjunctions, applied on every stage): use 'and'"
            )
        if group.condition == FilterCondition.NOT:
            raise InvalidInput("metadata filters: condition 'not' is not supported by GraphFuseVectorStore")
        for item in group.filters:
            if isinstance(item, MetadataFilters):
                walk(item)
            else:
                put(*_condition(item))

    if filters is not None:
        walk(filters)
    if doc_ids is not None:
        put("ref_doc_id", {"$in": list(doc_ids)})
    return GraphFuseFilter.parse(spec) if spec else None

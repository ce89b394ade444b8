"""Translation of GraphFuse metadata filters to Qdrant payload filters."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from qdrant_client import models

from graphfuse import Condition, InvalidInput, MetadataFilter

__all__ = ["to_qdrant_filter"]


def _equals(key: str, value: Any) -> models.FieldCondition:
    # Numbers go through a closed range so that 2 matches 2.0 (as in Python and in
    # MetadataFilter.matches); Qdrant keeps bools apart from numbers on both paths.
    if isinstance(value, (bool, str)):
        return models.FieldCondition(key=key, match=models.MatchValue(value=value))
    return models.FieldCondition(key=key, range=models.Range(gte=value, lte=value))


def _any_of(key: str, values: tuple[Any, ...]) -> models.FieldCondition | models.Filter:
    if all(isinstance(v, str) for v in values):
        return models.FieldCondition(key=key, match=models.MatchAny(any=list(values)))
    return models.Filter(should=[_equals(key, v) for v in values])


def _range(cond: Condition) -> models.FieldCondition:
    if isinstance(cond.value, str):
        raise InvalidInput(
            f"filter {cond.key!r} {cond.op}: Qdrant compares ranges on numbers only, got the string {cond.value!r}"
        )
    bound = {"$gt": "gt", "$gte": "gte", "$lt": "lt", "$lte": "lte"}[cond.op]
    return models.FieldCondition(key=cond.key, range=models.Range(**{bound: cond.value}))


def to_qdrant_filter(spec: MetadataFilter | Mapping[str, Any] | None) -> models.Filter | None:
    """Translate a GraphFuse filter (or its mapping form) to a Qdrant ``models.Filter``.

    Semantics follow :meth:`graphfuse.MetadataFilter.matches`: ``$ne`` and ``$nin`` let a
    document without the key pass; ``$exists: false`` also matches a key holding ``null`` or
    an empty list (Qdrant's ``IsEmpty``). Ranges on strings are not supported by Qdrant and
    raise :class:`~graphfuse.InvalidInput`.
    """
    parsed = MetadataFilter.parse(spec)
    if parsed is None:
        return None
    must: list[models.Condition] = []
    must_not: list[models.Condition] = []
    for cond in parsed.conditions:
        if cond.op == "$eq":
            must.append(_equals(cond.key, cond.value))
        elif cond.op == "$ne":
            must_not.append(_equals(cond.key, cond.value))
        elif cond.op == "$in":
            must.append(_any_of(cond.key, cond.value))
        elif cond.op == "$nin":
            must_not.append(_any_of(cond.key, cond.value))
        elif cond.op == "$exists":
            empty = models.IsEmptyCondition(is_empty=models.PayloadField(key=cond.key))
            (must_not if cond.value else must).append(empty)
        else:
            must.append(_range(cond))
    return models.Filter(must=must or None, must_not=must_not or None)

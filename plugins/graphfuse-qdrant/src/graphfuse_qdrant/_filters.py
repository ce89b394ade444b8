"""Translation of GraphFuse metadata filters to Qdrant payload filters."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from qdrant_client import models

from graphfuse import Condition, InvalidInput, MetadataFilter

__all__ = ["EXACT_INT", "to_qdrant_filter"]

EXACT_INT = 2**53
"""Beyond this magnitude integers are not exact as 64-bit floats (Qdrant's number type)."""
_KEYS = "_graphfuse_keys"  # the payload list of metadata keys (see QdrantVectorStore)


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
    return models.FieldCondition(key=cond.key, range=models.Range(**{_BOUNDS[cond.op]: cond.value}))


_BOUNDS = {"$gt": "gt", "$gte": "gte", "$lt": "lt", "$lte": "lte"}


def to_qdrant_filter(spec: MetadataFilter | Mapping[str, Any] | None) -> models.Filter | None:
    """Translate a GraphFuse filter (or its mapping form) to a Qdrant ``models.Filter``.

    The results are those of :meth:`graphfuse.MetadataFilter.matches` on the payload that
    :class:`~graphfuse_qdrant.QdrantVectorStore` writes (scalar metadata values as fields,
    the list of keys under ``_graphfuse_keys``, which ``$exists`` reads, so a ``null`` value
    exists and a list value never equals a scalar): ``$ne`` and ``$nin`` let a document
    without the key pass. What Qdrant cannot express exactly raises
    :class:`~graphfuse.InvalidInput`: ranges on strings, integers beyond +-2**53.
    """
    parsed = MetadataFilter.parse(spec)
    if parsed is None:
        return None
    must: list[models.Condition] = []
    must_not: list[models.Condition] = []
    for cond in parsed.conditions:
        if cond.key.startswith("_graphfuse_"):
            raise InvalidInput(f"filter key {cond.key!r} is reserved by graphfuse-qdrant")
        values = cond.value if isinstance(cond.value, tuple) else (cond.value,)
        for v in values:
            if isinstance(v, int) and not isinstance(v, bool) and abs(v) > EXACT_INT:
                raise InvalidInput(
                    f"filter {cond.key!r} {cond.op}: {v} is beyond +-2**53, where Qdrant's number "
                    "comparisons (64-bit floats) are no longer exact"
                )
        if cond.op == "$eq":
            must.append(_equals(cond.key, cond.value))
        elif cond.op == "$ne":
            must_not.append(_equals(cond.key, cond.value))
        elif cond.op == "$in":
            must.append(_any_of(cond.key, cond.value))
        elif cond.op == "$nin":
            must_not.append(_any_of(cond.key, cond.value))
        elif cond.op == "$exists":
            listed = models.FieldCondition(key=_KEYS, match=models.MatchValue(value=cond.key))
            (must if cond.value else must_not).append(listed)
        elif cond.op in _BOUNDS:
            must.append(_range(cond))
        else:
            raise InvalidInput(f"filter {cond.key!r}: operator {cond.op!r} has no Qdrant translation")
    return models.Filter(must=must or None, must_not=must_not or None)

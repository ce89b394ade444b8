"""Random metadata and filters for the differential filter tests of the store contracts.

A backend translating :class:`~graphfuse.MetadataFilter` to its own query language must
agree with :meth:`~graphfuse.MetadataFilter.matches` (the reference), or refuse what it
cannot express with :class:`~graphfuse.InvalidInput`. The values here are the tricky ones:
lists (which some engines match element-wise), ``null``, booleans next to ``0``/``1``,
``2`` next to ``2.0``, integers beyond 2**53, strings that differ only in case or accent.
"""

from __future__ import annotations

import random
from typing import Any

__all__ = ["random_filter", "random_metadata"]

KEYS = ("k0", "k1", "k2", "k3")
SCALARS: tuple[Any, ...] = (
    0, 1, 2, 3, -2, 2.0, 0.5, -1.5, 1e300, 2**53, 2**53 + 1, -(2**60),
    True, False, "a", "b", "A", "", "é", "e",
)  # fmt: skip
OTHERS: tuple[Any, ...] = (None, ["a", "b"], ["a"], [1, 2], [], {"x": 1})
_OPS = ("$eq", "$ne", "$in", "$nin", "$gt", "$gte", "$lt", "$lte", "$exists")


def random_metadata(rng: random.Random) -> dict[str, Any]:
    """Metadata with 0-4 of the keys, each a tricky scalar, list, ``null`` or object."""
    out: dict[str, Any] = {}
    for key in KEYS:
        if rng.random() < 0.7:
            out[key] = rng.choice(SCALARS) if rng.random() < 0.75 else rng.choice(OTHERS)
    return out


def random_filter(rng: random.Random) -> dict[str, dict[str, Any]]:
    """A filter of 1-2 conditions over the same keys (mapping form)."""
    spec: dict[str, dict[str, Any]] = {}
    for _ in range(rng.randint(1, 2)):
        key, op = rng.choice(KEYS), rng.choice(_OPS)
        if op == "$exists":
            value: Any = rng.random() < 0.5
        elif op in ("$in", "$nin"):
            value = rng.sample(SCALARS, rng.randint(1, 3))
        else:
            value = rng.choice(SCALARS)
        spec.setdefault(key, {})[op] = value
    return spec

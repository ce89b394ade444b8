"""Argument checks GraphFuse's own stages use, public for integrations and plugins.

Each returns the checked value or raises :class:`~graphfuse.InvalidInput` naming ``what``,
so a host validates its options with the same messages as the core.
"""

from ._types import check_id, check_signal
from .stages._arguments import (
    check_choice,
    check_half_life,
    check_keywords,
    check_name,
    check_options,
    check_positive_int,
    check_relation_types,
    check_timedelta,
    check_unit,
    check_vector,
    check_vector_records,
    check_vectors,
    combine_filters,
    require_hydrated,
)

__all__ = [
    "check_choice",
    "check_half_life",
    "check_id",
    "check_keywords",
    "check_name",
    "check_options",
    "check_positive_int",
    "check_relation_types",
    "check_signal",
    "check_timedelta",
    "check_unit",
    "check_vector",
    "check_vector_records",
    "check_vectors",
    "combine_filters",
    "require_hydrated",
]

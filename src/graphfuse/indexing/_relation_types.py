"""The relation types the indexer writes between documents, chunks and entity nodes."""

from __future__ import annotations

__all__ = ["CO_MENTION", "CO_OCCURS_WITH", "LINKS_TO", "MENTIONED_IN", "MENTIONS", "PART_OF", "Rel"]

LINKS_TO = "LINKS_TO"
"""Relation type from a document to each id in its ``links``."""
MENTIONS = "MENTIONS"
"""Relation type from a unit to a document one of its mentions names as a target."""
CO_MENTION = "CO_MENTION"
"""Relation type between units of different documents mentioning the same entity (no entity graph)."""
PART_OF = "PART_OF"
"""Relation type from a chunk node to its document."""
MENTIONED_IN = "MENTIONED_IN"
"""Relation type from an entity node to each unit that mentions it (``entity_graph=True``)."""
CO_OCCURS_WITH = "CO_OCCURS_WITH"
"""Relation type between entity nodes mentioned in one unit (``entity_graph=True``)."""

Rel = tuple[str, str, str]
"""A relation as ``(source id, target id, type)``."""

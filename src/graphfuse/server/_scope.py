"""What one request may see: the tenant of its key, pushed into every store call.

With keys, a tenant's documents are stored under ids ``<tenant>/<id>`` with the metadata
``tenant: <tenant>`` (its entity nodes under ``graphfuse:entity:<tenant>/<key>``); the tenant
filter is ANDed into every store call and graph hop, a client's filter may only narrow it, and
every result is checked again before it leaves. Without keys the scope is the whole store. See
``docs/server.md``, "Keys and tenants".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._core._errors import InvalidInput
from .._core._filters import MetadataFilter
from .._core._types import ENTITY_PREFIX, check_id
from ..indexing import SourceRecord
from ._problems import Problem

__all__ = ["RESERVED_PREFIX", "TENANT_KEY", "Scope"]

TENANT_KEY = "tenant"
"""The metadata key that holds a document's tenant."""
RESERVED_PREFIX = "graphfuse_"
"""Metadata keys the indexer keeps for itself; clients may not write them."""
_MAX_ID = 512


@dataclass(frozen=True)
class Scope:
    """The tenant a request acts for (``None``: the whole store, no keys configured)."""

    tenant: str | None

    @property
    def prefix(self) -> str:
        return "" if self.tenant is None else f"{self.tenant}/"

    # -- ids -------------------------------------------------------------------------------

    def internal(self, doc_id: str, field: str = "id") -> str:
        """The stored id of the client's ``doc_id``."""
        try:
            check_id(doc_id, field)
        except InvalidInput as exc:
            raise Problem.invalid(field, str(exc)) from exc
        stored = self.prefix + doc_id
        if len(stored) > _MAX_ID:
            raise Problem.invalid(field, f"{field} is too long: at most {_MAX_ID - len(self.prefix)} characters")
        return stored

    @property
    def entity_prefix(self) -> str:
        """How the ids of this scope's entity nodes start: ``graphfuse:entity:<tenant>/``."""
        return ENTITY_PREFIX + self.prefix

    def external(self, stored_id: str) -> str | None:
        """The client's id of a stored id, or ``None`` when it is outside this scope.

        The tenant's entity nodes (``graphfuse:entity:<tenant>/<key>``) show as
        ``graphfuse:entity:<key>``, as in a store without tenants.
        """
        if self.tenant is None:
            return stored_id
        if stored_id.startswith(self.prefix):
            return stored_id[len(self.prefix) :]
        if stored_id.startswith(self.entity_prefix):
            return ENTITY_PREFIX + stored_id[len(self.entity_prefix) :]
        return None

    def visible(self, stored_id: str, metadata: Mapping[str, Any]) -> bool:
        """True when a stored document belongs to this scope (its id and its metadata agree)."""
        if self.tenant is None:
            return True
        own = stored_id.startswith(self.prefix) or stored_id.startswith(self.entity_prefix)
        return own and metadata.get(TENANT_KEY) == self.tenant

    # -- filters ---------------------------------------------------------------------------

    @property
    def base_filter(self) -> MetadataFilter | None:
        """The tenant condition alone (``None`` without tenants)."""
        return None if self.tenant is None else MetadataFilter.parse({TENANT_KEY: self.tenant})

    def filter(self, client: Any, field: str = "filter") -> MetadataFilter | None:
        """The client's filter (validated) ANDed with the tenant condition."""
        try:
            parsed = MetadataFilter.parse(client)
        except InvalidInput as exc:
            raise Problem.invalid(field, str(exc)) from exc
        conditions = () if parsed is None else parsed.conditions
        if self.tenant is not None and any(c.key == TENANT_KEY for c in conditions):
            raise Problem.invalid(
                f"{field}.{TENANT_KEY}", "the tenant comes from the API key; a filter may not name it"
            )
        base = self.base_filter
        if base is None:
            return parsed
        return MetadataFilter((*base.conditions, *conditions))

    # -- ingest ----------------------------------------------------------------------------

    def stamp(self, record: SourceRecord, field: str) -> SourceRecord:
        """``record`` as stored for this scope: namespaced id and links, tenant metadata."""
        metadata = dict(record.metadata)
        for key in metadata:
            if key.startswith(RESERVED_PREFIX):
                raise Problem.invalid(
                    f"{field}.metadata.{key}", f"metadata keys starting with {RESERVED_PREFIX!r} are reserved"
                )
        if self.tenant is not None:
            given = metadata.get(TENANT_KEY)
            if given is not None and given != self.tenant:
                raise Problem.invalid(
                    f"{field}.metadata.{TENANT_KEY}",
                    "the tenant comes from the API key; it cannot be another one",
                )
            metadata[TENANT_KEY] = self.tenant
        return SourceRecord(
            id=self.internal(record.id, f"{field}.id"),
            text=record.text,
            title=record.title,
            metadata=metadata,
            created_at=record.created_at,
            links=tuple(self.internal(x, f"{field}.links") for x in record.links),
        )

"""Cypher for every Neo4jGraphStore operation, built by pure functions (tested without a server).

Values always travel as parameters. The only identifiers placed in the Cypher text are the
node label, relationship types and metadata property keys, each validated against a strict
pattern and back-quoted first. A document node holds ``id``, ``content``, its timestamps, its
whole ``metadata`` as JSON (the source of truth), a ``meta_<key>`` copy of each scalar value
that filters compare against and ``graphfuse_meta_keys`` (for ``$exists``). Storage layout:
``docs/backends/neo4j.md``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from graphfuse import Document, InvalidInput, MetadataFilter, Relation

__all__ = [
    "META_KEYS",
    "META_PREFIX",
    "PAGERANK_PROPERTY",
    "Statement",
    "check_identifier",
    "constraint_statement",
    "delete_documents_statement",
    "delete_relations_statements",
    "document_rows",
    "edges_statement",
    "filter_expression",
    "gds_available_statement",
    "gds_pagerank_statements",
    "get_documents_statement",
    "merge_relations_statements",
    "missing_documents_statement",
    "nodes_statement",
    "pagerank_mark_statement",
    "pagerank_scores_statement",
    "pagerank_status_statement",
    "pagerank_write_statement",
    "related_statement",
    "store_documents_statement",
    "to_document",
]

Statement = tuple[str, dict[str, Any]]
"""A Cypher query and its parameters."""

META_PREFIX = "meta_"
META_KEYS = "graphfuse_meta_keys"

# Used with fullmatch: "$" would also accept a trailing newline ("KNOWS\n").
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_PROPERTY_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]{0,127}")


def check_identifier(name: object, what: str) -> str:
    """Return ``name`` if it is safe as a label or relationship type, else raise ``InvalidInput``."""
    if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name):
        raise InvalidInput(
            f"{what} {name!r} is not valid: letters, digits and '_', starting with a letter or '_', "
            "at most 64 characters"
        )
    return name


def _property(key: str) -> str:
    if not isinstance(key, str) or not _PROPERTY_KEY.fullmatch(key):
        raise InvalidInput(f"metadata key {key!r} cannot be filtered on: letters, digits, '_' and '-' only")
    return f"`{META_PREFIX}{key}`"


_INT64 = range(-(2**63), 2**63)


def _is_scalar(value: object) -> bool:
    # Integers beyond 64 bits cannot be Neo4j properties: they stay in the JSON copy only.
    if isinstance(value, int) and not isinstance(value, bool):
        return value in _INT64
    return isinstance(value, (str, bool)) or (isinstance(value, float) and math.isfinite(value))


# -- documents -------------------------------------------------------------------------------


def document_rows(documents: Sequence[Document]) -> list[dict[str, Any]]:
    """Validate a batch and turn each document into the property map of its node.

    Raises ``InvalidInput`` for a non-document, a duplicate id, a non-string metadata key or
    metadata that is not JSON-serialisable: the whole batch is refused before any write.
    """
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for doc in documents:
        if not isinstance(doc, Document):
            raise InvalidInput(f"expected Document, got {type(doc).__name__}")
        if doc.id in seen:
            raise InvalidInput(f"document id {doc.id!r} appears twice in one batch")
        seen.add(doc.id)
        for key in doc.metadata:
            if not isinstance(key, str):
                raise InvalidInput(f"document {doc.id!r}: metadata keys must be strings, got {key!r}")
        try:
            encoded = json.dumps(dict(doc.metadata), allow_nan=False, sort_keys=True)
        except (TypeError, ValueError) as exc:
            raise InvalidInput(f"document {doc.id!r}: metadata must be JSON-serialisable: {exc}") from exc
        props: dict[str, Any] = {
            "id": doc.id,
            "content": doc.content,
            "metadata": encoded,
            "created_at": doc.created_at,
            "updated_at": doc.updated_at,
            # None (not stored) rather than an empty list; filters read it through coalesce().
            META_KEYS: sorted(doc.metadata) or None,
        }
        for key, value in doc.metadata.items():
            if _PROPERTY_KEY.fullmatch(key) and _is_scalar(value):
                props[META_PREFIX + key] = value
        rows.append(props)
    return rows


def store_documents_statement(label: str, rows: list[dict[str, Any]]) -> Statement:
    """Upsert: ``SET d = row`` replaces every property, so a re-stored document loses old keys."""
    label = check_identifier(label, "label")
    query = f"UNWIND $rows AS row\nMERGE (d:`{label}` {{id: row.id}})\nSET d = row"
    return query, {"rows": rows}


def get_documents_statement(label: str, ids: Sequence[str], flt: MetadataFilter | None) -> Statement:
    label = check_identifier(label, "label")
    params: dict[str, Any] = {"ids": list(ids)}
    where = "d.id IN $ids"
    if flt is not None:
        where += f" AND {filter_expression(flt, 'd', params)}"
    query = (
        f"MATCH (d:`{label}`)\nWHERE {where}\n"
        "RETURN d.id AS id, d.content AS content, d.metadata AS metadata, "
        "d.created_at AS created_at, d.updated_at AS updated_at"
    )
    return query, params


def document_page_statement(label: str, after: str | None, size: int, flt: MetadataFilter | None) -> Statement:
    """Up to ``size`` documents with ids after ``after`` (all when ``None``), by id: keyset
    pagination on the unique id index, so a page costs the same wherever it starts."""
    label = check_identifier(label, "label")
    params: dict[str, Any] = {"after": after, "size": size}
    where = "($after IS NULL OR d.id > $after)"
    if flt is not None:
        where += f" AND {filter_expression(flt, 'd', params)}"
    query = (
        f"MATCH (d:`{label}`)\nWHERE {where}\n"
        "RETURN d.id AS id, d.content AS content, d.metadata AS metadata, "
        "d.created_at AS created_at, d.updated_at AS updated_at\n"
        "ORDER BY d.id\nLIMIT $size"
    )
    return query, params


# One node per document label holds its write generation (a distinct label: it is no document).
META_LABEL = "GraphFuseMeta"


def bump_generation_statement(label: str) -> Statement:
    """Count one write to the documents of ``label``: run in the writing transaction, so the
    generation moves exactly when the write commits."""
    label = check_identifier(label, "label")
    query = f"MERGE (m:`{META_LABEL}` {{label: $label}})\nSET m.generation = coalesce(m.generation, 0) + 1"
    return query, {"label": label}


def generation_statement(label: str) -> Statement:
    """The write generation of the documents of ``label`` (0 before the first write)."""
    label = check_identifier(label, "label")
    # (max: one row even if a store made without its schema raced two MERGEs into two nodes.)
    query = f"OPTIONAL MATCH (m:`{META_LABEL}` {{label: $label}})\nRETURN coalesce(max(m.generation), 0) AS generation"
    return query, {"label": label}


def meta_constraint_statement() -> str:
    """One generation node per label: concurrent writers' ``MERGE`` of it lock the same node."""
    return f"CREATE CONSTRAINT `graphfuse_meta_label` IF NOT EXISTS FOR (m:`{META_LABEL}`) REQUIRE m.label IS UNIQUE"


def delete_documents_statement(label: str, ids: Sequence[str]) -> Statement:
    label = check_identifier(label, "label")
    query = f"MATCH (d:`{label}`)\nWHERE d.id IN $ids\nDETACH DELETE d\nRETURN count(*) AS deleted"
    return query, {"ids": list(dict.fromkeys(ids))}


def constraint_statement(label: str) -> str:
    """The unique-id constraint (which also indexes ``id``), created only if missing."""
    label = check_identifier(label, "label")
    name = f"graphfuse_{label.lower()}_id"
    return f"CREATE CONSTRAINT `{name}` IF NOT EXISTS FOR (d:`{label}`) REQUIRE d.id IS UNIQUE"


# -- relations -------------------------------------------------------------------------------


def _by_type(relations: Sequence[Relation]) -> dict[str, list[Relation]]:
    groups: dict[str, list[Relation]] = {}
    for rel in relations:
        if not isinstance(rel, Relation):
            raise InvalidInput(f"expected Relation, got {type(rel).__name__}")
        groups.setdefault(check_identifier(rel.type, "relation type"), []).append(rel)
    return groups


def missing_documents_statement(label: str, ids: Sequence[str]) -> Statement:
    """Which of ``ids`` have no document node."""
    label = check_identifier(label, "label")
    query = (
        f"UNWIND $ids AS id\nOPTIONAL MATCH (d:`{label}` {{id: id}})\n"
        "WITH id, d WHERE d IS NULL\nRETURN collect(id) AS missing"
    )
    return query, {"ids": sorted(set(ids))}


def merge_relations_statements(label: str, relations: Sequence[Relation]) -> list[Statement]:
    """One ``MERGE`` per relation type (a type cannot be a parameter); idempotent.

    Raises ``InvalidInput`` for a self-loop, a bad type or unserialisable relation metadata.
    """
    label = check_identifier(label, "label")
    statements: list[Statement] = []
    for rel_type, group in _by_type(relations).items():
        rows: dict[tuple[str, str], dict[str, Any]] = {}
        for rel in group:
            if rel.source == rel.target:
                raise InvalidInput(f"relation {rel.source!r} -> itself ({rel.type}) is a self-loop")
            try:
                encoded = json.dumps(dict(rel.metadata), allow_nan=False, sort_keys=True)
            except (TypeError, ValueError) as exc:
                raise InvalidInput(f"relation {rel.source!r} -> {rel.target!r}: metadata: {exc}") from exc
            rows[(rel.source, rel.target)] = {
                "source": rel.source,
                "target": rel.target,
                "weight": float(rel.weight),
                "metadata": encoded,
            }
        query = (
            f"UNWIND $rows AS row\nMATCH (s:`{label}` {{id: row.source}}), (t:`{label}` {{id: row.target}})\n"
            f"MERGE (s)-[r:`{rel_type}`]->(t)\nSET r.weight = row.weight, r.metadata = row.metadata"
        )
        statements.append((query, {"rows": list(rows.values())}))
    return statements


def delete_relations_statements(label: str, relations: Sequence[Relation]) -> list[Statement]:
    label = check_identifier(label, "label")
    statements: list[Statement] = []
    for rel_type, group in _by_type(relations).items():
        pairs = list(dict.fromkeys((r.source, r.target) for r in group))
        query = (
            f"UNWIND $rows AS row\n"
            f"MATCH (:`{label}` {{id: row.source}})-[r:`{rel_type}`]->(:`{label}` {{id: row.target}})\n"
            "DELETE r\nRETURN count(*) AS deleted"
        )
        statements.append((query, {"rows": [{"source": s, "target": t} for s, t in pairs]}))
    return statements


# -- traversal -------------------------------------------------------------------------------


def related_statement(
    label: str,
    seeds: Sequence[str],
    *,
    depth: int,
    flt: MetadataFilter | None,
    relation_types: Sequence[str] | None,
    limit: int | None,
) -> Statement:
    """Documents within ``depth`` hops of any seed, undirected, with their smallest distance.

    Every node after the seed on a path must be a document node and match the filter, so a
    filtered-out document is neither returned nor passed through. Each result names the
    earliest seed (in ``seeds`` order) at its smallest distance; ordered by distance, then id.
    """
    label = check_identifier(label, "label")
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= 3:
        raise InvalidInput(f"depth must be 1, 2 or 3, got {depth!r}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise InvalidInput(f"limit must be a non-negative integer or None, got {limit!r}")
    params: dict[str, Any] = {"seeds": list(dict.fromkeys(seeds))}
    types = ""
    if relation_types is not None:
        checked = [check_identifier(t, "relation type") for t in dict.fromkeys(relation_types)]
        if not checked:
            raise InvalidInput("relation_types must name at least one type (or be None for all)")
        types = ":" + "|".join(f"`{t}`" for t in checked)
    node_test = f"x:`{label}`"
    if flt is not None:
        node_test += f" AND {filter_expression(flt, 'x', params)}"
    query = (
        f"MATCH (seed:`{label}`) WHERE seed.id IN $seeds\n"
        f"MATCH p = (seed)-[{types}*1..{depth}]-(n:`{label}`)\n"
        f"WHERE NOT n.id IN $seeds AND ALL(x IN nodes(p)[1..] WHERE {node_test})\n"
        "WITH n.id AS doc_id, seed.id AS seed_id, length(p) AS hops,\n"
        "     [i IN range(0, size($seeds) - 1) WHERE $seeds[i] = seed.id][0] AS seed_rank\n"
        "ORDER BY hops, seed_rank\n"
        "WITH doc_id, collect({seed: seed_id, distance: hops})[0] AS best\n"
        "RETURN doc_id AS id, best.distance AS distance, best.seed AS seed\n"
        "ORDER BY distance, id"
    )
    if limit is not None:
        query += "\nLIMIT $limit"
        params["limit"] = limit
    return query, params


_RANGE = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}


def filter_expression(flt: MetadataFilter, var: str, params: dict[str, Any]) -> str:
    """A Cypher boolean expression over node ``var`` for ``flt``; adds its values to ``params``.

    Follows :meth:`graphfuse.MetadataFilter.matches`: ``$ne``/``$nin`` pass a missing key;
    Cypher's typed comparisons keep ``true`` apart from ``1`` and make a range over mixed
    types false.
    """
    check_identifier(var, "variable")
    parts: list[str] = []
    for cond in flt.conditions:
        name = f"f{len(params)}"
        while name in params:
            name += "_"
        prop = f"{var}.{_property(cond.key)}"
        value = list(cond.value) if isinstance(cond.value, tuple) else cond.value
        params[name] = value
        if cond.op == "$eq":
            parts.append(f"{prop} = ${name}")
        elif cond.op == "$ne":
            parts.append(f"({prop} IS NULL OR {prop} <> ${name})")
        elif cond.op == "$in":
            parts.append(f"{prop} IN ${name}")
        elif cond.op == "$nin":
            parts.append(f"({prop} IS NULL OR NOT {prop} IN ${name})")
        elif cond.op == "$exists":
            params[name] = cond.key
            test = f"${name} IN coalesce({var}.{META_KEYS}, [])"
            parts.append(test if cond.value else f"NOT {test}")
        elif cond.op in _RANGE:
            parts.append(f"{prop} {_RANGE[cond.op]} ${name}")
        else:
            raise InvalidInput(f"filter {cond.key!r}: operator {cond.op!r} has no Cypher translation")
    return "(" + " AND ".join(parts) + ")"


# -- pagerank --------------------------------------------------------------------------------


def gds_available_statement() -> str:
    """Returns one row when the Graph Data Science library is installed (errors otherwise)."""
    return "RETURN gds.version() AS gdsVersion"


def gds_pagerank_statements(label: str, graph_name: str) -> tuple[Statement, Statement, Statement]:
    """Project the document graph (isolated nodes included), stream weighted PageRank, drop it."""
    label = check_identifier(label, "label")
    project = (
        f"MATCH (s:`{label}`)\nOPTIONAL MATCH (s)-[r]->(t:`{label}`)\n"
        "WITH gds.graph.project($graph, s, t, {relationshipProperties: r {.weight}}) AS g\n"
        "RETURN g.nodeCount AS nodes"
    )
    stream = (
        "CALL gds.pageRank.stream($graph, {relationshipWeightProperty: 'weight'})\n"
        "YIELD nodeId, score\nRETURN gds.util.asNode(nodeId).id AS id, score"
    )
    drop = "CALL gds.graph.drop($graph, false) YIELD graphName RETURN graphName"
    params = {"graph": graph_name}
    return (project, params), (stream, dict(params)), (drop, dict(params))


def nodes_statement(label: str) -> Statement:
    label = check_identifier(label, "label")
    return f"MATCH (d:`{label}`) RETURN d.id AS id", {}


def edges_statement(label: str) -> Statement:
    label = check_identifier(label, "label")
    query = (
        f"MATCH (s:`{label}`)-[r]->(t:`{label}`)\n"
        "RETURN s.id AS source, t.id AS target, coalesce(r.weight, 1.0) AS weight"
    )
    return query, {}


# -- stored pagerank -------------------------------------------------------------------------

PAGERANK_PROPERTY = "graphfuse_pagerank"
"""The document node property holding its PageRank, normalised so the maximum is 1."""


def pagerank_status_statement(label: str) -> Statement:
    """The write generation of ``label`` and the generation its stored PageRank was computed at
    (``ranked_at``, null before the first refresh). The scores are fresh when the two are equal:
    every write moves ``generation`` (:func:`bump_generation_statement`), which is what marks
    them stale."""
    label = check_identifier(label, "label")
    query = (
        f"OPTIONAL MATCH (m:`{META_LABEL}` {{label: $label}})\n"
        "RETURN coalesce(max(m.generation), 0) AS generation, max(m.pagerank_generation) AS ranked_at"
    )
    return query, {"label": label}


def pagerank_scores_statement(label: str, ids: Sequence[str] | None) -> Statement:
    """The stored PageRank of ``ids`` (one lookup each on the unique id index), or of every
    document when ``ids`` is ``None``; a document without a stored score is left out."""
    label = check_identifier(label, "label")
    if ids is None:
        query = (
            f"MATCH (d:`{label}`)\nWHERE d.`{PAGERANK_PROPERTY}` IS NOT NULL\n"
            f"RETURN d.id AS id, d.`{PAGERANK_PROPERTY}` AS score"
        )
        return query, {}
    query = (
        f"UNWIND $ids AS id\nMATCH (d:`{label}` {{id: id}})\nWHERE d.`{PAGERANK_PROPERTY}` IS NOT NULL\n"
        f"RETURN d.id AS id, d.`{PAGERANK_PROPERTY}` AS score"
    )
    return query, {"ids": list(dict.fromkeys(ids))}


def pagerank_write_statement(label: str, rows: list[dict[str, Any]]) -> Statement:
    """Store refreshed scores: ``rows`` of ``{"id": ..., "score": ...}`` (batched by the caller)."""
    label = check_identifier(label, "label")
    query = f"UNWIND $rows AS row\nMATCH (d:`{label}` {{id: row.id}})\nSET d.`{PAGERANK_PROPERTY}` = row.score"
    return query, {"rows": rows}


def pagerank_mark_statement(label: str, generation: int) -> Statement:
    """Record that the stored scores were computed at ``generation`` (does not move it)."""
    label = check_identifier(label, "label")
    query = f"MERGE (m:`{META_LABEL}` {{label: $label}})\nSET m.pagerank_generation = $generation"
    return query, {"label": label, "generation": generation}


def to_document(record: Mapping[str, Any]) -> Document:
    """Rebuild a :class:`~graphfuse.Document` from a ``get_documents_statement`` row."""

    def native(value: Any) -> datetime | None:
        if value is None:
            return None
        return value.to_native() if hasattr(value, "to_native") else value  # type: ignore[no-any-return]

    raw = record["metadata"]
    metadata = json.loads(raw) if raw else {}
    return Document(
        record["id"],
        record["content"],
        metadata,
        created_at=native(record["created_at"]),
        updated_at=native(record["updated_at"]),
    )

"""The Cypher text and parameters of every Neo4jGraphStore operation, and the injection guards."""

from __future__ import annotations

import json
import re
import textwrap
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from graphfuse_neo4j import _cypher as cypher

from graphfuse import Condition, Document, InvalidInput, MetadataFilter, Relation

L = "GraphFuseDocument"


def _filter(spec: dict[str, Any]) -> MetadataFilter:
    parsed = MetadataFilter.parse(spec)
    assert parsed is not None
    return parsed


def test_constraint_is_idempotent_ddl() -> None:
    assert cypher.constraint_statement(L) == (
        "CREATE CONSTRAINT `graphfuse_graphfusedocument_id` IF NOT EXISTS "
        "FOR (d:`GraphFuseDocument`) REQUIRE d.id IS UNIQUE"
    )


def test_document_rows() -> None:
    when = datetime(2024, 5, 6, tzinfo=timezone.utc)
    rows = cypher.document_rows(
        [
            Document("a", "text", {"tenant": "t1", "year": 2024, "tags": ["x"], "odd key": 1, "none": None}, when),
            Document("b"),
        ]
    )
    assert rows[0] == {
        "id": "a",
        "content": "text",
        "metadata": json.dumps(
            {"none": None, "odd key": 1, "tags": ["x"], "tenant": "t1", "year": 2024}, sort_keys=True
        ),
        "created_at": when,
        "updated_at": None,
        "graphfuse_meta_keys": ["none", "odd key", "tags", "tenant", "year"],
        "meta_tenant": "t1",
        "meta_year": 2024,
    }
    assert rows[1]["graphfuse_meta_keys"] is None
    assert rows[1]["content"] is None


@pytest.mark.parametrize(
    "batch",
    [
        [Document("a"), Document("a")],
        [Document("a"), {"id": "b"}],
        [Document("a", metadata={"x": object()})],
        [Document("a", metadata={1: "int key"})],  # type: ignore[dict-item]
    ],
)
def test_document_rows_refuses_bad_batches(batch: list[Any]) -> None:
    with pytest.raises(InvalidInput):
        cypher.document_rows(batch)


def test_store_documents_statement() -> None:
    rows = [{"id": "a"}]
    assert cypher.store_documents_statement(L, rows) == (
        "UNWIND $rows AS row\nMERGE (d:`GraphFuseDocument` {id: row.id})\nSET d = row",
        {"rows": rows},
    )


def test_get_documents_statement() -> None:
    query, params = cypher.get_documents_statement(L, ["a", "b"], None)
    assert query == (
        "MATCH (d:`GraphFuseDocument`)\nWHERE d.id IN $ids\n"
        "RETURN d.id AS id, d.content AS content, d.metadata AS metadata, "
        "d.created_at AS created_at, d.updated_at AS updated_at"
    )
    assert params == {"ids": ["a", "b"]}
    query, params = cypher.get_documents_statement(L, ["a"], _filter({"tenant": "t1"}))
    assert "WHERE d.id IN $ids AND (d.`meta_tenant` = $f1)\n" in query
    assert params == {"ids": ["a"], "f1": "t1"}


def test_document_page_statement() -> None:
    query, params = cypher.document_page_statement(L, None, 500, None)
    assert query == (
        "MATCH (d:`GraphFuseDocument`)\nWHERE ($after IS NULL OR d.id > $after)\n"
        "RETURN d.id AS id, d.content AS content, d.metadata AS metadata, "
        "d.created_at AS created_at, d.updated_at AS updated_at\n"
        "ORDER BY d.id\nLIMIT $size"
    )
    assert params == {"after": None, "size": 500}
    query, params = cypher.document_page_statement(L, "doc-9", 2, _filter({"tenant": "t1"}))
    assert "WHERE ($after IS NULL OR d.id > $after) AND (d.`meta_tenant` = $f2)\n" in query
    assert params == {"after": "doc-9", "size": 2, "f2": "t1"}
    with pytest.raises(InvalidInput):
        cypher.document_page_statement("Bad Label", None, 1, None)


def test_generation_statements() -> None:
    assert cypher.bump_generation_statement(L) == (
        "MERGE (m:`GraphFuseMeta` {label: $label})\nSET m.generation = coalesce(m.generation, 0) + 1",
        {"label": L},
    )
    assert cypher.generation_statement(L) == (
        "OPTIONAL MATCH (m:`GraphFuseMeta` {label: $label})\nRETURN coalesce(max(m.generation), 0) AS generation",
        {"label": L},
    )
    assert cypher.meta_constraint_statement() == (
        "CREATE CONSTRAINT `graphfuse_meta_label` IF NOT EXISTS FOR (m:`GraphFuseMeta`) REQUIRE m.label IS UNIQUE"
    )
    with pytest.raises(InvalidInput):
        cypher.bump_generation_statement("Bad Label")


def test_delete_documents_statement() -> None:
    assert cypher.delete_documents_statement(L, ["a", "b", "a"]) == (
        "MATCH (d:`GraphFuseDocument`)\nWHERE d.id IN $ids\nDETACH DELETE d\nRETURN count(*) AS deleted",
        {"ids": ["a", "b"]},
    )


def test_missing_documents_statement() -> None:
    assert cypher.missing_documents_statement(L, ["b", "a", "b"]) == (
        "UNWIND $ids AS id\nOPTIONAL MATCH (d:`GraphFuseDocument` {id: id})\n"
        "WITH id, d WHERE d IS NULL\nRETURN collect(id) AS missing",
        {"ids": ["a", "b"]},
    )


def test_merge_relations_statements_group_by_type_and_deduplicate() -> None:
    statements = cypher.merge_relations_statements(
        L, [Relation("a", "b", "CITES", 2.0), Relation("a", "b", "CITES", 3.0), Relation("b", "c", "KNOWS")]
    )
    assert [q for q, _ in statements] == [
        "UNWIND $rows AS row\n"
        "MATCH (s:`GraphFuseDocument` {id: row.source}), (t:`GraphFuseDocument` {id: row.target})\n"
        f"MERGE (s)-[r:`{t}`]->(t)\nSET r.weight = row.weight, r.metadata = row.metadata"
        for t in ("CITES", "KNOWS")
    ]
    assert statements[0][1] == {"rows": [{"source": "a", "target": "b", "weight": 3.0, "metadata": "{}"}]}
    assert statements[1][1] == {"rows": [{"source": "b", "target": "c", "weight": 1.0, "metadata": "{}"}]}
    assert cypher.merge_relations_statements(L, []) == []


def test_merge_relations_refuses_self_loops_and_bad_metadata() -> None:
    with pytest.raises(InvalidInput, match="self-loop"):
        cypher.merge_relations_statements(L, [Relation("a", "b"), Relation("a", "a")])
    with pytest.raises(InvalidInput):
        cypher.merge_relations_statements(L, [Relation("a", "b", metadata={"x": object()})])


def test_delete_relations_statements() -> None:
    statements = cypher.delete_relations_statements(L, [Relation("a", "b", "X"), Relation("a", "b", "X")])
    assert statements == [
        (
            "UNWIND $rows AS row\n"
            "MATCH (:`GraphFuseDocument` {id: row.source})-[r:`X`]->(:`GraphFuseDocument` {id: row.target})\n"
            "DELETE r\nRETURN count(*) AS deleted",
            {"rows": [{"source": "a", "target": "b"}]},
        )
    ]


def test_related_statement() -> None:
    query, params = cypher.related_statement(
        L, ["s1", "s2", "s1"], depth=3, flt=_filter({"tenant": "t1"}), relation_types=["CITES", "KNOWS"], limit=5
    )
    assert query == (
        "MATCH (seed:`GraphFuseDocument`) WHERE seed.id IN $seeds\n"
        "MATCH p = (seed)-[:`CITES`|`KNOWS`*1..3]-(n:`GraphFuseDocument`)\n"
        "WHERE NOT n.id IN $seeds AND ALL(x IN nodes(p)[1..] WHERE x:`GraphFuseDocument` AND (x.`meta_tenant` = $f1))\n"
        "WITH n.id AS doc_id, seed.id AS seed_id, length(p) AS hops,\n"
        "     [i IN range(0, size($seeds) - 1) WHERE $seeds[i] = seed.id][0] AS seed_rank\n"
        "ORDER BY hops, seed_rank\n"
        "WITH doc_id, collect({seed: seed_id, distance: hops})[0] AS best\n"
        "RETURN doc_id AS id, best.distance AS distance, best.seed AS seed\n"
        "ORDER BY distance, id\n"
        "LIMIT $limit"
    )
    assert params == {"seeds": ["s1", "s2"], "f1": "t1", "limit": 5}


def test_related_statement_without_options() -> None:
    query, params = cypher.related_statement(L, ["s"], depth=1, flt=None, relation_types=None, limit=None)
    assert "MATCH p = (seed)-[*1..1]-(n:`GraphFuseDocument`)\n" in query
    assert "ALL(x IN nodes(p)[1..] WHERE x:`GraphFuseDocument`)\n" in query
    assert "LIMIT" not in query
    assert params == {"seeds": ["s"]}


@pytest.mark.parametrize("depth", [0, 4, -1, True, 2.0])
def test_related_statement_depth(depth: Any) -> None:
    with pytest.raises(InvalidInput, match="depth"):
        cypher.related_statement(L, ["s"], depth=depth, flt=None, relation_types=None, limit=None)


def test_related_statement_limits_and_types() -> None:
    with pytest.raises(InvalidInput, match="limit"):
        cypher.related_statement(L, ["s"], depth=1, flt=None, relation_types=None, limit=-1)
    with pytest.raises(InvalidInput, match="relation_types"):
        cypher.related_statement(L, ["s"], depth=1, flt=None, relation_types=[], limit=None)


@pytest.mark.parametrize(
    ("spec", "expression", "values"),
    [
        ({"k": "v"}, "(x.`meta_k` = $f0)", ["v"]),
        ({"k": {"$ne": 3}}, "((x.`meta_k` IS NULL OR x.`meta_k` <> $f0))", [3]),
        ({"k": {"$in": ["a", "b"]}}, "(x.`meta_k` IN $f0)", [["a", "b"]]),
        ({"k": {"$nin": [1, 2]}}, "((x.`meta_k` IS NULL OR NOT x.`meta_k` IN $f0))", [[1, 2]]),
        ({"k": {"$gt": 1}}, "(x.`meta_k` > $f0)", [1]),
        ({"k": {"$gte": 1.5}}, "(x.`meta_k` >= $f0)", [1.5]),
        ({"k": {"$lt": "m"}}, "(x.`meta_k` < $f0)", ["m"]),
        ({"k": {"$lte": 9}}, "(x.`meta_k` <= $f0)", [9]),
        ({"k": {"$exists": True}}, "($f0 IN coalesce(x.graphfuse_meta_keys, []))", ["k"]),
        ({"k": {"$exists": False}}, "(NOT $f0 IN coalesce(x.graphfuse_meta_keys, []))", ["k"]),
        (
            {"my-key": True, "n": {"$gt": 1, "$lt": 5}},
            "(x.`meta_my-key` = $f0 AND x.`meta_n` > $f1 AND x.`meta_n` < $f2)",
            [True, 1, 5],
        ),
    ],
)
def test_filter_expression(spec: dict[str, Any], expression: str, values: list[Any]) -> None:
    params: dict[str, Any] = {}
    assert cypher.filter_expression(_filter(spec), "x", params) == expression
    assert params == {f"f{i}": v for i, v in enumerate(values)}


def test_filter_values_are_parameters_never_text() -> None:
    params: dict[str, Any] = {}
    evil = "x' OR 1=1 //`) DETACH DELETE n"
    text = cypher.filter_expression(_filter({"k": evil}), "d", params)
    assert evil not in text
    assert params == {"f0": evil}


@pytest.mark.parametrize(
    "bad",
    ["X]->() DETACH DELETE n //", "A`B", "has space", "1starts_with_digit", "", "x" * 65, "CITES|KNOWS", "é"],
)
def test_injection_guard_on_relation_types_and_labels(bad: str) -> None:
    with pytest.raises(InvalidInput):
        cypher.related_statement(L, ["s"], depth=1, flt=None, relation_types=[bad], limit=None)
    with pytest.raises(InvalidInput):
        cypher.check_identifier(bad, "label")
    with pytest.raises(InvalidInput):
        Relation("a", "b", bad)
    with pytest.raises(InvalidInput):
        cypher.store_documents_statement(bad, [])


def test_injection_guard_on_filter_keys() -> None:
    flt = MetadataFilter((Condition("k`) DETACH DELETE d //", "$eq", 1),))
    with pytest.raises(InvalidInput):
        cypher.filter_expression(flt, "d", {})


def test_pagerank_statements() -> None:
    assert cypher.gds_available_statement() == "RETURN gds.version() AS gdsVersion"
    project, stream, drop = cypher.gds_pagerank_statements(L, "g1")
    assert project == (
        "MATCH (s:`GraphFuseDocument`)\nOPTIONAL MATCH (s)-[r]->(t:`GraphFuseDocument`)\n"
        "WITH gds.graph.project($graph, s, t, {relationshipProperties: r {.weight}}) AS g\n"
        "RETURN g.nodeCount AS nodes",
        {"graph": "g1"},
    )
    assert stream[0].startswith("CALL gds.pageRank.stream($graph, {relationshipWeightProperty: 'weight'})")
    assert stream[1] == {"graph": "g1"}
    assert drop == ("CALL gds.graph.drop($graph, false) YIELD graphName RETURN graphName", {"graph": "g1"})
    assert cypher.nodes_statement(L) == ("MATCH (d:`GraphFuseDocument`) RETURN d.id AS id", {})
    assert cypher.edges_statement(L) == (
        "MATCH (s:`GraphFuseDocument`)-[r]->(t:`GraphFuseDocument`)\n"
        "RETURN s.id AS source, t.id AS target, coalesce(r.weight, 1.0) AS weight",
        {},
    )


def test_to_document() -> None:
    when = datetime(2024, 1, 1, tzinfo=timezone.utc)
    doc = cypher.to_document(
        {"id": "a", "content": "c", "metadata": '{"k": 1}', "created_at": when, "updated_at": None}
    )
    assert doc == Document("a", "c", {"k": 1}, when)


# -- identifiers: a trailing newline is not part of a valid name ----------------------------


@pytest.mark.parametrize("name", ["KNOWS\n", "GraphFuseDocument\n", "x\n"])
def test_identifiers_with_a_trailing_newline_are_refused(name: str) -> None:
    with pytest.raises(InvalidInput, match="is not valid"):
        cypher.check_identifier(name, "relation type")
    with pytest.raises(InvalidInput, match="is not valid"):
        cypher.merge_relations_statements(L, [Relation("a", "b", name)])


def test_filter_keys_with_a_trailing_newline_are_refused() -> None:
    with pytest.raises(InvalidInput, match="filter key"):
        MetadataFilter.parse({"tenant\n": "t1"})
    cond = Condition("tenant", "$eq", "t1")
    object.__setattr__(cond, "key", "tenant\n")  # a hand-built filter bypassing parse()
    with pytest.raises(InvalidInput, match="cannot be filtered on"):
        cypher.filter_expression(MetadataFilter((cond,)), "x", {})
    # Not copied to a property either (it could not be filtered on).
    row = cypher.document_rows([Document("a", metadata={"tenant\n": "t1"})])[0]
    assert not any(k.startswith("meta_tenant") for k in row)


def test_a_metadata_key_named_keys_does_not_overwrite_the_key_list() -> None:
    row = cypher.document_rows([Document("a", metadata={"keys": "mine", "tenant": "t1"})])[0]
    assert row["meta_keys"] == "mine"
    assert row[cypher.META_KEYS] == ["keys", "tenant"]
    params: dict[str, Any] = {}
    expression = cypher.filter_expression(_filter({"keys": "mine", "tenant": {"$exists": True}}), "x", params)
    assert expression == "(x.`meta_keys` = $f0 AND $f1 IN coalesce(x.graphfuse_meta_keys, []))"
    assert params == {"f0": "mine", "f1": "tenant"}


def test_a_bogus_operator_is_invalid_input_not_key_error() -> None:
    with pytest.raises(InvalidInput, match="unknown operator '\\$regex'"):
        Condition("k", "$regex", "a.*")  # type: ignore[arg-type]
    cond = Condition("k", "$eq", 1)
    object.__setattr__(cond, "op", "$regex")  # forced past the constructor's check
    with pytest.raises(InvalidInput, match="no Cypher translation"):
        cypher.filter_expression(MetadataFilter((cond,)), "x", {})


# -- stored pagerank ------------------------------------------------------------------------


def test_stored_pagerank_statements() -> None:
    assert cypher.PAGERANK_PROPERTY == "graphfuse_pagerank"
    assert cypher.pagerank_status_statement(L) == (
        "OPTIONAL MATCH (m:`GraphFuseMeta` {label: $label})\n"
        "RETURN coalesce(max(m.generation), 0) AS generation, max(m.pagerank_generation) AS ranked_at",
        {"label": L},
    )
    # The read: one lookup on the unique id index per candidate id.
    assert cypher.pagerank_scores_statement(L, ["b", "a", "b"]) == (
        "UNWIND $ids AS id\nMATCH (d:`GraphFuseDocument` {id: id})\nWHERE d.`graphfuse_pagerank` IS NOT NULL\n"
        "RETURN d.id AS id, d.`graphfuse_pagerank` AS score",
        {"ids": ["b", "a"]},
    )
    assert cypher.pagerank_scores_statement(L, None) == (
        "MATCH (d:`GraphFuseDocument`)\nWHERE d.`graphfuse_pagerank` IS NOT NULL\n"
        "RETURN d.id AS id, d.`graphfuse_pagerank` AS score",
        {},
    )
    rows = [{"id": "a", "score": 1.0}]
    assert cypher.pagerank_write_statement(L, rows) == (
        "UNWIND $rows AS row\nMATCH (d:`GraphFuseDocument` {id: row.id})\nSET d.`graphfuse_pagerank` = row.score",
        {"rows": rows},
    )
    # Marking fresh sets pagerank_generation and leaves generation alone (it is no document write).
    assert cypher.pagerank_mark_statement(L, 7) == (
        "MERGE (m:`GraphFuseMeta` {label: $label})\nSET m.pagerank_generation = $generation",
        {"label": L, "generation": 7},
    )
    # Marking stale is the write generation bump every write already runs.
    assert "SET m.generation = coalesce(m.generation, 0) + 1" in cypher.bump_generation_statement(L)[0]


@pytest.mark.parametrize(
    "build",
    [
        lambda: cypher.pagerank_status_statement("Bad`Label"),
        lambda: cypher.pagerank_scores_statement("x) DETACH DELETE d //", ["a"]),
        lambda: cypher.pagerank_write_statement("Bad Label", []),
        lambda: cypher.pagerank_mark_statement("1abc", 0),
    ],
)
def test_stored_pagerank_statements_check_the_label(build: Any) -> None:
    with pytest.raises(InvalidInput, match="is not valid"):
        build()


def test_the_stored_pagerank_cypher_in_the_docs_is_the_cypher_sent() -> None:
    page = Path(__file__).resolve().parents[3] / "docs" / "backends" / "neo4j.md"
    blocks = [
        textwrap.dedent(block).strip()
        for block in re.findall(r"^ *```cypher\n(.*?)^ *```", page.read_text(encoding="utf-8"), re.M | re.S)
    ]
    sent = [
        cypher.pagerank_status_statement(L)[0],
        cypher.pagerank_scores_statement(L, ["a"])[0],
        cypher.pagerank_write_statement(L, [])[0],
        cypher.pagerank_mark_statement(L, 0)[0],
    ]
    assert blocks == sent

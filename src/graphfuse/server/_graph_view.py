"""The dashboard's graph: the relations among a result set's pages, and a scope's degree numbers."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._core._capabilities import AdjacencySource, DocumentListing
from .._core._protocols import GraphStore
from .._core._types import KIND_KEY, Result
from ..indexing import CO_MENTION, CO_OCCURS_WITH, LINKS_TO, MENTIONED_IN, MENTIONS, PART_OF
from ._problems import Problem
from ._scope import Scope

__all__ = ["KNOWN_RELATION_TYPES", "GraphView", "edges_among_pages", "graph_numbers"]

KNOWN_RELATION_TYPES = (LINKS_TO, MENTIONS, CO_MENTION, PART_OF, MENTIONED_IN, CO_OCCURS_WITH)

_DEGREE_BUCKETS = ((0, 0), (1, 1), (2, 2), (3, 5), (6, 10), (11, 20), (21, 50), (51, None))


def edges_among_pages(
    heads: Mapping[str, int | None],
    own: Mapping[str, list[int]],
    pages: Mapping[str, list[int]],
    names: Sequence[str],
    external: Mapping[str, str | None],
    columns: Any,
    typed: Mapping[str, Any],
    untyped: Any,
) -> list[dict[str, Any]]:
    """Typed edges between the results, from the relations among their pages (CPU: off the loop).

    ``heads[page]`` is the page's adjacency position, ``own[page]`` the positions of the page
    and of its results, ``pages[page]`` the indexes of its results (``names`` are the results'
    client ids). The page's other passages (the sources of ``PART_OF`` relations to it) are
    found in ``columns``, the ``PART_OF`` matrix by column (or ``None``).
    """
    owner: dict[int, str] = {}
    for page, positions in own.items():
        for p in positions:
            owner.setdefault(p, page)
        head = heads[page]
        if columns is not None and head is not None:
            start, stop = columns.indptr[head], columns.indptr[head + 1]
            for p in columns.indices[start:stop].tolist():
                owner.setdefault(int(p), page)
    rows = np.array(sorted(owner), dtype=np.int64)
    found: dict[tuple[str, str, str], float] = {}
    seen: set[tuple[str, str]] = set()

    def collect(rel_type: str, matrix: Any, skip_seen: bool) -> None:
        sub = matrix[rows][:, rows].tocoo()
        for s, t, w in zip(sub.row.tolist(), sub.col.tolist(), sub.data.tolist(), strict=True):
            a, b = owner[int(rows[s])], owner[int(rows[t])]
            if a == b or (skip_seen and (a, b) in seen):
                continue
            if not skip_seen:
                seen.add((a, b))
            key = (a, b, rel_type)
            found[key] = max(found.get(key, 0.0), float(w))

    for rel_type, matrix in typed.items():
        collect(rel_type, matrix, skip_seen=False)
    collect("OTHER", untyped, skip_seen=True)  # related by types this server does not know by name
    edges: list[dict[str, Any]] = []
    for (a, b, rel_type), weight in sorted(found.items(), key=lambda kv: (min(pages[kv[0][0]]), kv[0])):
        for i in pages[a]:
            for j in pages[b]:
                edge: dict[str, Any] = {"source": names[i], "target": names[j], "type": rel_type, "weight": weight}
                if names[i] != external[a] or names[j] != external[b]:
                    edge["pages"] = [external[a], external[b]]
                edges.append(edge)
    return edges


def graph_numbers(positions: Sequence[int], typed: Mapping[str, Any], untyped: Any) -> dict[str, Any]:
    """Relations by type and the degree distribution among ``positions`` (CPU: off the loop)."""
    rows = np.array(positions, dtype=np.int64)
    by_type: dict[str, int] = {}
    for rel_type, matrix in typed.items():
        n = int(matrix[rows][:, rows].nnz) if len(rows) else 0
        if n:
            by_type[rel_type] = n
    sub = untyped[rows][:, rows] if len(rows) else None
    relations = sum(by_type.values())
    if sub is not None:
        # Pairs related only by types this server does not know by name.
        present = (sub != 0).astype(np.int8)
        for t in typed:
            present = present - (typed[t][rows][:, rows] != 0).astype(np.int8)
        other = int((present.tocsr().data > 0).sum())
        if other:
            by_type["OTHER"] = other
            relations += other
        sym = (sub != 0).astype(np.int8)
        sym = ((sym + sym.T) != 0).astype(np.int8)
        degrees = np.asarray(sym.sum(axis=1)).ravel()
    else:
        degrees = np.zeros(0, dtype=np.int64)
    distribution = {}
    for low, high in _DEGREE_BUCKETS:
        mask = degrees >= low if high is None else (degrees >= low) & (degrees <= high)
        label = f"{low}+" if high is None else (str(low) if low == high else f"{low}-{high}")
        distribution[label] = int(mask.sum())
    return {
        "relations": relations,
        "relations_by_type": dict(sorted(by_type.items())),
        "degree": {
            "distribution": distribution,
            "max": int(degrees.max()) if len(degrees) else 0,
            "mean": float(degrees.mean()) if len(degrees) else 0.0,
        },
    }


def _title(r: Result) -> str | None:
    title = r.document.metadata.get("title")
    return title if isinstance(title, str) else None


class GraphView:
    """The dashboard's view of one graph store: the subgraph of a result set and a scope's numbers.

    Keeps the adjacency positions and the ``PART_OF`` columns of the last snapshot it read.
    """

    def __init__(self, graph: GraphStore) -> None:
        self.graph = graph
        self._positions: tuple[Sequence[str], dict[str, int]] | None = None
        self._part_of_columns: tuple[Any, Any] | None = None

    async def _typed_adjacency(self) -> tuple[Sequence[str], dict[str, int], dict[str, Any], Any] | None:
        if not isinstance(self.graph, AdjacencySource):
            return None
        ids, untyped = await self.graph.adjacency()
        typed = {t: (await self.graph.adjacency(relation_types=[t]))[1] for t in KNOWN_RELATION_TYPES}
        cached = self._positions
        if cached is None or cached[0] is not ids:
            cached = self._positions = (ids, {x: i for i, x in enumerate(ids)})
        return ids, cached[1], typed, untyped

    async def subgraph(self, scope: Scope, results: Sequence[Result]) -> dict[str, Any]:
        """The relations among ``results`` (all in ``scope``): nodes and typed edges.

        A node is a result; a passage's node also names its page (``page``). Two results are
        joined by every relation between them, and by every relation between their pages: from
        the page itself or from any of its passages (``PART_OF`` it) to the other page or its
        passages, as the graph context relates them. Such an edge names the two ``pages``;
        relations inside one page are not edges.
        """
        nodes = []
        for rank, r in enumerate(results, 1):
            node: dict[str, Any] = {"id": scope.external(r.id), "title": _title(r), "score": r.score, "rank": rank}
            parent = r.document.metadata.get("parent_id")
            if isinstance(parent, str) and parent:
                node["page"] = scope.external(parent)
            nodes.append(node)
        view = await self._typed_adjacency()
        if view is None:
            return {"nodes": nodes, "edges": [], "note": "this graph store offers no adjacency snapshot"}
        _, position, typed, untyped = view
        pages: dict[str, list[int]] = {}  # page id -> the results (indexes) on it
        for i, r in enumerate(results):
            parent = r.document.metadata.get("parent_id")
            pages.setdefault(parent if isinstance(parent, str) and parent else r.id, []).append(i)
        heads = {page: position.get(page) for page in pages}
        own = {
            page: [p for p in (heads[page], *(position.get(results[i].id) for i in members)) if p is not None]
            for page, members in pages.items()
        }
        if not any(own.values()):
            return {"nodes": nodes, "edges": []}
        names = [str(n["id"]) for n in nodes]
        external = {page: scope.external(page) for page in pages}
        part_of = typed.get(PART_OF)
        cached = self._part_of_columns
        if part_of is not None and (cached is None or cached[0] is not part_of):
            # The passages of each page, by column: converted once per snapshot of the graph.
            cached = self._part_of_columns = (part_of, await asyncio.to_thread(part_of.tocsc))
        columns = cached[1] if part_of is not None and cached is not None else None
        edges = await asyncio.to_thread(edges_among_pages, heads, own, pages, names, external, columns, typed, untyped)
        return {"nodes": nodes, "edges": edges}

    async def stats(self, scope: Scope) -> dict[str, Any]:
        """Documents, chunks, entity nodes, relations by type and the degree distribution of ``scope``."""
        view = await self._typed_adjacency()
        if not isinstance(self.graph, DocumentListing) or view is None:
            raise Problem(501, "this graph store cannot list its documents or relations, so it has no graph statistics")
        _, position, typed, untyped = view
        documents = chunks = entities = 0
        mine: list[int] = []
        async for doc in self.graph.iter_documents(filter=scope.base_filter):
            if not scope.visible(doc.id, doc.metadata):
                continue
            kind = doc.metadata.get(KIND_KEY)
            if kind == "chunk":
                chunks += 1
            elif kind == "entity":
                entities += 1
            else:
                documents += 1
            if doc.id in position:
                mine.append(position[doc.id])
        numbers = await asyncio.to_thread(graph_numbers, sorted(mine), typed, untyped)
        return {"documents": documents, "chunks": chunks, "entities": entities, **numbers}

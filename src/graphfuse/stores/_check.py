"""Integrity check (and repair) of a store directory: ``graphfuse check``."""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .._errors import NotFound
from ._local_store import GRAPH_FILE, MANIFEST, VECTORS_FILE, LocalStore

__all__ = ["StoreCheck", "check_store"]

_SHOWN = 20

# Units the indexer embeds: chunks, and documents it did not split into chunks.
_UNITS = (
    "json_extract(d.metadata, '$.graphfuse_kind') = 'chunk' OR "
    "(json_extract(d.metadata, '$.graphfuse_kind') = 'document' AND "
    "coalesce(json_extract(d.metadata, '$.graphfuse_chunks'), 1) <= 1)"
)


@dataclass
class StoreCheck:
    """What :func:`check_store` found (and, with ``repair``, did).

    Counts: ``documents``, ``vectors``, ``relations``, ``pending`` (documents an unfinished
    index run left behind), ``dangling_relations`` (an end is missing),
    ``documents_without_vectors`` (indexed units the indexer embeds, with no vector) and
    ``vectors_without_documents``. ``manifest`` lists the counts the manifest records that
    differ from the actual ones (``{"documents": [recorded, actual], ...}``); ``integrity``
    holds SQLite's ``integrity_check`` / ``foreign_key_check`` problems; ``examples`` a few
    ids per problem; ``repairs`` what ``repair=True`` did, ``unrepaired`` what it could not
    fix and how to fix it. ``ok`` is true when nothing is wrong.
    """

    documents: int = 0
    vectors: int = 0
    relations: int = 0
    pending: int = 0
    dangling_relations: int = 0
    documents_without_vectors: int = 0
    vectors_without_documents: int = 0
    manifest: dict[str, list[int | None]] = field(default_factory=dict)
    integrity: list[str] = field(default_factory=list)
    examples: dict[str, list[str]] = field(default_factory=dict)
    repairs: list[str] = field(default_factory=list)
    unrepaired: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the store is consistent."""
        return not (
            self.pending
            or self.dangling_relations
            or self.documents_without_vectors
            or self.vectors_without_documents
            or self.manifest
            or self.integrity
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form: every field plus ``ok``."""
        return {**asdict(self), "ok": self.ok}


def _connect(directory: Path) -> sqlite3.Connection:
    graph, vectors = (directory / GRAPH_FILE).resolve().as_uri(), (directory / VECTORS_FILE).resolve().as_uri()
    conn = sqlite3.connect(f"{graph}?mode=ro", uri=True)
    conn.execute("ATTACH DATABASE ? AS v", (f"{vectors}?mode=ro",))
    return conn


def _inspect(directory: Path) -> StoreCheck:
    report = StoreCheck()
    manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    conn = _connect(directory)
    try:
        for schema, name in (("main", GRAPH_FILE), ("v", VECTORS_FILE)):
            problems = [r[0] for r in conn.execute(f"PRAGMA {schema}.integrity_check")]
            if problems != ["ok"]:
                report.integrity.extend(f"{name}: {p}" for p in problems[:_SHOWN])
        fk = conn.execute("PRAGMA main.foreign_key_check").fetchall()
        if fk:
            report.integrity.append(f"{GRAPH_FILE}: {len(fk)} rows fail their foreign-key check")

        def ids(sql: str) -> tuple[int, list[str]]:
            rows = conn.execute(sql).fetchall()
            return len(rows), [r[0] for r in rows[:_SHOWN]]

        report.documents = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
        report.relations = conn.execute("SELECT count(*) FROM relations").fetchone()[0]
        report.vectors = conn.execute("SELECT count(*) FROM v.vectors").fetchone()[0]
        checks = {
            "pending": "SELECT id FROM documents d WHERE json_extract(d.metadata, '$.graphfuse_state') = 'pending'",
            "dangling_relations": (
                "SELECT r.source || ' -[' || r.type || ']-> ' || r.target FROM relations r "
                "WHERE r.source NOT IN (SELECT node FROM documents) OR r.target NOT IN (SELECT node FROM documents)"
            ),
            "documents_without_vectors": (
                f"SELECT d.id FROM documents d WHERE ({_UNITS}) "
                "AND coalesce(json_extract(d.metadata, '$.graphfuse_state'), 'indexed') = 'indexed' "
                "AND d.id NOT IN (SELECT id FROM v.vectors)"
            ),
            "vectors_without_documents": "SELECT id FROM v.vectors WHERE id NOT IN (SELECT id FROM documents)",
        }
        for key, sql in checks.items():
            count, shown = ids(sql)
            setattr(report, key, count)
            if shown:
                report.examples[key] = shown
    finally:
        conn.close()
    recorded = manifest.get("counts") if isinstance(manifest, dict) else None
    recorded = recorded if isinstance(recorded, dict) else {}
    for key in ("documents", "relations", "vectors"):
        actual = getattr(report, key)
        if recorded.get(key) != actual:
            report.manifest[key] = [recorded.get(key), actual]
    return report


async def _repair(directory: Path, found: StoreCheck) -> list[str]:
    done: list[str] = []
    store = LocalStore.open(directory, create=False)  # a read-write open refreshes stale manifest counts
    try:
        if found.manifest:
            done.append(f"rewrote the manifest counts ({', '.join(sorted(found.manifest))})")
        if found.dangling_relations:
            with store.graph._db.write() as c:
                n = c.execute(
                    "DELETE FROM relations WHERE source NOT IN (SELECT node FROM documents) "
                    "OR target NOT IN (SELECT node FROM documents)"
                ).rowcount
                c.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
            done.append(f"deleted {n} dangling relations")
        if found.vectors_without_documents:
            with store.graph._db.guard() as c:
                known = {r[0] for r in c.execute("SELECT id FROM documents")}
            orphans = [i for i in store.vectors._ids if i not in known]
            n = await store.vectors.delete(orphans)
            done.append(f"deleted {n} vectors without documents")
        await store.refresh_manifest()
    finally:
        await store.close()
    return done


async def check_store(directory: str | os.PathLike[str], *, repair: bool = False) -> StoreCheck:
    """Check a store directory (``LocalStore``); with ``repair``, fix what can be fixed.

    Without ``repair`` nothing is written (the files are opened read-only). Repairs:
    dangling relations and vectors without documents are deleted, the manifest counts are
    rewritten. Pending documents and documents without vectors need their sources: they are
    listed in ``unrepaired`` (re-run the same ``graphfuse index`` command to finish them).
    Raises ``NotFound`` when there is no store, ``StoreCorrupted`` when it cannot be opened.
    """
    path = Path(directory)
    if not (path / MANIFEST).exists():
        raise NotFound(f"no GraphFuse store at {str(path)!r}")
    await LocalStore.open(path, mode="ro").close()  # validates manifest, format versions, dimensions
    found = _inspect(path)
    if not repair or found.ok:
        return found
    done = await _repair(path, found)
    after = _inspect(path)
    after.repairs = done
    if after.pending or after.documents_without_vectors:
        after.unrepaired.append(
            f"{after.pending} pending documents and {after.documents_without_vectors} documents without "
            "vectors need their sources: run the same `graphfuse index` command again"
        )
    return after

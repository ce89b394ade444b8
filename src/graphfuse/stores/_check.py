"""Integrity check (and repair) of a store directory: ``graphfuse check``.

The check never trusts the files: each one is opened read-only on its own, every query is
guarded, and what cannot be read (a missing, empty, unreadable or damaged file, a row whose
vector has the wrong size or whose metadata is not JSON) is reported by name instead of
raised, so the check works on exactly the stores it exists for.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._core._errors import GraphFuseError, InvalidInput, NotFound
from .._core._sync import sync_form
from .._core._types import CHUNKS_KEY, KIND_KEY
from ._directory import _recorded, aopen_store
from ._local_store import FORMAT, GRAPH_FILE, MANIFEST, VECTORS_FILE, LocalStore
from ._sqlite_graph import APPLICATION_ID as GRAPH_ID
from ._sqlite_graph import SQLiteGraphStore
from ._vector_file import APPLICATION_ID as VECTORS_ID
from ._vector_file import checksum_matches
from ._vector_store import LocalVectorStore

__all__ = ["StoreCheck", "acheck_store", "check_store"]

_SHOWN = 20
_REFUSED = "the store cannot be opened as the other commands open it"
# A damaged schema can make SQLite's own error message invalid UTF-8: Python then raises that.
_DB_ERRORS = (sqlite3.DatabaseError, UnicodeDecodeError)
_DAMAGED_SHOWN = 200


def _meta(column: str, key: str) -> str:
    # json_extract raises on text that is not JSON: damaged rows are counted apart.
    return f"(CASE WHEN json_valid({column}) THEN json_extract({column}, '$.{key}') END)"


# Vectors no document owns: no document has their id, or only an entity node, which is never embedded.
_STRAY = (
    "SELECT id FROM v.vectors WHERE id NOT IN "
    f"(SELECT d.id FROM documents d WHERE coalesce({_meta('d.metadata', KIND_KEY)}, '') != 'entity')"
)

# Units the indexer embeds: chunks, and documents it did not split into chunks.
_UNITS = (
    f"{_meta('d.metadata', KIND_KEY)} = 'chunk' OR "
    f"({_meta('d.metadata', KIND_KEY)} = 'document' AND "
    f"coalesce({_meta('d.metadata', CHUNKS_KEY)}, 1) <= 1)"
)


@dataclass
class StoreCheck:
    """What :func:`check_store` found (and, with ``repair``, did).

    Counts: ``documents``, ``vectors``, ``relations``, ``pending`` (documents an unfinished
    index run left behind), ``dangling_relations`` (an end is missing),
    ``documents_without_vectors`` (indexed units the indexer embeds, with no vector),
    ``vectors_without_documents`` (stray vectors: no document has their id, or only an entity
    node does, which is never embedded) and ``damaged_rows`` (vectors of the wrong size, holding
    NaN or infinity, or whose row does not match its checksum; metadata that is not a JSON
    object; ``damaged`` names them; ``damaged_vectors`` counts those of ``vectors.sqlite``, which
    ``repair`` deletes: the next ``graphfuse index`` embeds them again).
    ``integrity`` holds what is wrong with the files themselves (missing, empty, unreadable, damaged pages, SQLite's
    ``integrity_check`` / ``foreign_key_check``), each line naming the file. ``manifest``
    lists the counts the manifest records that differ from the actual ones
    (``{"documents": [recorded, actual], ...}``): a store being served or left by a killed
    process has stale counts, so they are a note (``notes``), not an inconsistency.
    ``examples`` holds a few ids per problem; ``repairs`` what ``repair=True`` did,
    ``unrepaired`` what it could not fix and how to fix it. ``ok`` is true when nothing is wrong.
    """

    documents: int = 0
    vectors: int = 0
    relations: int = 0
    pending: int = 0
    dangling_relations: int = 0
    documents_without_vectors: int = 0
    vectors_without_documents: int = 0
    damaged_rows: int = 0
    damaged_vectors: int = 0
    manifest: dict[str, list[int | None]] = field(default_factory=dict)
    integrity: list[str] = field(default_factory=list)
    damaged: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    examples: dict[str, list[str]] = field(default_factory=dict)
    repairs: list[str] = field(default_factory=list)
    unrepaired: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the store is consistent (stale manifest counts are only a note)."""
        return not (
            self.pending
            or self.dangling_relations
            or self.documents_without_vectors
            or self.vectors_without_documents
            or self.damaged_rows
            or self.integrity
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form: every field plus ``ok``."""
        return {**asdict(self), "ok": self.ok}


def _open(path: Path) -> sqlite3.Connection:
    uri = path.resolve().as_uri()
    conn = sqlite3.connect(f"{uri}?mode=ro", uri=True)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError:
        # A WAL file in a directory we cannot write (SQLite cannot make its -shm file there).
        conn.close()
        return sqlite3.connect(f"{uri}?immutable=1", uri=True)


def _file_problem(path: Path, application_id: int, what: str) -> tuple[str | None, sqlite3.Connection | None]:
    """(what is wrong with the file, or None; a read-only connection when it can be read)."""
    name = path.name
    if not path.exists():
        return f"{name}: missing (the {what} of this store)", None
    if not path.is_file():
        return f"{name}: not a file", None
    if not os.access(path, os.R_OK):
        return f"{name}: cannot be read: permission denied (the file is not known to be damaged)", None
    size = path.stat().st_size
    if size == 0:
        return (
            f"{name}: empty (0 bytes) although the store was created: it was truncated or replaced; "
            "`graphfuse check --repair` re-creates it empty, then re-run the same `graphfuse index` command"
        ), None
    try:
        conn = _open(path)
        found = conn.execute("PRAGMA application_id").fetchone()[0]
        tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    except _DB_ERRORS as exc:
        return f"{name}: damaged, unreadable as SQLite ({exc})", None
    if found == 0 and tables == 0:
        conn.close()
        return f"{name}: holds no tables although the store was created: it was truncated or replaced", None
    if found != application_id:
        conn.close()
        return f"{name}: a SQLite file, but not a GraphFuse {what}", None
    return None, conn


def _guarded(report: StoreCheck, name: str, conn: sqlite3.Connection, sql: str, params: tuple[Any, ...] = ()) -> Any:
    try:
        return conn.execute(sql, params).fetchall()
    except _DB_ERRORS as exc:
        line = f"{name}: damaged ({exc})"
        if line not in report.integrity:
            report.integrity.append(line)
        return None


def _inspect(directory: Path) -> StoreCheck:
    report = StoreCheck()
    manifest: dict[str, Any] | None = None
    try:
        loaded = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
        if isinstance(loaded, dict) and loaded.get("format") == FORMAT:
            manifest = loaded
        else:
            report.integrity.append(f"{MANIFEST}: not a GraphFuse store manifest")
    except PermissionError:
        report.integrity.append(f"{MANIFEST}: cannot be read: permission denied")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        report.integrity.append(f"{MANIFEST}: damaged ({exc})")

    problem, graph = _file_problem(directory / GRAPH_FILE, GRAPH_ID, "graph store")
    if problem:
        report.integrity.append(problem)
    problem, vectors = _file_problem(directory / VECTORS_FILE, VECTORS_ID, "vector store")
    if problem:
        report.integrity.append(problem)
    try:
        dimension = _inspect_vectors(report, vectors) if vectors is not None else None
        if graph is not None:
            _inspect_graph(report, graph, directory / VECTORS_FILE if vectors is not None else None)
    finally:
        for conn in (graph, vectors):
            if conn is not None:
                conn.close()
    if manifest is not None:
        if dimension is not None and manifest.get("dimension") not in (None, dimension):
            report.integrity.append(
                f"{MANIFEST}: says dimension {manifest.get('dimension')}, {VECTORS_FILE} holds {dimension}"
            )
        recorded = manifest.get("counts")
        recorded = recorded if isinstance(recorded, dict) else {}
        for key in ("documents", "relations", "vectors"):
            actual = getattr(report, key)
            if recorded.get(key) != actual:
                report.manifest[key] = [recorded.get(key), actual]
        if report.manifest:
            stale = ", ".join(f"{v[0]} {k} (holds {v[1]})" for k, v in sorted(report.manifest.items()))
            report.notes.append(
                f"the manifest's counts are stale: it says {stale}. A running server or a killed process "
                "leaves them so; the next read-write open (or --repair) rewrites them"
            )
    return report


def _damaged(report: StoreCheck, lines: list[str]) -> None:
    report.damaged_rows += len(lines)
    room = _DAMAGED_SHOWN - len(report.damaged)
    report.damaged.extend(lines[: max(room, 0)])


def _inspect_vectors(report: StoreCheck, conn: sqlite3.Connection) -> int | None:
    name = VECTORS_FILE
    problems = _guarded(report, name, conn, "PRAGMA integrity_check")
    if problems is not None and [r[0] for r in problems] != ["ok"]:
        report.integrity.extend(f"{name}: {r[0]}" for r in problems[:_SHOWN])
    rows = _guarded(report, name, conn, "SELECT value FROM meta WHERE key = 'dimension'")
    dimension = rows[0][0] if rows else None
    count = _guarded(report, name, conn, "SELECT count(*) FROM vectors")
    report.vectors = count[0][0] if count else 0
    seen: set[int] = set()  # rowids already reported
    if isinstance(dimension, int) and not isinstance(dimension, bool):
        bad = _guarded(
            report,
            name,
            conn,
            "SELECT id, typeof(vector), length(vector), rowid FROM vectors "
            "WHERE typeof(vector) != 'blob' OR length(vector) != ?",
            (4 * dimension,),
        )
        _damaged(
            report,
            [f"{name}: vector {r[0]!r} is {r[2]} bytes of {r[1]}, not {dimension} float32 values" for r in bad or []],
        )
        seen = {r[3] for r in bad or []}
    elif report.vectors:
        report.integrity.append(f"{name}: holds {report.vectors} vectors but no valid dimension ({dimension!r})")
    bad = _guarded(
        report,
        name,
        conn,
        "SELECT id, rowid FROM vectors WHERE NOT json_valid(metadata) OR json_type(metadata) != 'object'",
    )
    bad = [r for r in bad or [] if r[1] not in seen]
    _damaged(report, [f"{name}: vector {r[0]!r} has metadata that is not a JSON object" for r in bad])
    seen.update(r[1] for r in bad)
    if isinstance(dimension, int) and not isinstance(dimension, bool):
        _inspect_values(report, conn, dimension, seen)
    report.damaged_vectors = report.damaged_rows  # the graph's rows are inspected after these
    return dimension if isinstance(dimension, int) else None


def _text(value: object) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _owner(doc_id: object, metadata: object) -> str:
    """How a damaged vector is named: its id and, for a chunk, its document."""
    shown = f"vector {_text(doc_id)!r}"
    with contextlib.suppress(ValueError, TypeError, AttributeError):
        parent = json.loads(metadata).get("parent_id")  # type: ignore[arg-type]
        if isinstance(parent, str) and parent:
            shown += f" (document {parent!r})"
    return shown


def _vector_rows(conn: sqlite3.Connection) -> Iterator[tuple[Any, ...]]:
    """Every row as stored (ids and metadata as bytes: checksums are over the bytes), in batches."""
    conn.text_factory = bytes
    try:
        cursor = conn.execute("SELECT rowid, id, vector, metadata, checksum FROM vectors")
        while batch := cursor.fetchmany(4096):
            yield from batch
    finally:
        conn.text_factory = str


def damaged_vectors(conn: sqlite3.Connection, dimension: int) -> list[tuple[int, str]]:
    """``[(rowid, what is wrong), ...]`` for a vector store file: rows that do not match their
    checksum (or have none: written by something else) or whose vector holds NaN or infinity.
    Rows of the wrong size are left to the size check."""
    found: list[tuple[int, str]] = []
    size = 4 * dimension
    for rowid, doc_id, vector, metadata, checksum in _vector_rows(conn):
        if checksum is None:
            found.append((rowid, f"{_owner(doc_id, metadata)} has no checksum (written by something else)"))
            continue
        if not checksum_matches(doc_id, vector, metadata, checksum):
            found.append((rowid, f"{_owner(doc_id, metadata)} does not match its checksum (damaged)"))
            continue
        if isinstance(vector, bytes) and len(vector) == size:
            values = np.frombuffer(vector, dtype=np.float32)
            if not np.isfinite(values).all():
                found.append((rowid, f"{_owner(doc_id, metadata)} holds NaN or infinity"))
    return found


def _inspect_values(report: StoreCheck, conn: sqlite3.Connection, dimension: int, seen: set[int]) -> None:
    name = VECTORS_FILE
    try:
        found = damaged_vectors(conn, dimension)
    except _DB_ERRORS as exc:
        line = f"{name}: damaged ({exc})"
        if line not in report.integrity:
            report.integrity.append(line)
        return
    _damaged(report, [f"{name}: {line}" for rowid, line in found if rowid not in seen])


def _inspect_graph(report: StoreCheck, conn: sqlite3.Connection, vectors: Path | None) -> None:
    name = GRAPH_FILE
    problems = _guarded(report, name, conn, "PRAGMA integrity_check")
    if problems is not None and [r[0] for r in problems] != ["ok"]:
        report.integrity.extend(f"{name}: {r[0]}" for r in problems[:_SHOWN])
    fk = _guarded(report, name, conn, "PRAGMA foreign_key_check")
    if fk:
        report.integrity.append(f"{name}: {len(fk)} rows fail their foreign-key check")
    for table, what in (("documents", "documents"), ("relations", "relations")):
        count = _guarded(report, name, conn, f"SELECT count(*) FROM {table}")
        setattr(report, what, count[0][0] if count else 0)
    bad = _guarded(
        report, name, conn, "SELECT id FROM documents WHERE NOT json_valid(metadata) OR json_type(metadata) != 'object'"
    )
    _damaged(report, [f"{name}: document {r[0]!r} has metadata that is not a JSON object" for r in bad or []])
    bad = _guarded(
        report,
        name,
        conn,
        "SELECT s.id, r.type, t.id FROM relations r LEFT JOIN documents s ON s.node = r.source "
        "LEFT JOIN documents t ON t.node = r.target WHERE NOT json_valid(r.metadata)",
    )
    _damaged(
        report, [f"{name}: relation {r[0]!r} -[{r[1]}]-> {r[2]!r} has metadata that is not JSON" for r in bad or []]
    )
    attached = vectors is not None and _attach(conn, vectors)
    checks = {
        "pending": f"SELECT id FROM documents d WHERE {_meta('d.metadata', 'graphfuse_state')} = 'pending'",
        "dangling_relations": (
            "SELECT r.source || ' -[' || r.type || ']-> ' || r.target FROM relations r "
            "WHERE r.source NOT IN (SELECT node FROM documents) OR r.target NOT IN (SELECT node FROM documents)"
        ),
    }
    if attached:
        checks["documents_without_vectors"] = (
            f"SELECT d.id FROM documents d WHERE ({_UNITS}) "
            f"AND coalesce({_meta('d.metadata', 'graphfuse_state')}, 'indexed') = 'indexed' "
            "AND d.id NOT IN (SELECT id FROM v.vectors)"
        )
        checks["vectors_without_documents"] = _STRAY
    for key, sql in checks.items():
        rows = _guarded(report, name, conn, sql)
        if rows is None:
            continue
        setattr(report, key, len(rows))
        if rows:
            report.examples[key] = [r[0] for r in rows[:_SHOWN]]


def _attach(conn: sqlite3.Connection, path: Path) -> bool:
    uri = path.resolve().as_uri()
    for mode in ("mode=ro", "immutable=1"):
        try:
            conn.execute("ATTACH DATABASE ? AS v", (f"{uri}?{mode}",))
            conn.execute("SELECT count(*) FROM v.vectors").fetchone()
            return True
        except _DB_ERRORS:
            with contextlib.suppress(*_DB_ERRORS):
                conn.execute("DETACH DATABASE v")
    return False


async def _open_like_commands(directory: Path, report: StoreCheck) -> None:
    """Open the store as every other command does (read-only) and report what refuses it."""

    recorded: dict[str, str] | None = None
    try:
        recorded = await asyncio.to_thread(_recorded, directory)
        store = await aopen_store(directory, mode="ro")
        await store.aclose()
    except InvalidInput as exc:
        if recorded is None:
            # Built from Python (LocalStore) without recording its components: Python opens it,
            # the commands (which guess its components) may not. Not damage: a note.
            report.notes.append(f"the store records no components (it was built from Python): the commands say: {exc}")
            return
        report.integrity.append(f"{_REFUSED}: {exc}")
    except GraphFuseError as exc:
        report.integrity.append(f"{_REFUSED}: {exc}")


async def _corpus_note(directory: Path, report: StoreCheck, repair: bool) -> None:
    """Say whether ``corpus_index.npz`` is current (and with ``repair`` rewrite it)."""
    from ..multihop import CorpusCache

    store = await LocalStore.aopen(directory, mode="rw" if repair else "ro")
    try:
        cache = CorpusCache(directory)
        if await cache.ais_current(store.graph):
            return
        if repair:
            await cache.arefresh(store.graph)
            report.repairs.append(f"rewrote {cache.path.name} (it was missing or older than the store)")
        else:
            report.notes.append(
                f"{cache.path.name} is missing or older than the store: queries rebuild it in memory each time "
                "(they write nothing); --repair or the next `graphfuse index` rewrites it"
            )
    finally:
        await store.aclose()


def _delete_damaged_vectors(path: Path) -> int:
    """Delete the rows of the vector file that ``check`` calls damaged (one transaction)."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            dimension = conn.execute("SELECT value FROM meta WHERE key = 'dimension'").fetchone()[0]
            rowids = {
                r[0]
                for r in conn.execute(
                    "SELECT rowid FROM vectors WHERE typeof(vector) != 'blob' OR length(vector) != ? "
                    "OR NOT json_valid(metadata) OR json_type(metadata) != 'object'",
                    (4 * dimension,),
                )
            }
            rowids.update(rowid for rowid, _ in damaged_vectors(conn, dimension))
            conn.executemany("DELETE FROM vectors WHERE rowid = ?", [(r,) for r in sorted(rowids)])
            conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return len(rowids)
    finally:
        conn.close()


async def _repair(directory: Path, found: StoreCheck) -> list[str]:
    done: list[str] = []
    for name, opener in ((GRAPH_FILE, _new_graph), (VECTORS_FILE, _new_vectors)):
        path = directory / name
        if path.is_file() and path.stat().st_size == 0:
            await opener(path)
            done.append(f"re-created the empty {name} (its content is lost: re-run the same `graphfuse index` command)")
    if found.damaged_vectors:
        n = await asyncio.to_thread(_delete_damaged_vectors, directory / VECTORS_FILE)
        done.append(f"deleted {n} damaged vectors (re-run the same `graphfuse index` command to embed them again)")
    store = await LocalStore.aopen(directory, create=False)  # a read-write open refreshes stale manifest counts
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
                known = {r[0] for r in c.execute("SELECT id, metadata FROM documents") if _kind(r[1]) != "entity"}
            orphans = [i for i in store.vectors._ids if i not in known]
            n = await store.vectors.delete(orphans)
            done.append(f"deleted {n} vectors without documents")
        await store.arefresh_manifest()
    finally:
        await store.aclose()
    return done


def _kind(metadata: str) -> object:
    with contextlib.suppress(ValueError, TypeError, AttributeError):
        return json.loads(metadata).get(KIND_KEY)
    return None


async def _new_graph(path: Path) -> None:

    await asyncio.to_thread(path.unlink)
    await SQLiteGraphStore(path).close()


async def _new_vectors(path: Path) -> None:

    await asyncio.to_thread(path.unlink)
    await LocalVectorStore(path).close()


def _repairable(found: StoreCheck) -> bool:
    # Damaged pages, and damaged rows of the graph, are not rewritten: the files are left for
    # inspection (or a backup). Damaged vectors are deleted: the indexer embeds them again.
    empty_only = all("empty (0 bytes)" in line for line in found.integrity)
    return empty_only and found.damaged_rows == found.damaged_vectors


async def acheck_store(directory: str | os.PathLike[str], *, repair: bool = False) -> StoreCheck:
    """Check a store directory (``LocalStore``); with ``repair``, fix what can be fixed:
    ``check_store(path)`` (sync) or ``await acheck_store(path)``.

    Without ``repair`` nothing is written (the files are opened read-only). Every damaged,
    missing, empty or unreadable file and every damaged row is reported by name (never
    raised): vectors of the wrong size, holding NaN or infinity, or not matching the checksum
    their row was written with, naming the vector and its document. A store the other commands
    refuse to open (they open it as :func:`open_store` does) is reported with their reason.
    Repairs: an empty (truncated) data file is re-created empty, damaged vectors, stray vectors
    and dangling relations are deleted, the manifest counts and ``corpus_index.npz`` are rewritten. Pending
    documents and documents without vectors need their sources: they are listed in
    ``unrepaired`` (re-run the same ``graphfuse index`` command to finish them); damaged pages
    and damaged rows of the graph are left as they are (``unrepaired`` says so).
    Raises ``NotFound`` when there is no store.
    """
    path = Path(directory)
    if not (path / MANIFEST).exists():
        raise NotFound(f"no GraphFuse store at {str(path)!r}")
    found = _inspect(path)
    if not found.integrity and not found.damaged_rows:
        await _open_like_commands(path, found)
    if not found.integrity and not found.damaged_rows:
        try:
            await _corpus_note(path, found, repair=False)
        except GraphFuseError as exc:  # the raw inspection found nothing; the store's own open did
            found.integrity.append(str(exc))
    if not repair or (found.ok and not found.notes):
        return found
    if not _repairable(found):
        if any(line.startswith(_REFUSED) for line in found.integrity):
            found.unrepaired.append(
                "--repair does not rewrite the manifest or its components: fix what the other commands refuse "
                "(install the plugin it names, or restore the manifest), or index the sources into a new store "
                "directory"
            )
        else:
            found.unrepaired.append(
                "damaged files or rows are left as they are: restore the store from a backup, or index the "
                "sources into a new store directory"
            )
        return found
    done = await _repair(path, found)
    await _corpus_note(path, found, repair=True)
    after = _inspect(path)
    after.repairs = [*done, *found.repairs]
    if after.pending or after.documents_without_vectors:
        after.unrepaired.append(
            f"{after.pending} pending documents and {after.documents_without_vectors} documents without "
            "vectors need their sources: run the same `graphfuse index` command again"
        )
    return after


check_store = sync_form(acheck_store)
"""Sync form of :func:`acheck_store`: same arguments, result and errors, no event loop needed."""

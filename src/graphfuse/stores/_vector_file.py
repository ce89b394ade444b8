"""The vector store's SQLite file: its format, row checksums, and the rows read and written.

One table of rows (id, float32 vector bytes, metadata JSON, CRC-32) and a ``meta`` table with
the dimension and a generation counter every write bumps, so each process can tell when
another one wrote (cross-process sync is a reload when the generation moved).
"""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core._errors import InvalidInput, StoreCorrupted
from ._records import CHECK_HINT, decode_metadata
from ._sqlite import Database, chunks, scalar
from ._vector_matrix import Matrix

__all__ = [
    "APPLICATION_ID",
    "FORMAT_VERSION",
    "Loaded",
    "checksum_matches",
    "delete_rows",
    "file_generation",
    "load",
    "open_file",
    "row_checksum",
    "upsert_rows",
]

APPLICATION_ID = 0x47464702  # "GFG" + 2: a GraphFuse vector store
# Each row keeps a CRC-32 of itself (id, vector bytes, metadata), written with the row and
# verified when the store is loaded and by `graphfuse check`.
FORMAT_VERSION = 2

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER);
INSERT INTO meta VALUES ('generation', 0), ('dimension', NULL);
CREATE TABLE vectors (id TEXT PRIMARY KEY, vector BLOB NOT NULL, metadata TEXT NOT NULL, checksum INTEGER)
"""
_UPSERT = (
    "INSERT INTO vectors (id, vector, metadata, checksum) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
    "vector = excluded.vector, metadata = excluded.metadata, checksum = excluded.checksum"
)
_GENERATION = "SELECT value FROM meta WHERE key = 'generation'"
_BUMP = "UPDATE meta SET value = value + 1 WHERE key = 'generation'"
_DIMENSION = "SELECT value FROM meta WHERE key = 'dimension'"


def row_checksum(doc_id: str | bytes, vector: bytes, metadata: str | bytes) -> int:
    """The CRC-32 a version-2 vector store keeps with a row: over the id (length-prefixed), the
    vector's bytes and the metadata JSON, as UTF-8."""
    head = doc_id.encode("utf-8") if isinstance(doc_id, str) else doc_id
    tail = metadata.encode("utf-8") if isinstance(metadata, str) else metadata
    crc = zlib.crc32(len(head).to_bytes(4, "little") + head)
    return zlib.crc32(tail, zlib.crc32(vector, crc))


def checksum_matches(doc_id: object, vector: object, metadata: object, checksum: object) -> bool:
    """True when a stored row's parts are of the types written and match ``checksum``."""
    if not isinstance(doc_id, (str, bytes)) or not isinstance(vector, bytes) or not isinstance(metadata, (str, bytes)):
        return False
    return checksum == row_checksum(doc_id, vector, metadata)


def open_file(
    path: str | os.PathLike[str], dimension: int | None, *, readonly: bool, create: bool
) -> tuple[Database, int | None]:
    """The database at ``path`` and its stored dimension (set to ``dimension`` if it has none)."""
    db = Database(
        path,
        application_id=APPLICATION_ID,
        version=FORMAT_VERSION,
        schema=_SCHEMA,
        kind="vector store",
        readonly=readonly,
        create=create,
    )
    try:
        with db.guard() if readonly else db.write() as c:
            stored = scalar(c, _DIMENSION)
            if stored is None and dimension is not None and not readonly:
                c.execute("UPDATE meta SET value = ? WHERE key = 'dimension'", (dimension,))
    except BaseException:
        db.close()
        raise
    return db, stored


@dataclass(frozen=True)
class Loaded:
    """Every row of a file, checked: ids, vectors (one matrix) and metadata, in row order."""

    generation: int
    dimension: int | None
    ids: list[str]
    matrix: Matrix
    metadata: list[dict[str, Any]]


def _shown(ids: list[str]) -> str:
    return ", ".join(map(repr, ids[:5])) + (" ..." if len(ids) > 5 else "")


def load(db: Database, held: int | None) -> Loaded:
    """Read and check every row of ``db`` in one snapshot.

    ``held`` is the dimension of the vectors the caller holds (``None`` when it holds none):
    a file that now records another one was replaced. A row of the wrong size, holding NaN or
    infinity, not matching its checksum or with metadata that is not JSON raises
    ``StoreCorrupted`` naming the rows.
    """
    with db.snapshot() as c:
        generation = scalar(c, _GENERATION)
        dimension = scalar(c, _DIMENSION)
        rows = c.execute("SELECT id, vector, metadata, checksum FROM vectors").fetchall()
    ids = [r[0] for r in rows]
    if held is not None and dimension is not None and dimension != held:
        # Nothing GraphFuse does changes a store's dimension once it holds vectors: the file was replaced.
        raise StoreCorrupted(
            f"vector store {db.path!r} changed its dimension from {held} to {dimension} "
            f"while open (the file was replaced or rewritten by something else); {CHECK_HINT}"
        )
    if rows and (isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1):
        raise StoreCorrupted(
            f"vector store {db.path!r} holds {len(rows)} vectors but records no valid dimension "
            f"({dimension!r}); {CHECK_HINT}"
        )
    size = 4 * (dimension or 0)
    wrong = [r[0] for r in rows if not isinstance(r[1], bytes) or len(r[1]) != size]
    if wrong:
        raise StoreCorrupted(
            f"vector store {db.path!r}: {len(wrong)} stored vector(s) are not {dimension} float32 values "
            f"({_shown(wrong)}); {CHECK_HINT}"
        )
    # Each row was written with its checksum: one without (None) was written by something else.
    wrong = [r[0] for r in rows if not checksum_matches(*r)]
    if wrong:
        raise StoreCorrupted(
            f"vector store {db.path!r}: {len(wrong)} stored row(s) ({_shown(wrong)}) do not match their "
            f"checksum (the file was damaged, or written by something else); {CHECK_HINT}"
        )
    matrix = np.zeros((len(rows), dimension or 0), dtype=np.float32)
    for i, r in enumerate(rows):
        matrix[i] = np.frombuffer(r[1], dtype=np.float32)
    finite = np.isfinite(matrix).all(axis=1)
    if not finite.all():
        wrong = [ids[i] for i in np.flatnonzero(~finite)]
        raise StoreCorrupted(
            f"vector store {db.path!r}: {len(wrong)} stored vector(s) ({_shown(wrong)}) hold NaN or infinity; "
            f"{CHECK_HINT}"
        )
    where = f"vector store {db.path!r}: vector"
    metadata = [decode_metadata(r[2], f"{where} {r[0]!r}") for r in rows]
    return Loaded(generation, dimension, ids, matrix, metadata)


def file_generation(db: Database) -> int:
    """The file's generation: it changes with every write, by any process."""
    with db.guard() as c:
        return int(scalar(c, _GENERATION))


def upsert_rows(
    db: Database,
    known: int,
    rows: list[tuple[str, bytes, str]],
    dimension: int,
) -> tuple[bool, int]:
    """Write ``rows`` (id, vector bytes, metadata JSON) in one transaction.

    Returns whether another writer got in since generation ``known`` and the new generation.
    """
    with db.write() as c:
        stored = scalar(c, _DIMENSION)
        if stored is not None and stored != dimension:
            # Another process fixed the dimension after our last sync.
            raise InvalidInput(
                f"vector store {db.path!r}: dimension {dimension} does not match the store's dimension {stored}"
            )
        behind = scalar(c, _GENERATION) != known
        c.execute("UPDATE meta SET value = ? WHERE key = 'dimension'", (dimension,))
        c.executemany(_UPSERT, [(*r, row_checksum(*r)) for r in rows])
        c.execute(_BUMP)
        generation = scalar(c, _GENERATION)
    return behind, generation


def delete_rows(db: Database, known: int, ids: list[str]) -> tuple[bool, int, int]:
    """Delete the rows of ``ids`` in one transaction: (another writer got in, new generation, deleted)."""
    deleted = 0
    with db.write() as c:
        behind = scalar(c, _GENERATION) != known
        for part in chunks(ids):
            sql = f"DELETE FROM vectors WHERE id IN ({','.join('?' * len(part))})"
            deleted += c.execute(sql, part).rowcount
        c.execute(_BUMP)
        generation = scalar(c, _GENERATION)
    return behind, generation, deleted

"""Opening GraphFuse's SQLite files: WAL, foreign keys, schema creation and corruption checks.

Each file is stamped with an ``application_id`` (which store wrote it) and a ``user_version``
(the schema version), so a foreign SQLite file, a non-SQLite file or a truncated one is
reported as :class:`StoreCorrupted` instead of failing later with an obscure error.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tenacity import Retrying, retry_if_exception, stop_after_delay, wait_random

from .._core._errors import ConnectionFailed, DiskFull, InvalidInput, PermissionDenied, StoreCorrupted
from ._records import CHECK_HINT

__all__ = ["Database", "chunks", "scalar"]

_BUSY_TIMEOUT_S = 30.0


class Database:
    """One SQLite connection shared by every thread of the process, serialised by a lock.

    Other processes use their own connections: WAL lets them read while one of them writes.

    ``readonly=True`` opens an existing file without ever writing to it (``mode=ro``; when
    SQLite cannot even create its shared-memory file beside it, as in a read-only directory,
    the file is opened as immutable): no schema, no pragmas that write, and :meth:`write`
    raises :class:`~graphfuse.InvalidInput`.

    ``create=False`` refuses to initialise an empty file (zero bytes, or no table): a file
    that a store's manifest says was created and is now empty was truncated or replaced, and
    re-creating it silently would orphan everything the rest of the store records.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        application_id: int,
        version: int,
        schema: str,
        kind: str,
        readonly: bool = False,
        create: bool = True,
    ):
        self.path = os.fspath(path)
        self.version = version
        """The file's format version (a file of another version is refused)."""
        self.kind = kind
        self.readonly = readonly
        self.lock = threading.RLock()
        memory = self.path == ":memory:"
        if not memory and os.path.isdir(self.path):
            raise StoreCorrupted(f"{kind} path {self.path!r} is a directory, not a SQLite file")
        if (readonly or not create) and (memory or not os.path.isfile(self.path)):
            raise StoreCorrupted(f"{kind} {self.path!r} does not exist; {CHECK_HINT}")
        if not memory and os.path.isfile(self.path) and not os.access(self.path, os.R_OK):
            raise PermissionDenied(f"{kind} {self.path!r} cannot be read: permission denied")
        try:
            self.conn = self._connect(readonly)
        except sqlite3.Error as exc:
            denied = self._denied(exc)
            if denied is not None:
                raise denied from exc
            raise ConnectionFailed(f"cannot open {kind} {self.path!r}: {exc}") from exc
        except UnicodeDecodeError as exc:  # SQLite's message quoted bytes of a damaged schema
            raise StoreCorrupted(f"{kind} {self.path!r} is damaged ({exc!r}); {CHECK_HINT}") from exc
        try:
            with self.guard():
                self._prepare(memory, application_id, version, schema, create and not readonly)
        except BaseException:
            self.conn.close()
            raise

    def _connect(self, readonly: bool) -> sqlite3.Connection:
        if not readonly:
            return sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        uri = Path(self.path).resolve().as_uri()
        conn = sqlite3.connect(
            f"{uri}?mode=ro", timeout=_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False, uri=True
        )
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.OperationalError:
            # A WAL file in a directory we cannot write: nobody can be writing it either.
            conn.close()
            return sqlite3.connect(
                f"{uri}?immutable=1", timeout=_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False, uri=True
            )

    def _prepare(self, memory: bool, application_id: int, version: int, schema: str, create: bool) -> None:
        c = self.conn
        # One read transaction: both from the same snapshot while another process creates the file.
        c.execute("BEGIN")
        try:
            found_id = c.execute("PRAGMA application_id").fetchone()[0]
            tables = c.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        finally:
            c.execute("COMMIT")
        if found_id == 0 and tables == 0 and not create:
            size = os.path.getsize(self.path) if os.path.isfile(self.path) else 0
            raise StoreCorrupted(
                f"{self.kind} {self.path!r} is empty ({size} bytes, no tables) although its store was created: "
                f"it was truncated or replaced, and is left as it is; {CHECK_HINT}"
            )
        if found_id == 0 and tables == 0:
            if not memory:
                _wal(c)
            c.execute("BEGIN IMMEDIATE")
            try:
                if c.execute("PRAGMA application_id").fetchone()[0] == 0:
                    for statement in schema.split(";"):
                        if statement.strip():
                            c.execute(statement)
                    c.execute(f"PRAGMA application_id={application_id}")
                    c.execute(f"PRAGMA user_version={version}")
                c.execute("COMMIT")
            except BaseException:
                c.execute("ROLLBACK")
                raise
            found_id = application_id
        if found_id != application_id:
            raise StoreCorrupted(f"{self.path!r} is a SQLite file, but not a GraphFuse {self.kind}")
        found_version = c.execute("PRAGMA user_version").fetchone()[0]
        if found_version != version:
            raise StoreCorrupted(
                f"{self.kind} {self.path!r} has format version {found_version}; this GraphFuse reads version {version}"
            )
        if not memory and not self.readonly:
            _wal(c)
            c.execute("PRAGMA synchronous=NORMAL")
        c.execute("PRAGMA foreign_keys=ON")
        # 64 MiB of page cache (the default is 2 MiB): inserts into the relation indexes of a
        # large graph otherwise keep re-reading B-tree pages from disk.
        c.execute("PRAGMA cache_size=-65536")

    @contextlib.contextmanager
    def guard(self) -> Iterator[sqlite3.Connection]:
        """Hold the lock and translate SQLite errors into GraphFuse errors."""
        with self.lock:
            try:
                yield self.conn
            except (sqlite3.IntegrityError, sqlite3.ProgrammingError, sqlite3.InterfaceError):
                raise
            except sqlite3.DatabaseError as exc:
                raise self._translate(exc) from exc
            except UnicodeDecodeError as exc:  # SQLite's message quoted bytes of a damaged schema
                raise StoreCorrupted(
                    f"{self.kind} {self.path!r} is damaged or not a GraphFuse store ({exc!r}); {CHECK_HINT}"
                ) from exc

    @contextlib.contextmanager
    def write(self, *, foreign_keys: bool = True) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``): everything or nothing.

        ``foreign_keys=False`` skips SQLite's foreign-key checks for this transaction only,
        for callers that check the references themselves inside it.
        """
        if self.readonly:
            raise InvalidInput(f"{self.kind} {self.path!r} is opened read-only: it cannot be written")
        with self.guard() as c:
            if not foreign_keys:
                c.execute("PRAGMA foreign_keys=OFF")
            try:
                c.execute("BEGIN IMMEDIATE")
                try:
                    yield c
                except BaseException:
                    if c.in_transaction:  # (SQLite rolls back by itself on some errors: a full disk)
                        c.execute("ROLLBACK")
                    raise
                c.execute("COMMIT")
            finally:
                if not foreign_keys:
                    c.execute("PRAGMA foreign_keys=ON")
        # 64 MiB of page cache (the default is 2 MiB): inserts into the relation indexes of a
        # large graph otherwise keep re-reading B-tree pages from disk.
        c.execute("PRAGMA cache_size=-65536")

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every query inside sees the same committed state."""
        with self.guard() as c:
            c.execute("BEGIN")
            try:
                yield c
            finally:
                c.execute("COMMIT")

    def _denied(self, exc: sqlite3.Error) -> PermissionDenied | None:
        """A permission problem behind a SQLite error, named as such (the file is not damaged)."""
        message = str(exc)
        if self.path == ":memory:" or not isinstance(exc, sqlite3.OperationalError):
            return None
        directory = os.path.dirname(os.path.abspath(self.path))
        if "readonly database" in message or "unable to open" in message:
            if os.path.exists(self.path) and not os.access(self.path, os.R_OK):
                return PermissionDenied(f"{self.kind} {self.path!r} cannot be read: permission denied")
            if not self.readonly and os.path.exists(self.path) and not os.access(self.path, os.W_OK):
                return PermissionDenied(
                    f"{self.kind} {self.path!r} is read-only (permission denied): it cannot be written ({message})"
                )
            if not self.readonly and not os.access(directory, os.W_OK):
                return PermissionDenied(
                    f"{self.kind} {self.path!r}: its directory {directory!r} is read-only (permission denied), "
                    f"so SQLite cannot write its journal ({message})"
                )
            if "readonly database" in message:
                return PermissionDenied(f"{self.kind} {self.path!r} cannot be written: {message}")
        return None

    def _translate(self, exc: sqlite3.DatabaseError) -> Exception:
        message = str(exc)
        if isinstance(exc, sqlite3.OperationalError) and "locked" in message:
            return ConnectionFailed(f"{self.kind} {self.path!r} stayed locked by another writer: {message}")
        if getattr(exc, "sqlite_errorcode", None) == 13 or "database or disk is full" in message:  # SQLITE_FULL
            return DiskFull(
                f"{self.kind} {self.path!r}: no space left on the disk ({message}); the write was rolled back: "
                "free space and run the same command again"
            )
        denied = self._denied(exc)
        if denied is not None:
            return denied
        return StoreCorrupted(
            f"{self.kind} {self.path!r} is damaged or not a GraphFuse store ({message}); {CHECK_HINT}"
        )

    def close(self) -> None:
        with self.lock:
            self.conn.close()


def scalar(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...] = ()) -> Any:
    row = conn.execute(sql, params).fetchone()
    return None if row is None else row[0]


def chunks(values: list[Any], size: int = 500) -> Iterator[list[Any]]:
    for i in range(0, len(values), size):
        yield values[i : i + size]


def _locked(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


def _wal(c: sqlite3.Connection) -> None:
    """Switch ``c`` to WAL. Changing the journal mode needs the file to itself, and SQLite answers
    "database is locked" at once (without its busy handler) while another process is creating the
    same new file: tried again for up to the busy timeout."""
    for attempt in Retrying(
        retry=retry_if_exception(_locked),
        wait=wait_random(0.005, 0.05),
        stop=stop_after_delay(_BUSY_TIMEOUT_S),
        reraise=True,
    ):
        with attempt:
            c.execute("PRAGMA journal_mode=WAL")

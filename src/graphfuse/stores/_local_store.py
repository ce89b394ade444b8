"""LocalStore: one directory holding the graph store, the vector store and a manifest."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

from .._errors import DiskFull, InvalidInput, NotFound, PermissionDenied, StoreCorrupted
from .._protocols import Embedder
from ..embedders import embedder_identity
from ._records import CHECK_HINT
from ._sqlite_graph import SQLiteGraphStore
from ._vector_store import LocalVectorStore

__all__ = ["LocalStore"]

FORMAT = "graphfuse-store"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
GRAPH_FILE = "graph.sqlite"
VECTORS_FILE = "vectors.sqlite"
_NO_SPACE = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))  # (no space left, disk quota exceeded)


# How long an open waits for the manifest of a store another process is creating.
_CREATION_WAIT_S = 10.0
_TEMP_PREFIX = ".manifest-"


def _write_manifest(directory: Path, manifest: dict[str, Any], *, first: bool = False) -> bool:
    """Write the manifest atomically; with ``first``, only if there is none yet (returns whether
    it was written: a process creating the same store may have written its own first)."""
    # Written last and atomically: a directory without a manifest is a half-written one. The
    # file gets the data files' permissions (the umask's when there are none yet), so whoever
    # may read the store may read its manifest too.
    tmp = str(directory / f"{_TEMP_PREFIX}{secrets.token_hex(8)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except PermissionError as exc:
        raise PermissionDenied(
            f"store directory {str(directory)!r} cannot be written (permission denied): "
            "open it read-only to query it (`graphfuse query` does)"
        ) from exc
    try:
        with contextlib.suppress(FileNotFoundError):  # no data file yet: the umask decided
            os.fchmod(fd, (directory / GRAPH_FILE).stat().st_mode & 0o777)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(manifest, f, indent=2, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        if not first:
            os.replace(tmp, directory / MANIFEST)
            return True
        try:
            os.link(tmp, directory / MANIFEST)  # atomic, and never over another creator's manifest
        except FileExistsError:
            return False
        except OSError:  # a file system without hard links: the next best thing
            if (directory / MANIFEST).exists():
                return False
            os.replace(tmp, directory / MANIFEST)
        finally:
            Path(tmp).unlink(missing_ok=True)
        return True
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.errno in _NO_SPACE:
            raise DiskFull(
                f"store directory {str(directory)!r}: no space left on the disk to write {MANIFEST} "
                f"({exc.strerror}); it is left as it was: free space and run the same command again"
            ) from exc
        raise


def _discard_new_store(directory: Path, opened: list[Any]) -> None:
    for store in opened:
        db = store._db
        if db is not None:
            db.close()
    for name in (GRAPH_FILE, VECTORS_FILE):
        for suffix in ("", "-wal", "-shm", "-journal"):
            (directory / f"{name}{suffix}").unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        directory.rmdir()  # (only when nothing else is in it)


def _read_manifest(directory: Path) -> dict[str, Any]:
    path = directory / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except PermissionError as exc:
        raise PermissionDenied(
            f"store directory {str(directory)!r}: {MANIFEST} cannot be read: permission denied"
        ) from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StoreCorrupted(
            f"store directory {str(directory)!r}: {MANIFEST} is unreadable ({exc}); {CHECK_HINT}"
        ) from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise StoreCorrupted(f"store directory {str(directory)!r}: {MANIFEST} is not a GraphFuse store manifest")
    if manifest.get("version") != FORMAT_VERSION:
        raise StoreCorrupted(
            f"store directory {str(directory)!r} has format version {manifest.get('version')!r}; "
            f"this GraphFuse reads version {FORMAT_VERSION}"
        )
    for name in (GRAPH_FILE, VECTORS_FILE):
        if not (directory / name).is_file():
            raise StoreCorrupted(f"store directory {str(directory)!r}: {name} is missing")
    return manifest


def _leftovers(path: Path) -> tuple[list[str], bool]:
    """What a directory without a manifest holds, and whether it is only a store's own files.

    While those files are recent (a store's creation takes milliseconds), another process may be
    creating the store: wait for its manifest (then nothing is left over: the caller opens it).
    """
    deadline = time.monotonic() + _CREATION_WAIT_S
    while True:
        if (path / MANIFEST).exists():
            return [], False
        found = sorted(p for p in path.iterdir()) if path.is_dir() else []
        own = bool(found) and all(_store_file(p.name) for p in found)
        try:
            recent = own and max(p.stat().st_mtime for p in found) > time.time() - _CREATION_WAIT_S
        except FileNotFoundError:
            recent = True  # a temporary file was just renamed: look again
        if not recent or time.monotonic() >= deadline:
            return [p.name for p in found], own
        time.sleep(0.05)


def _store_file(name: str) -> bool:
    """A file a store's creation writes before its manifest."""
    base = name.removesuffix("-wal").removesuffix("-shm").removesuffix("-journal")
    return base in (GRAPH_FILE, VECTORS_FILE) or (name.startswith(_TEMP_PREFIX) and name.endswith(".tmp"))


class LocalStore:
    """The embedded default: a store directory (default ``.graphfuse/``) with

    - ``graph``: a :class:`SQLiteGraphStore` (``graph.sqlite``),
    - ``vectors``: a :class:`LocalVectorStore` (``vectors.sqlite``),
    - ``manifest``: format version, embedder identity, dimension and counts (``manifest.json``).

    Open it with ``LocalStore.open(directory)``, which also works as ``await LocalStore.open(...)``
    and ``async with LocalStore.open(...) as store``. Close it with ``await store.close()``,
    which also refreshes the counts in the manifest.
    """

    def __init__(self, directory: Path, graph: SQLiteGraphStore, vectors: LocalVectorStore, manifest: dict[str, Any]):
        self.directory = directory
        self.graph = graph
        self.vectors = vectors
        self._manifest = manifest
        self._closed = False
        self._readonly = False

    @classmethod
    def open(
        cls, directory: str | os.PathLike[str] = ".graphfuse", *, create: bool = True, mode: str = "rw"
    ) -> LocalStore:
        """Open the store in ``directory``, creating it when missing (unless ``create=False``).

        ``mode="ro"`` opens an existing store for querying only: no file is written (a store
        on a read-only file system or owned by another user works), writes raise
        ``InvalidInput`` and closing leaves the manifest alone; ``create`` is ignored. A
        read-write open brings stale manifest counts (left by a process that was killed) up
        to date.

        Raises ``NotFound`` when it does not exist and ``create`` is false (or ``mode="ro"``),
        ``StoreCorrupted`` when the directory is half-written (data files without a
        manifest), holds something else, or a file in it is damaged.
        """
        if mode not in ("rw", "ro"):
            raise InvalidInput(f"mode must be 'rw' or 'ro', got {mode!r}")
        readonly = mode == "ro"
        create = create and not readonly
        path = Path(directory)
        if path.exists() and not path.is_dir():
            raise StoreCorrupted(f"store path {str(path)!r} is a file, not a store directory")
        if not (path / MANIFEST).exists():
            created = cls._create(path, create)
            if created is not None:
                return created
        manifest = _read_manifest(path)
        # The manifest is written after both files were created: an empty file now was truncated.
        graph = SQLiteGraphStore(path / GRAPH_FILE, readonly=readonly, create=False)
        try:
            vectors = LocalVectorStore(path / VECTORS_FILE, readonly=readonly, create=False)
        except BaseException:
            graph._db.close()
            raise
        dimension = manifest.get("dimension")
        if dimension is not None and vectors.dimension is not None and dimension != vectors.dimension:
            graph._db.close()
            raise StoreCorrupted(
                f"store directory {str(path)!r}: manifest says dimension {dimension}, "
                f"{VECTORS_FILE} holds {vectors.dimension}"
            )
        store = cls(path, graph, vectors, manifest)
        store._readonly = readonly
        if not readonly:
            try:
                counts = store._actual_counts()
                if manifest.get("counts") != counts:
                    manifest["counts"] = counts
                    _write_manifest(path, manifest)
            except BaseException:
                graph._db.close()
                if vectors._db is not None:
                    vectors._db.close()
                raise
        return store

    @classmethod
    def _create(cls, path: Path, create: bool) -> LocalStore | None:
        """A new store in ``path``, or ``None`` when another process created it meanwhile (open that one)."""
        leftovers, own = _leftovers(path)
        if (path / MANIFEST).exists():
            return None
        if own:
            raise StoreCorrupted(
                f"store directory {str(path)!r} has no {MANIFEST} but holds {', '.join(leftovers)}: it is "
                "half-written. Another process may still be creating it (retry in a moment), or its "
                "creation was interrupted (then remove the directory and index again)"
            )
        if leftovers:
            raise StoreCorrupted(
                f"store directory {str(path)!r} has no {MANIFEST} but contains {', '.join(leftovers)}: "
                "it is not a GraphFuse store (use another directory)"
            )
        if not create:
            raise NotFound(f"no GraphFuse store at {str(path)!r}")
        path.mkdir(parents=True, exist_ok=True)
        opened: list[SQLiteGraphStore | LocalVectorStore] = []
        manifest: dict[str, Any] = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "embedder": None,
            "dimension": None,
            "counts": {"documents": 0, "relations": 0, "vectors": 0},
        }
        try:
            opened.append(graph := SQLiteGraphStore(path / GRAPH_FILE))
            opened.append(vectors := LocalVectorStore(path / VECTORS_FILE))
            written = _write_manifest(path, manifest, first=True)
        except BaseException as exc:
            if isinstance(exc, DiskFull) and not (path / MANIFEST).exists():
                # A creation that ran out of space leaves no half-written store behind, which the
                # next run would refuse. (Any other failure may be a racing creator's: its files stay.)
                _discard_new_store(path, opened)
            else:
                for store in opened:
                    if store._db is not None:
                        store._db.close()
            raise
        if not written:  # another process created the same store first: open theirs
            graph._db.close()
            if vectors._db is not None:
                vectors._db.close()
            return None
        return cls(path, graph, vectors, manifest)

    @property
    def readonly(self) -> bool:
        """True when opened with ``mode="ro"``."""
        return self._readonly

    def _actual_counts(self) -> dict[str, int]:
        return {
            "documents": int(self.graph._scalar("SELECT count(*) FROM documents")),
            "relations": int(self.graph._scalar("SELECT count(*) FROM relations")),
            "vectors": self.vectors._count(),
        }

    @property
    def manifest(self) -> dict[str, Any]:
        """A copy of the manifest: ``format``, ``version``, ``embedder``, ``dimension``, ``counts``
        and, for a store opened through :class:`StoreDirectory`, ``components``."""
        copy: dict[str, Any] = json.loads(json.dumps(self._manifest))
        return copy

    async def use_embedder(self, embedder: Embedder) -> None:
        """Record ``embedder`` in the manifest, or check it is the one the store was built with.

        Raises ``InvalidInput`` when the store already holds vectors from another embedder
        or dimension (their similarities would be meaningless).
        """
        identity, dimension = embedder_identity(embedder), embedder.dimension
        recorded = self._manifest.get("embedder")
        if recorded is not None and (recorded != identity or self._manifest.get("dimension") != dimension):
            raise InvalidInput(
                f"store {str(self.directory)!r} was built with embedder {recorded!r} "
                f"(dimension {self._manifest.get('dimension')}), not {identity!r} (dimension {dimension})"
            )
        if self.vectors.dimension is not None and self.vectors.dimension != dimension:
            raise InvalidInput(
                f"store {str(self.directory)!r} holds {self.vectors.dimension}-d vectors; "
                f"embedder {identity!r} makes {dimension}-d ones"
            )
        if recorded is None and not self._readonly:
            self._manifest["embedder"] = identity
            self._manifest["dimension"] = dimension
            await self.refresh_manifest()

    async def record_components(self, components: dict[str, str]) -> None:
        """Record the registered names of the store's components in the manifest (``components``).

        Written by :class:`StoreDirectory` so the store reopens with the same embedder and
        backends; the manifest is rewritten atomically (fsync, then rename).
        """
        self._manifest["components"] = dict(components)
        await self.refresh_manifest()

    async def refresh_manifest(self) -> dict[str, Any]:
        """Recount documents, relations and vectors and rewrite the manifest atomically."""
        if self._readonly:
            raise InvalidInput(f"store {str(self.directory)!r} is opened read-only: its manifest cannot be rewritten")
        self._manifest["counts"] = {
            "documents": await self.graph.count_documents(),
            "relations": await self.graph.count_relations(),
            "vectors": await self.vectors.count(),
        }
        if self._manifest.get("dimension") is None and self.vectors.dimension is not None:
            self._manifest["dimension"] = self.vectors.dimension
        _write_manifest(self.directory, self._manifest)
        return self.manifest

    async def close(self) -> None:
        """Refresh the manifest counts and close both stores (idempotent)."""
        if self._closed:
            return
        self._closed = True
        try:
            if not self._readonly:
                await self.refresh_manifest()
        finally:
            await self.graph.close()
            await self.vectors.close()

    def __await__(self) -> Generator[Any, None, LocalStore]:
        # Lets callers write ``store = await LocalStore.open(...)``: opening is synchronous.
        return self._self().__await__()

    async def _self(self) -> LocalStore:
        return self

    async def __aenter__(self) -> LocalStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"LocalStore({str(self.directory)!r})"

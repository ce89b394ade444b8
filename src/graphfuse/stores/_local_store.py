"""LocalStore: one directory holding the graph store, the vector store and a manifest."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import tempfile
from collections.abc import Generator
from pathlib import Path
from typing import Any

from .._errors import DiskFull, InvalidInput, NotFound, PermissionDenied, StoreCorrupted
from .._protocols import Embedder
from ..embedders._identity import embedder_identity
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


def _write_manifest(directory: Path, manifest: dict[str, Any]) -> None:
    # Written last and atomically: a directory without a manifest is a half-written one.
    try:
        fd, tmp = tempfile.mkstemp(prefix=".manifest-", suffix=".tmp", dir=directory)
    except PermissionError as exc:
        raise PermissionDenied(
            f"store directory {str(directory)!r} cannot be written (permission denied): "
            "open it read-only to query it (`graphfuse query` does)"
        ) from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(manifest, f, indent=2, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, directory / MANIFEST)
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
            leftovers = sorted(p.name for p in path.iterdir()) if path.is_dir() else []
            if leftovers:
                raise StoreCorrupted(
                    f"store directory {str(path)!r} has no {MANIFEST} but contains {', '.join(leftovers)}: "
                    "it is half-written or not a GraphFuse store (remove it and ingest again)"
                )
            if not create:
                raise NotFound(f"no GraphFuse store at {str(path)!r}")
            path.mkdir(parents=True, exist_ok=True)
            opened: list[SQLiteGraphStore | LocalVectorStore] = []
            try:
                opened.append(graph := SQLiteGraphStore(path / GRAPH_FILE))
                opened.append(vectors := LocalVectorStore(path / VECTORS_FILE))
                manifest: dict[str, Any] = {
                    "format": FORMAT,
                    "version": FORMAT_VERSION,
                    "embedder": None,
                    "dimension": None,
                    "counts": {"documents": 0, "relations": 0, "vectors": 0},
                }
                _write_manifest(path, manifest)
            except BaseException:
                # A creation that failed (a full disk) leaves no half-written store behind, which
                # the next run would refuse: the directory was empty, these files are this call's.
                _discard_new_store(path, opened)
                raise
            return cls(path, graph, vectors, manifest)
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

"""LocalStore: one directory holding the graph store, the vector store and a manifest."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import secrets
import time
from pathlib import Path
from typing import Any

from .._core._errors import DiskFull, InvalidInput, NotFound, PermissionDenied, StoreCorrupted
from .._core._protocols import Embedder
from .._core._sync import run_sync, sync_form
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


def _discard_new_store_files(directory: Path) -> None:
    if (directory / MANIFEST).exists():
        return
    for name in (GRAPH_FILE, VECTORS_FILE):
        for suffix in ("", "-wal", "-shm", "-journal"):
            (directory / f"{name}{suffix}").unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        directory.rmdir()  # (only when nothing else is in it)


async def _close_all(stores: list[SQLiteGraphStore | LocalVectorStore]) -> None:
    for store in reversed(stores):
        await store.close()


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


def _has_manifest(path: Path) -> bool:
    if path.exists() and not path.is_dir():
        raise StoreCorrupted(f"store path {str(path)!r} is a file, not a store directory")
    return (path / MANIFEST).exists()


def _make_directory(path: Path, create: bool) -> bool:
    """Make the directory of a new store (``False`` when another process created the store meanwhile)."""
    leftovers, own = _leftovers(path)
    if (path / MANIFEST).exists():
        return False
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
    return True


def _store_file(name: str) -> bool:
    """A file a store's creation writes before its manifest."""
    base = name.removesuffix("-wal").removesuffix("-shm").removesuffix("-journal")
    return base in (GRAPH_FILE, VECTORS_FILE) or (name.startswith(_TEMP_PREFIX) and name.endswith(".tmp"))


class LocalStore:
    """The embedded default: a store directory (default ``.graphfuse/``) with

    - ``graph``: a :class:`SQLiteGraphStore` (``graph.sqlite``),
    - ``vectors``: a :class:`LocalVectorStore` (``vectors.sqlite``),
    - ``manifest``: format version, embedder identity, dimension and counts (``manifest.json``).

    Open it with ``LocalStore.open(directory)`` (async: ``await LocalStore.aopen(directory)``),
    close it with ``store.close()`` (``await store.aclose()``), which also refreshes the counts in
    the manifest, or use it in a ``with`` (``async with``) block. Each method comes in both
    forms, the sync one plain, the async one ``a``-prefixed.
    """

    def __init__(self, directory: Path, graph: SQLiteGraphStore, vectors: LocalVectorStore, manifest: dict[str, Any]):
        self.directory = directory
        self.graph = graph
        self.vectors = vectors
        self._manifest = manifest
        self._closed = False
        self._readonly = False

    @classmethod
    async def aopen(
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
        if not await asyncio.to_thread(_has_manifest, path):
            created = await cls._acreate(path, create)
            if created is not None:
                return created
        manifest = await asyncio.to_thread(_read_manifest, path)
        # The manifest is written after both files were created: an empty file now was truncated.
        opened: list[SQLiteGraphStore | LocalVectorStore] = []
        try:
            opened.append(
                graph := await asyncio.to_thread(SQLiteGraphStore, path / GRAPH_FILE, readonly=readonly, create=False)
            )
            opened.append(
                vectors := await asyncio.to_thread(
                    LocalVectorStore, path / VECTORS_FILE, readonly=readonly, create=False
                )
            )
            dimension = manifest.get("dimension")
            if dimension is not None and vectors.dimension is not None and dimension != vectors.dimension:
                raise StoreCorrupted(
                    f"store directory {str(path)!r}: manifest says dimension {dimension}, "
                    f"{VECTORS_FILE} holds {vectors.dimension}"
                )
            store = cls(path, graph, vectors, manifest)
            store._readonly = readonly
            if not readonly:
                counts = await store._acounts()
                if manifest.get("counts") != counts:
                    manifest["counts"] = counts
                    await asyncio.to_thread(_write_manifest, path, manifest)
        except BaseException:
            await _close_all(opened)
            raise
        return store

    @classmethod
    def open(
        cls, directory: str | os.PathLike[str] = ".graphfuse", *, create: bool = True, mode: str = "rw"
    ) -> LocalStore:
        """Sync form of :meth:`aopen` (same arguments, result and errors)."""
        return run_sync(cls.aopen(directory, create=create, mode=mode))

    @classmethod
    async def _acreate(cls, path: Path, create: bool) -> LocalStore | None:
        """A new store in ``path``, or ``None`` when another process created it meanwhile (open that one)."""
        if not await asyncio.to_thread(_make_directory, path, create):
            return None
        opened: list[SQLiteGraphStore | LocalVectorStore] = []
        manifest: dict[str, Any] = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "embedder": None,
            "dimension": None,
            "counts": {"documents": 0, "relations": 0, "vectors": 0},
        }
        try:
            opened.append(graph := await asyncio.to_thread(SQLiteGraphStore, path / GRAPH_FILE))
            opened.append(vectors := await asyncio.to_thread(LocalVectorStore, path / VECTORS_FILE))
            written = await asyncio.to_thread(_write_manifest, path, manifest, first=True)
        except BaseException as exc:
            await _close_all(opened)
            if isinstance(exc, DiskFull):
                # A creation that ran out of space leaves no half-written store behind, which the
                # next run would refuse. (Any other failure may be a racing creator's: its files stay.)
                await asyncio.to_thread(_discard_new_store_files, path)
            raise
        if not written:  # another process created the same store first: open theirs
            await _close_all(opened)
            return None
        return cls(path, graph, vectors, manifest)

    @property
    def readonly(self) -> bool:
        """True when opened with ``mode="ro"``."""
        return self._readonly

    async def _acounts(self) -> dict[str, int]:
        return {
            "documents": await self.graph.count_documents(),
            "relations": await self.graph.count_relations(),
            "vectors": await self.vectors.count(),
        }

    @property
    def manifest(self) -> dict[str, Any]:
        """A copy of the manifest: ``format``, ``version``, ``embedder``, ``dimension``, ``counts``
        and, for a store opened through :class:`StoreDirectory`, ``components``."""
        copy: dict[str, Any] = json.loads(json.dumps(self._manifest))
        return copy

    async def ause_embedder(self, embedder: Embedder) -> None:
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
            await self.arefresh_manifest()

    use_embedder = sync_form(ause_embedder)
    """Sync form of :meth:`ause_embedder`: same arguments, result and errors, no event loop needed."""

    async def arecord_components(self, components: dict[str, str]) -> None:
        """Record the registered names of the store's components in the manifest (``components``).

        Written by :class:`StoreDirectory` so the store reopens with the same embedder and
        backends; the manifest is rewritten atomically (fsync, then rename).
        """
        self._manifest["components"] = dict(components)
        await self.arefresh_manifest()

    record_components = sync_form(arecord_components)
    """Sync form of :meth:`arecord_components`: same arguments, result and errors, no event loop needed."""

    async def arefresh_manifest(self) -> dict[str, Any]:
        """Recount documents, relations and vectors and rewrite the manifest atomically."""
        if self._readonly:
            raise InvalidInput(f"store {str(self.directory)!r} is opened read-only: its manifest cannot be rewritten")
        self._manifest["counts"] = await self._acounts()
        if self._manifest.get("dimension") is None and self.vectors.dimension is not None:
            self._manifest["dimension"] = self.vectors.dimension
        await asyncio.to_thread(_write_manifest, self.directory, self._manifest)
        return self.manifest

    refresh_manifest = sync_form(arefresh_manifest)
    """Sync form of :meth:`arefresh_manifest`: same arguments, result and errors, no event loop needed."""

    async def aclose(self) -> None:
        """Refresh the manifest counts and close both stores (idempotent)."""
        if self._closed:
            return
        self._closed = True
        try:
            if not self._readonly:
                await self.arefresh_manifest()
        finally:
            await _close_all([self.graph, self.vectors])

    close = sync_form(aclose)
    """Sync form of :meth:`aclose`: same arguments, result and errors, no event loop needed."""

    def __enter__(self) -> LocalStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> LocalStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"LocalStore({str(self.directory)!r})"

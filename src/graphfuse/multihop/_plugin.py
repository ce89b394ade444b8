"""Registry factories for the multi-hop stages (hook ``register_stages``).

``bm25`` and ``entity_seeds`` need the corpus text/titles, which the graph store protocol
cannot list: give them ``corpus`` (files or directories, as for ``graphfuse index``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..indexing import TitleLinker, read_sources
from ..plugins import Components, hookimpl
from ..plugins.hookspecs import Register

__all__ = ["register_stages"]


def _paths(corpus: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[str | os.PathLike[str]]:
    return [corpus] if isinstance(corpus, (str, os.PathLike)) else list(corpus)


def _bm25(
    components: Components,
    *,
    corpus: str | Sequence[str],
    k1: float = 1.2,
    b: float = 0.75,
    **options: Any,
) -> Any:
    from ._bm25 import BM25Index
    from ._bm25_search import BM25Search

    records = read_sources(_paths(corpus))
    index = BM25Index(((r.id, f"{r.title} {r.text}" if r.title else r.text, r.metadata) for r in records), k1=k1, b=b)
    return BM25Search(index, **options)


def _entity_seeds(components: Components, *, corpus: str | Sequence[str], **options: Any) -> Any:
    from ._entity_seeds import EntitySeeds

    linker = TitleLinker()
    for r in read_sources(_paths(corpus)):
        if r.title:
            linker.add(r.title, r.id)
    return EntitySeeds(components.require("graph_store", by="stage 'entity_seeds'"), linker, **options)


def _ppr(components: Components, **options: Any) -> Any:
    from ._ppr import PersonalizedPageRank

    return PersonalizedPageRank(components.require("graph_store", by="stage 'ppr'"), **options)


@hookimpl
def register_stages(register: Register) -> None:
    """bm25 (``corpus``, ``k1``, ``b``, ``limit``), entity_seeds (``corpus``, ``limit``), ppr (its kwargs)."""
    register("bm25", _bm25)
    register("entity_seeds", _entity_seeds)
    register("ppr", _ppr)

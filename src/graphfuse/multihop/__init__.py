"""Multi-hop retrieval: lexical search, entity seeds and Personalized PageRank stages.

==================== ========== ========= ================================================
class                name       signal    what it does
==================== ========== ========= ================================================
BM25Search           bm25       bm25      Okapi BM25 over a :class:`BM25Index`
EntitySeeds          entity     entity    documents whose title the question mentions
PersonalizedPageRank ppr        ppr       random walk with restart from the candidates
==================== ========== ========= ================================================

Importing this package registers the ``multihop`` preset with :mod:`graphfuse.presets`.
"""

from .. import presets as _presets
from ._bm25 import BM25Index, bm25_tokens
from ._bm25_search import BM25Search
from ._entity_seeds import EntitySeeds
from ._ppr import PersonalizedPageRank, personalized_pagerank
from ._preset import MULTIHOP_WEIGHTS, multihop

__all__ = [
    "MULTIHOP_WEIGHTS",
    "BM25Index",
    "BM25Search",
    "EntitySeeds",
    "PersonalizedPageRank",
    "bm25_tokens",
    "multihop",
    "personalized_pagerank",
]

if "multihop" not in _presets.names():
    _presets.register("multihop", multihop)

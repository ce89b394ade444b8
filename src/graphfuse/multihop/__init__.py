"""Multi-hop retrieval: lexical search, entity seeds and Personalized PageRank stages.

==================== ========== ========= ================================================
class                name       signal    what it does
==================== ========== ========= ================================================
BM25Search           bm25       bm25      Okapi BM25 over a :class:`BM25Index`
EntitySeeds          entity     entity    documents whose title the question mentions
BridgeSearch         bridge     bridge    BM25 for the question plus the names the best passages mention
PersonalizedPageRank ppr        ppr       random walk with restart from the candidates
==================== ========== ========= ================================================

:func:`multihop` is also the preset ``"multihop"`` of :mod:`graphfuse.presets` (imported from
there on first use); :func:`corpus_indexes` rebuilds its ``bm25`` and ``linker`` from a store;
:class:`CorpusCache` keeps them in a store directory, refreshed incrementally;
:func:`subject_span` reads what a passage is about (the index of :attr:`BM25Index.subjects`).
The registry names of the stages are ``bm25``, ``entity_seeds``, ``bridge`` and ``ppr`` (built-in plugin).
"""

from ._bm25 import BM25Index, bm25_tokens
from ._bm25_search import BM25Search
from ._bridge import BridgeSearch
from ._corpus import corpus_indexes
from ._corpus_cache import CorpusCache
from ._entity_seeds import EntitySeeds
from ._ppr import PersonalizedPageRank, personalized_pagerank
from ._preset import MULTIHOP_WEIGHTS, adaptive_strength, hybrid, lexical, multihop
from ._subjects import subject_span
from ._text_entity_seeds import TextEntitySeeds, entity_matcher

__all__ = [
    "MULTIHOP_WEIGHTS",
    "BM25Index",
    "BM25Search",
    "BridgeSearch",
    "CorpusCache",
    "EntitySeeds",
    "PersonalizedPageRank",
    "TextEntitySeeds",
    "adaptive_strength",
    "bm25_tokens",
    "corpus_indexes",
    "entity_matcher",
    "hybrid",
    "lexical",
    "multihop",
    "personalized_pagerank",
    "subject_span",
]

"""Multi-hop retrieval: lexical search, entity seeds and Personalized PageRank stages.

:class:`BM25Search`, :class:`EntitySeeds`, :class:`BridgeSearch` and
:class:`PersonalizedPageRank` find the passage a question does not name through the indexer's
graph; :func:`multihop` is the preset ``"multihop"`` of :mod:`graphfuse.presets` over them,
:func:`corpus_inputs` builds its corpus-wide inputs (BM25 index, title linker, timeline,
entities) from a store, and :class:`CorpusCache` keeps them in a store directory. Stages, options and measurements:
``docs/multihop.md``.
"""

from ..defaults import DOCUMENT_WEIGHT, FUSED_WEIGHT, MULTIHOP_WEIGHTS
from ._bm25 import BM25Index, PassageLexicon, bm25_tokens
from ._bm25_search import BM25Search
from ._bridge import BridgeSearch
from ._corpus import CORPUS_INPUTS, acorpus_indexes, acorpus_inputs, corpus_indexes, corpus_inputs
from ._corpus_cache import CorpusCache
from ._document_evidence import DocumentEvidence
from ._entity_seeds import EntitySeeds
from ._ppr import PersonalizedPageRank, personalized_pagerank
from ._preset import adaptive_strength, hybrid, lexical, multihop, split_share
from ._rank_fusion import RankFusion
from ._subjects import linked_names, name_forms, subject_name, subject_span
from ._text_entity_seeds import TextEntitySeeds, aentity_matcher, entity_matcher

__all__ = [
    "CORPUS_INPUTS",
    "DOCUMENT_WEIGHT",
    "FUSED_WEIGHT",
    "MULTIHOP_WEIGHTS",
    "BM25Index",
    "BM25Search",
    "BridgeSearch",
    "CorpusCache",
    "DocumentEvidence",
    "EntitySeeds",
    "PassageLexicon",
    "PersonalizedPageRank",
    "RankFusion",
    "TextEntitySeeds",
    "acorpus_indexes",
    "acorpus_inputs",
    "adaptive_strength",
    "aentity_matcher",
    "bm25_tokens",
    "corpus_indexes",
    "corpus_inputs",
    "entity_matcher",
    "hybrid",
    "lexical",
    "linked_names",
    "multihop",
    "name_forms",
    "personalized_pagerank",
    "split_share",
    "subject_name",
    "subject_span",
]

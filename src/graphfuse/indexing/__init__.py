"""Indexing: turn source files and records into a graph of documents and relations plus vectors.

::

    records = read_sources(["docs/", "more.jsonl"])
    indexer = Indexer(graph_store, vector_store, embedder, extractors=[TitleLinker()])
    report = indexer.index(records)

See ``docs/indexing.md`` for the relation types, re-indexing and resume semantics.
"""

from ._chunking import Chunk, RegexTokenizer, TokenChunker, Tokenizer, WordPieceTokenizer
from ._extractors import EntityExtractor, HeuristicNameExtractor, Mention, TitleLinker
from ._indexer import CO_MENTION, LINKS_TO, MENTIONS, PART_OF, Indexer, IndexReport
from ._llm_extractor import LLMEntityExtractor
from ._records import SourceRecord, read_sources

__all__ = [
    "CO_MENTION",
    "LINKS_TO",
    "MENTIONS",
    "PART_OF",
    "Chunk",
    "EntityExtractor",
    "HeuristicNameExtractor",
    "IndexReport",
    "Indexer",
    "LLMEntityExtractor",
    "Mention",
    "RegexTokenizer",
    "SourceRecord",
    "TitleLinker",
    "TokenChunker",
    "Tokenizer",
    "WordPieceTokenizer",
    "read_sources",
]

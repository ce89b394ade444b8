"""Indexing: turn source files and records into a graph of documents and relations plus vectors.

::

    records = read_sources(["docs/", "more.jsonl"])
    indexer = Indexer(graph_store, vector_store, embedder, extractors=[TitleLinker()])
    report = indexer.index(records)

See ``docs/indexing.md`` for the relation types, re-indexing and resume semantics.
"""

from .._core._encoding import MAX_METADATA_BYTES, MAX_METADATA_VALUES
from ._chunking import Chunk, RegexTokenizer, TokenChunker, Tokenizer, WordPieceTokenizer
from ._conversations import ChatMessage, conversation_records
from ._extractors import EntityExtractor, HeuristicNameExtractor, Mention, TitleLinker
from ._indexer import (
    CO_MENTION,
    CO_OCCURS_WITH,
    ENTITY_PREFIX,
    KIND_KEY,
    LINKS_TO,
    MENTIONED_IN,
    MENTIONS,
    PART_OF,
    Indexer,
    IndexReport,
)
from ._llm_extractor import LLMEntityExtractor
from ._llm_graph import (
    DEFAULT_ENTITY_TYPES,
    DEFAULT_RELATION_TYPES,
    LLM_GRAPH_CACHE,
    PROMPT_VERSION,
    RELATED_TO,
    ExtractedEntity,
    ExtractedRelation,
    ExtractionStats,
    LLMGraphExtractor,
    TextGraph,
)
from ._loaded import records_from_loaded
from ._markdown import links_as_text
from ._reading import MAX_CHAT_FILE_BYTES, MAX_FILE_BYTES
from ._records import EXCLUDED_KEYS, SourceRecord, excluded_keys, read_sources, reserved_key
from ._selection import DEFAULT_TEXT_EXTRACTOR, entity_extractor, entity_extractors
from ._slack import read_slack
from ._text_entities import EntityMatcher, TextEntityExtractor, entity_key, merge_variants, wants_entity_graph
from ._titles import ALIASES_KEY, metadata_aliases
from ._whatsapp import read_whatsapp
from ._writes import embedding_text

__all__ = [
    "ALIASES_KEY",
    "CO_MENTION",
    "CO_OCCURS_WITH",
    "DEFAULT_ENTITY_TYPES",
    "DEFAULT_RELATION_TYPES",
    "DEFAULT_TEXT_EXTRACTOR",
    "ENTITY_PREFIX",
    "EXCLUDED_KEYS",
    "KIND_KEY",
    "LINKS_TO",
    "LLM_GRAPH_CACHE",
    "MAX_CHAT_FILE_BYTES",
    "MAX_FILE_BYTES",
    "MAX_METADATA_BYTES",
    "MAX_METADATA_VALUES",
    "MENTIONED_IN",
    "MENTIONS",
    "PART_OF",
    "PROMPT_VERSION",
    "RELATED_TO",
    "ChatMessage",
    "Chunk",
    "EntityExtractor",
    "EntityMatcher",
    "ExtractedEntity",
    "ExtractedRelation",
    "ExtractionStats",
    "HeuristicNameExtractor",
    "IndexReport",
    "Indexer",
    "LLMEntityExtractor",
    "LLMGraphExtractor",
    "Mention",
    "RegexTokenizer",
    "SourceRecord",
    "TextEntityExtractor",
    "TextGraph",
    "TitleLinker",
    "TokenChunker",
    "Tokenizer",
    "WordPieceTokenizer",
    "conversation_records",
    "embedding_text",
    "entity_extractor",
    "entity_extractors",
    "entity_key",
    "excluded_keys",
    "links_as_text",
    "merge_variants",
    "metadata_aliases",
    "read_slack",
    "read_sources",
    "read_whatsapp",
    "records_from_loaded",
    "reserved_key",
    "wants_entity_graph",
]

"""GraphFuse: graph-aware retrieval stages and signal fusion for RAG.

The public surface of the core package. Stages live in :mod:`graphfuse.stages`, scorers in
:mod:`graphfuse.scoring`, embedded backends in :mod:`graphfuse.stores`, embedders and
rerankers in :mod:`graphfuse.embedders` and :mod:`graphfuse.rerankers`, presets in
:mod:`graphfuse.presets`, the plugin registry in :mod:`graphfuse.plugins`; what host integrations
build on is in :mod:`graphfuse.records` and :mod:`graphfuse.hosts`.
"""

from ._core._capabilities import (
    AdjacencySource,
    ChecksOptions,
    DocumentListing,
    ExplainsScores,
    PageRankRefreshing,
    RanksDocuments,
    VectorLookup,
    VectorSource,
    Versioned,
)
from ._core._deadline import deadline
from ._core._errors import (
    AlreadyExists,
    AuthenticationFailed,
    ConnectionFailed,
    DeadlineExceeded,
    DiskFull,
    EmptyPipeline,
    GraphFuseError,
    InvalidInput,
    NoCandidates,
    NotFound,
    PermissionDenied,
    PluginError,
    RateLimited,
    RequestTimedOut,
    StageFailed,
    StoreCorrupted,
)
from ._core._filters import Condition, FilterLike, MetadataFilter
from ._core._protocols import CacheStore, Embedder, GraphStore, Reranker, RunContext, Scorer, Stage, VectorStore
from ._core._sync import run_sync
from ._core._timestamps import parse_timestamp
from ._core._types import Candidate, Document, Query, RelatedDocument, Relation, Result, VectorHit, VectorRecord
from ._retrieval._passages import Passages, PassageTerms
from ._retrieval._pipeline import Pipeline
from ._retrieval._result_cache import ResultCache

__version__ = "0.1.0"

__all__ = [
    "AdjacencySource",
    "AlreadyExists",
    "AuthenticationFailed",
    "CacheStore",
    "Candidate",
    "ChecksOptions",
    "Condition",
    "ConnectionFailed",
    "DeadlineExceeded",
    "DiskFull",
    "Document",
    "DocumentListing",
    "Embedder",
    "EmptyPipeline",
    "ExplainsScores",
    "FilterLike",
    "GraphFuseError",
    "GraphStore",
    "InvalidInput",
    "MetadataFilter",
    "NoCandidates",
    "NotFound",
    "PageRankRefreshing",
    "PassageTerms",
    "Passages",
    "PermissionDenied",
    "Pipeline",
    "PluginError",
    "Query",
    "RanksDocuments",
    "RateLimited",
    "RelatedDocument",
    "Relation",
    "RequestTimedOut",
    "Reranker",
    "Result",
    "ResultCache",
    "RunContext",
    "Scorer",
    "Stage",
    "StageFailed",
    "StoreCorrupted",
    "VectorHit",
    "VectorLookup",
    "VectorRecord",
    "VectorSource",
    "VectorStore",
    "Versioned",
    "__version__",
    "deadline",
    "parse_timestamp",
    "run_sync",
]

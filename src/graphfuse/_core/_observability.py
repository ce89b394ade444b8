"""Logging, metrics and tracing for pipeline runs (OpenTelemetry API: no-op without an SDK)."""

from __future__ import annotations

import logging

from opentelemetry import metrics, trace

__all__ = [
    "PIPELINE_DURATION",
    "PIPELINE_RESULTS",
    "RESULT_CACHE_ERRORS",
    "RESULT_CACHE_HITS",
    "RESULT_CACHE_MISSES",
    "STAGE_CANDIDATES",
    "STAGE_DURATION",
    "logger",
    "tracer",
]

logger = logging.getLogger("graphfuse")
tracer = trace.get_tracer("graphfuse")
_meter = metrics.get_meter("graphfuse")

STAGE_DURATION = _meter.create_histogram(
    "graphfuse_stage_duration_seconds", unit="s", description="Duration of one stage run"
)
STAGE_CANDIDATES = _meter.create_histogram("graphfuse_stage_candidates", description="Candidates a stage returned")
PIPELINE_DURATION = _meter.create_histogram(
    "graphfuse_pipeline_duration_seconds", unit="s", description="Duration of one pipeline run"
)
PIPELINE_RESULTS = _meter.create_histogram("graphfuse_pipeline_results", description="Results a pipeline run returned")
RESULT_CACHE_HITS = _meter.create_counter(
    "graphfuse_result_cache_hits", description="Retrievals answered from the result cache"
)
RESULT_CACHE_MISSES = _meter.create_counter(
    "graphfuse_result_cache_misses",
    description="Retrievals the result cache could not answer (reason: absent, unreadable, unavailable, uncacheable)",
)
RESULT_CACHE_ERRORS = _meter.create_counter(
    "graphfuse_result_cache_errors",
    description="Result cache store calls that failed (operation: get, set, generation)",
)

"""``GET /metrics``: the pipeline metrics of GraphFuse and the server's own, in Prometheus text.

The pipeline records ``graphfuse_stage_duration_seconds``, ``graphfuse_stage_candidates``,
``graphfuse_pipeline_duration_seconds`` and ``graphfuse_pipeline_results`` through the
OpenTelemetry API; :func:`install_prometheus_exporter` (called by ``graphfuse serve``) gives
the process a meter provider that exports them to ``prometheus_client``'s default registry.
It is not called by :func:`~graphfuse.server.create_app`, because the global meter provider
can be set once per process and an application embedding the server may have its own.
The server's HTTP metrics live in a registry of their own, one per app.
"""

from __future__ import annotations

import logging

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest

__all__ = ["METHODS", "HttpMetrics", "install_prometheus_exporter", "render"]

logger = logging.getLogger("graphfuse.server")

_SECONDS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_COUNTS = (0.0, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0)
_installed = False


def install_prometheus_exporter() -> bool:
    """Export GraphFuse's OpenTelemetry metrics to Prometheus (once per process).

    Returns ``False`` (and changes nothing) when the process already has a meter provider.
    """
    global _installed
    if _installed:
        return True
    from opentelemetry import metrics
    from opentelemetry.exporter.prometheus import PrometheusMetricReader
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.view import ExplicitBucketHistogramAggregation, View

    if type(metrics.get_meter_provider()).__name__ != "_ProxyMeterProvider":
        logger.info("a meter provider is already set: /metrics shows what it exports to prometheus_client")
        return False
    views = [
        View(instrument_name=f"graphfuse_{name}_seconds", aggregation=ExplicitBucketHistogramAggregation(_SECONDS))
        for name in ("stage_duration", "pipeline_duration")
    ] + [
        View(instrument_name=f"graphfuse_{name}", aggregation=ExplicitBucketHistogramAggregation(_COUNTS))
        for name in ("stage_candidates", "pipeline_results")
    ]
    metrics.set_meter_provider(MeterProvider(metric_readers=[PrometheusMetricReader()], views=views))
    _installed = True
    return True


METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
"""HTTP methods counted by name; any other is counted as ``other``."""


class HttpMetrics:
    """Requests by route and status, their duration, and tokens saved per pipeline.

    Every label has a bounded set of values, whatever clients send: ``method`` is one of
    :data:`METHODS` or ``other``, ``route`` one of ``routes`` (the app's route templates,
    e.g. ``/v1/documents/{doc_id:path}``) or ``unmatched``, ``status`` a status code the
    server answered (a three-digit number).
    """

    def __init__(self, routes: frozenset[str] = frozenset()) -> None:
        self.routes = routes
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "graphfuse_http_requests",
            "HTTP requests answered",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.duration = Histogram(
            "graphfuse_http_request_duration_seconds",
            "Time to answer an HTTP request",
            ["method", "route"],
            buckets=_SECONDS,
            registry=self.registry,
        )

    def observe(self, method: str, route: str | None, status: int, seconds: float) -> None:
        method = method.upper() if method.upper() in METHODS else "other"
        route = route if route is not None and route in self.routes else "unmatched"
        code = str(status) if 100 <= status <= 599 else "other"
        self.requests.labels(method, route, code).inc()
        self.duration.labels(method, route).observe(seconds)


def render(metrics: HttpMetrics) -> bytes:
    """The server's metrics followed by the process-wide registry's (pipeline metrics, process)."""
    return generate_latest(metrics.registry) + generate_latest(REGISTRY)

"""``graphfuse serve``: an HTTP API over one store, with API keys, tenants and a dashboard.

Install with ``pip install 'graphfuse[server]'``.

- :func:`create_app`: the FastAPI application over a :class:`Service`.
- :class:`Service`: one store's components and the work behind each endpoint.
- :class:`WorkLoop`: the event loop (in a thread of its own) all of a service's store work runs on.
- :class:`Limits`: request limits (body size and time, query length, ``top_k``, budget, documents).
- :func:`http_server`, :class:`ConnectionLimits`: the uvicorn server ``graphfuse serve`` runs, with a
  request-header deadline, a cap on open connections and throttled log lines (:class:`LogThrottle`).
- :class:`KeyFile`: API keys stored hashed, each bound to a tenant.
- :class:`Scope`: the tenant a request acts for, pushed into every store call.
- :func:`install_prometheus_exporter`: export the pipeline metrics on ``/metrics``.
- :data:`REQUEST_STAGES`, :data:`REQUEST_SCORERS`: what a request's ``stages`` and ``scorer`` may name.
"""

from ._app import create_app
from ._connections import ConnectionLimits, LogThrottle, http_server
from ._keys import KeyFile, KeyRecord, check_tenant
from ._metrics import install_prometheus_exporter
from ._options import SCORERS as REQUEST_SCORERS
from ._options import STAGES as REQUEST_STAGES
from ._problems import Problem
from ._scope import TENANT_KEY, Scope
from ._service import Limits, Service
from ._work import WorkLoop

__all__ = [
    "REQUEST_SCORERS",
    "REQUEST_STAGES",
    "TENANT_KEY",
    "ConnectionLimits",
    "KeyFile",
    "KeyRecord",
    "Limits",
    "LogThrottle",
    "Problem",
    "Scope",
    "Service",
    "WorkLoop",
    "check_tenant",
    "create_app",
    "http_server",
    "install_prometheus_exporter",
]

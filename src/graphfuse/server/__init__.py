"""``graphfuse serve``: an HTTP API over one store, with API keys, tenants and a dashboard.

Install with ``pip install 'graphfuse[server]'``. :func:`create_app` is the FastAPI application
over a :class:`Service` (one store's components and the work behind each endpoint, run on a
:class:`WorkLoop`); :class:`Limits` bound requests; :func:`http_server` and
:class:`ConnectionLimits` make the uvicorn server with header deadlines, a connection cap and
throttled logs (:class:`LogThrottle`); :class:`KeyFile` and :class:`Scope` hold API keys and
tenants; :func:`install_prometheus_exporter` exports metrics; :data:`REQUEST_STAGES` and
:data:`REQUEST_SCORERS` are what a request may name. See ``docs/server.md``.
"""

from .._keys import KeyFile, KeyRecord, check_tenant
from ._app import create_app
from ._connections import ConnectionLimits, LogThrottle, http_server
from ._limits import Limits
from ._metrics import install_prometheus_exporter
from ._options import SCORERS as REQUEST_SCORERS
from ._options import STAGES as REQUEST_STAGES
from ._problems import Problem
from ._scope import TENANT_KEY, Scope
from ._service import Service
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

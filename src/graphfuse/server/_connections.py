"""What one connection may hold: a deadline for its request headers, a cap on open connections, a quiet log.

uvicorn times out only the idle time between requests, and each byte resets that timer, so a
trickling client holds its connection for ever. :func:`http_server` makes the uvicorn server
``graphfuse serve`` runs with what nginx and Go do: request headers must be whole within
``header_timeout`` of the connection's opening (else 408 and close); an answer sent before the
body was read closes the connection; at most ``max_connections`` are open (one more gets a 503),
with a small listen backlog so descriptors never run out; repeated log lines are written once
per ``log_interval`` with a count. See ``docs/server.md``, "Connections and slow clients".
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from .._core._errors import InvalidInput
from ._problems import PROBLEM_JSON, Problem

__all__ = ["ConnectionLimits", "LogThrottle", "http_server"]

logger = logging.getLogger("graphfuse.server.connections")

_MAX_CONNECTIONS = 1000  # nginx's worker_connections and gunicorn's worker_connections are of this order
_LINGER_S = 2.0  # how long a refused connection may stay to read the refusal before it is closed
_THROTTLED_LOGGERS = ("asyncio", "uvicorn.error", logger.name)


def _open_file_limit() -> int | None:
    """The process's soft limit on open files, or None when unlimited or unknown."""
    try:
        import resource
    except ImportError:  # not on POSIX
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else int(soft)


@dataclass(frozen=True)
class ConnectionLimits:
    """What one client connection may hold on a server made by :func:`http_server`.

    ``header_timeout``: seconds from a connection's opening (or the end of the previous response)
    within which a request's headers must be whole, however slowly they arrive (408, then closed).
    ``max_connections``: connections open at once; one more is answered with a 503 and closed.
    ``None`` is a quarter of the process's open-file limit (``ulimit -n``), at most 1,000.
    ``backlog``: connections waiting to be accepted (the listen backlog; the event loop also
    accepts up to this many in one go). ``None`` is a quarter of the connection limit, 8 to 128.
    ``keep_alive``: seconds an idle connection is kept between two requests.
    ``max_header_bytes``: the largest request line and headers (a 400 above).
    ``log_interval``: a repeated log line is written at most once per this many seconds.
    """

    header_timeout: float = 10.0
    max_connections: int | None = None
    backlog: int | None = None
    keep_alive: int = 5
    max_header_bytes: int = 16 * 1024
    log_interval: float = 10.0

    def __post_init__(self) -> None:
        if not 0 < self.header_timeout <= 3600:
            raise InvalidInput(f"header_timeout must be in (0, 3600] seconds, got {self.header_timeout}")
        if self.max_connections is not None and self.max_connections < 1:
            raise InvalidInput(f"max_connections must be at least 1, got {self.max_connections}")
        if self.backlog is not None and self.backlog < 1:
            raise InvalidInput(f"backlog must be at least 1, got {self.backlog}")
        if not 0 < self.keep_alive <= 3600:
            raise InvalidInput(f"keep_alive must be in (0, 3600] seconds, got {self.keep_alive}")
        if self.max_header_bytes < 1024:
            raise InvalidInput(f"max_header_bytes must be at least 1024, got {self.max_header_bytes}")
        if self.log_interval < 0:
            raise InvalidInput(f"log_interval must not be negative, got {self.log_interval}")

    def connection_limit(self) -> int:
        """``max_connections``, or its default for this process's open-file limit."""
        if self.max_connections is not None:
            return self.max_connections
        files = _open_file_limit()
        return _MAX_CONNECTIONS if files is None else max(1, min(_MAX_CONNECTIONS, files // 4))

    def accept_backlog(self) -> int:
        """``backlog``, or its default for the connection limit."""
        if self.backlog is not None:
            return self.backlog
        return max(8, min(128, self.connection_limit() // 4))

    def descriptors_needed(self) -> int:
        """File descriptors the connections may take at most: the open ones, the refusals being
        read, and accepts not yet looked at or closed (up to three of the event loop's bursts)."""
        limit = self.connection_limit()
        return limit + _lingering_limit(limit) + 3 * self.accept_backlog()


def _lingering_limit(max_connections: int) -> int:
    return max(1, min(64, max_connections // 4))


class LogThrottle(logging.Filter):
    """Let a log line through at most once per ``interval`` seconds; count the ones held back.

    Lines are the same when their logger and first line of text are; the next one let through
    says how many were held back. Lines that differ (an error id, a path) all pass.
    """

    def __init__(self, interval: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.interval = interval
        self._clock = clock
        self._lock = threading.Lock()
        self._seen: dict[str, tuple[float, int]] = {}  # line -> (when it was last let through, held back since)

    def filter(self, record: logging.LogRecord) -> bool:
        key = f"{record.name}\0{record.getMessage().partition(chr(10))[0][:200]}"
        now = self._clock()
        with self._lock:
            last = self._seen.pop(key, None)
            if last is not None and now - last[0] < self.interval:
                self._seen[key] = (last[0], last[1] + 1)
                return False
            self._seen[key] = (now, 0)
            while len(self._seen) > 1024:  # the oldest first (dicts keep insertion order)
                del self._seen[next(iter(self._seen))]
        if last is not None and last[1]:
            record.msg = f"{record.msg} ({last[1]} more like this in the last {now - last[0]:.0f} s)"
        return True


def _throttle_logs(interval: float) -> None:
    """Throttle the loggers that write one line per bad connection (once per process)."""
    for name in _THROTTLED_LOGGERS:
        target = logging.getLogger(name)
        if not any(isinstance(f, LogThrottle) for f in target.filters):
            target.addFilter(LogThrottle(interval))


def _raw_response(status: int, reason: str, detail: str, headers: tuple[tuple[str, str], ...] = ()) -> bytes:
    """A whole HTTP/1.1 answer with a problem body that closes the connection."""
    body = json.dumps(Problem(status, detail).body()).encode()
    lines = [
        f"HTTP/1.1 {status} {reason}",
        f"content-type: {PROBLEM_JSON}",
        f"content-length: {len(body)}",
        "connection: close",
        *(f"{name}: {value}" for name, value in headers),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


class _Guard:
    """The connections of one server: who is open, and what is said about the others."""

    def __init__(self, limits: ConnectionLimits) -> None:
        self.limits = limits
        self.max_connections = limits.connection_limit()
        self.max_lingering = _lingering_limit(self.max_connections)
        self.open: set[H11Protocol] = set()
        self.lingering = 0
        self.refusal = _raw_response(
            503,
            "Service Unavailable",
            f"the server has its limit of {self.max_connections} connections open; try again shortly",
            (("retry-after", "1"),),
        )
        self.too_slow = _raw_response(
            408, "Request Timeout", f"the request headers did not arrive within {limits.header_timeout:g} s"
        )

    def admit(self, protocol: H11Protocol) -> bool:
        if len(self.open) >= self.max_connections:
            logger.warning(
                "refusing connections with 503: %d are open, the limit (--max-connections)", self.max_connections
            )
            return False
        self.open.add(protocol)
        return True


class _GuardedH11(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a request-header deadline and a connection cap (see the module)."""

    guard: ClassVar[_Guard]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._refused = False
        self._lingering = False

    # -- the connection cap ----------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if not self.guard.admit(self):
            self._refused = True
            self.transport = transport
            self._refuse(transport)
            return
        super().connection_made(transport)
        self._watch()

    def _refuse(self, transport: asyncio.Transport) -> None:
        """Answer 503 and close; while few are doing so, let the client read the answer first.

        Closing a socket whose client's request is still unread resets it, and the client may
        then lose the answer: so the refusal half-closes, drops what the client sends and
        closes on the client's end (or after ``_LINGER_S``).
        """
        transport.write(self.guard.refusal)
        if self.guard.lingering < self.guard.max_lingering and transport.can_write_eof():
            self.guard.lingering += 1
            self._lingering = True
            transport.write_eof()
            self._deadline = self.loop.call_later(_LINGER_S, transport.close)
        else:
            transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        if self._refused:
            if self._lingering:
                self._lingering = False
                self.guard.lingering -= 1
            return
        self.guard.open.discard(self)
        super().connection_lost(exc)

    def eof_received(self) -> None:
        if self._refused:
            self.transport.close()
            return
        super().eof_received()

    # -- the header deadline ---------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return  # the refusal is written; what the client sends is not read
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.conn.their_state is h11.SEND_BODY and not self.transport.is_closing():
            # Answered before the body was whole (a 413, a 421, a 408): do not wait for the rest.
            self.transport.close()
            return
        self._watch()

    def _watch(self) -> None:
        """Arm the header deadline while a request's headers are awaited; disarm it once they are whole."""
        waiting = self.conn.their_state is h11.IDLE and not self.transport.is_closing()
        if waiting and self._deadline is None:
            self._deadline = self.loop.call_later(self.guard.limits.header_timeout, self._headers_late)
        elif not waiting and self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _headers_late(self) -> None:
        self._deadline = None
        if self.conn.their_state is not h11.IDLE or self.transport.is_closing():
            return
        if self.conn.trailing_data[0]:  # part of a request came: say why it ends
            self.transport.write(self.guard.too_slow)
            logger.warning(
                "closed connections whose request headers did not arrive within %g s (--header-timeout)",
                self.guard.limits.header_timeout,
            )
        self.transport.close()


def http_server(app: Any, *, limits: ConnectionLimits | None = None, **options: Any) -> uvicorn.Server:
    """A uvicorn server for ``app`` (HTTP/1.1, no WebSocket) that holds every connection to ``limits``.

    ``options`` go to :class:`uvicorn.Config` (``host``, ``port``, ``log_level``, ...). The
    header deadline and the connection cap are enforced for each connection; repeated log lines
    of the loggers that write one per connection (``asyncio``, ``uvicorn.error``,
    ``graphfuse.server.connections``) are throttled (:class:`LogThrottle`).
    """
    limits = limits or ConnectionLimits()
    guard = _Guard(limits)
    protocol = type("GuardedH11Protocol", (_GuardedH11,), {"guard": guard})
    config = uvicorn.Config(
        app,
        http=protocol,
        ws="none",
        timeout_keep_alive=limits.keep_alive,
        backlog=limits.accept_backlog(),
        h11_max_incomplete_event_size=limits.max_header_bytes,
        **options,
    )
    _throttle_logs(limits.log_interval)  # after Config: it configures uvicorn's loggers
    return uvicorn.Server(config)

"""Requests answered before routing: bodies too large or too slow, and foreign host names.

:class:`BodyLimit` reads a request's body up to its route's limit and within a deadline, and
:class:`LoopbackHosts` refuses, on a server without keys, a ``Host`` that is no loopback name
(DNS rebinding). Both answer with a problem document and close the connection.
"""

from __future__ import annotations

import asyncio
import ipaddress

from starlette.types import ASGIApp, Message, Receive, Send
from starlette.types import Scope as AsgiScope

from ._problems import Problem, problem_response

__all__ = ["BodyLimit", "LoopbackHosts", "loopback_host"]


class BodyLimit:
    """Answer 413 to a body larger than the route's limit (declared or streamed), 408 to a slow one.

    ``/v1/ingest`` may send ``ingest_limit`` bytes (documents), every other route ``limit``
    (a query and its options). The whole body must arrive within ``timeout`` seconds of the
    headers, however slowly it trickles in (a deadline for the body, not a timer each byte
    resets). Both answers close the connection: the rest of the body is not read.
    """

    def __init__(self, app: ASGIApp, limit: int, ingest_limit: int, timeout: float) -> None:
        self.app = app
        self.limit = limit
        self.ingest_limit = ingest_limit
        self.timeout = timeout

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.ingest_limit if scope.get("path") == "/v1/ingest" else self.limit
        too_large = Problem(413, f"the request body is larger than {limit} bytes", field="body", headers=_CLOSE)
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > limit:
                    await problem_response(too_large)(scope, receive, send)
                    return
        # Read the body here, up to the limit, then hand it on: a body cut off part-way
        # must be a 413, not a parse error further in.
        deadline = asyncio.get_running_loop().time() + self.timeout
        chunks: list[bytes] = []
        seen = 0
        more = True
        while more:
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - asyncio.get_running_loop().time()))
            except asyncio.TimeoutError:
                slow = Problem(
                    408, f"the request body did not arrive within {self.timeout:g} s", field="body", headers=_CLOSE
                )
                await problem_response(slow)(scope, receive, send)
                return
            if message["type"] == "http.disconnect":
                return  # the client left: nobody to answer
            if message["type"] != "http.request":
                await self.app(scope, _replay([], message), send)
                return
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > limit:
                await problem_response(too_large)(scope, receive, send)
                return
            chunks.append(chunk)
            more = bool(message.get("more_body", False))
        await self.app(scope, _replay(chunks, None, receive), send)


_CLOSE = {"Connection": "close"}


def loopback_host(host: str) -> bool:
    """Whether a ``Host`` header names this machine's loopback: ``localhost``, 127.0.0.0/8, ``[::1]``, any port."""
    host = host.strip().lower()
    if host.startswith("["):
        name, bracket, rest = host[1:].partition("]")
        if not bracket or (rest and not (rest.startswith(":") and rest[1:].isdigit())):
            return False
    else:
        name, colon, port = host.partition(":")
        if colon and not port.isdigit():
            return False
    if name.rstrip(".") == "localhost":
        return True
    try:
        # A literal address cannot be rebound: any loopback one (127.0.0.0/8, ::1) is this machine.
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class LoopbackHosts:
    """Without keys, answer only requests addressed to a loopback name (DNS rebinding).

    A web page can make its own host name resolve to 127.0.0.1 and so reach a local server
    from the user's browser; the browser still sends the page's name as ``Host``. A server
    without keys serves the whole store, so it refuses any other ``Host`` with a 421.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        hosts = [value.decode("latin-1") for name, value in scope.get("headers", []) if name == b"host"]
        if len(hosts) == 1 and loopback_host(hosts[0]):
            await self.app(scope, receive, send)
            return
        problem = Problem(
            421,
            "this server has no API keys and answers only requests addressed to localhost or a loopback address "
            "(127.0.0.1, [::1]); "
            "start it with --keys to serve other host names",
            field="host",
        )
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        await problem_response(problem)(scope, receive, send)


def _replay(chunks: list[bytes], final: Message | None, receive: Receive | None = None) -> Receive:
    """A ``receive`` that gives the buffered body once, then what the client sends next."""
    pending: list[Message] = (
        [{"type": "http.request", "body": b"".join(chunks), "more_body": False}] if chunks or final is None else []
    )
    if final is not None:
        pending.append(final)

    async def replay() -> Message:
        if pending:
            return pending.pop(0)
        if receive is not None:
            return await receive()
        return {"type": "http.disconnect"}

    return replay

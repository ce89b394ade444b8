"""GraphFuse as a LlamaIndex vector store: ``VectorStoreIndex`` retrieves through a GraphFuse preset.

::

    store = GraphFuseVectorStore(path="handbook.graphfuse")
    index = VectorStoreIndex.from_documents(
        documents, storage_context=StorageContext.from_defaults(vector_store=store), embed_model=embed_model
    )
    nodes = index.as_retriever(similarity_top_k=5).retrieve("How often is a request retried?")

Queries run the ``multihop`` preset over a GraphFuse store; :meth:`GraphFuseVectorStore.from_path`
opens a store ``graphfuse index`` built. Guide: ``docs/integrations/llama-index.md``.
"""

from ._store import HOST_EMBEDDER, GraphFuseVectorStore

__all__ = ["HOST_EMBEDDER", "GraphFuseVectorStore"]

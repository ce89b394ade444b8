"""GraphFuse as LlamaIndex's vector store: LlamaIndex's own idiom, GraphFuse's multihop retrieval.

A small handbook (markdown pages that link to and name each other) is read by LlamaIndex's
``SimpleDirectoryReader`` and indexed by a ``VectorStoreIndex`` whose vector store is a GraphFuse
store directory. The retriever and the query engine are LlamaIndex's; the ranking is GraphFuse's
``multihop`` preset (graph walk, BM25, vectors). The store is then reopened from its path, as
``graphfuse query --store`` would open it. Offline: the embed_model is GraphFuse's hashing
embedder (the registered ``hashing``), ``MockLLM`` stands in for the LLM.

Run: ``python examples/llama_index_vector_store.py``
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from llama_index.core import SimpleDirectoryReader, StorageContext, VectorStoreIndex
from llama_index.core.llms import MockLLM
from llama_index.retrievers.graphfuse import SIGNALS_KEY, GraphFuseEmbedding
from llama_index.vector_stores.graphfuse import GraphFuseVectorStore

from graphfuse.embedders import HashingEmbedder

PAGES = {
    "deploy.md": "# Deploying\n\nRun the service behind the [Edge Proxy](proxy.md). Deployments start in Oslo.\n",
    "proxy.md": "# Edge Proxy\n\nThe Edge Proxy retries a request twice. Its timeouts live in the Routing Table.\n",
    "routing.md": "# Routing Table\n\nThe Routing Table maps hostnames to services. Maria Lund owns it.\n",
    "billing.md": "# Billing\n\nInvoices go out on the first working day of the month.\n",
}
QUESTION = "Who owns the table that holds the Edge Proxy's timeouts?"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "handbook"
        folder.mkdir()
        for name, text in PAGES.items():
            (folder / name).write_text(text, encoding="utf-8")
        embed_model = GraphFuseEmbedding(HashingEmbedder())
        store = GraphFuseVectorStore(Path(tmp) / "store", embedder="hashing")
        index = VectorStoreIndex.from_documents(
            SimpleDirectoryReader(str(folder), filename_as_id=True).load_data(),
            storage_context=StorageContext.from_defaults(vector_store=store),
            embed_model=embed_model,
        )
        for n in index.as_retriever(similarity_top_k=3).retrieve(QUESTION):
            signals = " ".join(f"{k}={v:.2f}" for k, v in sorted(n.node.metadata[SIGNALS_KEY].items()))
            print(f"{n.node.metadata['file_name']:11} score={n.score:.3f} {signals}")
        response = index.as_query_engine(llm=MockLLM(), similarity_top_k=3).query(QUESTION)
        print(f"sources: {len(response.source_nodes)}")
        store.close()

        reopened = GraphFuseVectorStore.from_path(Path(tmp) / "store")
        again = VectorStoreIndex.from_vector_store(reopened, embed_model=embed_model)
        print("reopened:", again.as_retriever(similarity_top_k=1).retrieve(QUESTION)[0].node.metadata["file_name"])
        reopened.close()


if __name__ == "__main__":
    main()

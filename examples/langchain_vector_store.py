"""A documentation folder in LangChain through GraphFuseVectorStore, offline.

The folder (default: this repository's own ``docs/``) is loaded with LangChain's
``DirectoryLoader``/``TextLoader``, indexed into a GraphFuse store directory with
``GraphFuseVectorStore.from_documents`` (the offline MiniLM model through
``GraphFuseEmbeddings``, or hashing embeddings with ``GRAPHFUSE_EXAMPLE_EMBEDDER=hashing``),
and searched with LangChain's own retriever, which runs the ``multihop`` preset. The store is
then reopened with ``from_path``, as ``graphfuse query --store`` would open it.

Run: python examples/langchain_vector_store.py [FOLDER] [--store DIR]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import warnings
from pathlib import Path

from langchain_graphfuse import GraphFuseEmbeddings, GraphFuseVectorStore

from graphfuse.embedders import HashingEmbedder, LocalEmbedder
from graphfuse.stores import default_embedder

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = [
    "How do I serve a store over HTTP with API keys?",
    "Which metadata keys does LlamaIndex keep out of the prompt?",
    "How does the multihop preset use personalized PageRank?",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", nargs="?", default=str(ROOT / "docs"))
    parser.add_argument("--store", default=None, help="store directory (default: a temporary one)")
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # langchain-community announces its sunset
        from langchain_community.document_loaders import DirectoryLoader, TextLoader

    docs = DirectoryLoader(args.folder, glob="**/*.md", loader_cls=TextLoader).load()
    name = os.environ.get("GRAPHFUSE_EXAMPLE_EMBEDDER") or default_embedder()[0]
    embeddings = GraphFuseEmbeddings(LocalEmbedder() if name == "local" else HashingEmbedder())
    print(f"embedder: {type(embeddings.embedder).__name__}")
    store_dir = args.store or os.path.join(tempfile.mkdtemp(), "store")
    started = time.perf_counter()
    with GraphFuseVectorStore.from_documents(docs, embeddings, path=store_dir) as store:
        print(f"indexed {len(docs)} documents in {time.perf_counter() - started:.1f}s -> {store_dir}")
        retriever = store.as_retriever(search_kwargs={"k": 3})
        first = {}
        for question in QUESTIONS:
            found = retriever.invoke(question)
            first[question] = [d.id for d in found]
            print(f"\n{question}")
            for doc in found:
                where = os.path.relpath(doc.id, args.folder)
                print(f"  {where}  [{doc.metadata.get('title', '')}]  {doc.page_content[:70]!r}")
    # Reopened as the CLI opens it: its own recorded embedder and default preset.
    with GraphFuseVectorStore.from_path(store_dir) as again:
        same = all([d.id for d in again.similarity_search(q, k=3)] == first[q] for q in QUESTIONS)
        print(f"\nreopened with from_path ({again.preset}): same results: {same}")


if __name__ == "__main__":
    main()

"""Quickstart: index a few documents, build a pipeline, retrieve, print.

Runs offline in about a second (HashingEmbedder needs no model). Swap in
``graphfuse.embedders.LocalEmbedder()`` (``pip install 'graphfuse[local]'``) for real semantics.
"""

from __future__ import annotations

from graphfuse import presets
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import Indexer, SourceRecord, TitleLinker
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

DOCUMENTS = [
    SourceRecord(
        "ada", "Ada Lovelace wrote the first published algorithm for the Analytical Engine.", title="Ada Lovelace"
    ),
    SourceRecord(
        "engine",
        "The Analytical Engine was a mechanical computer designed by Charles Babbage.",
        title="Analytical Engine",
    ),
    SourceRecord("babbage", "Charles Babbage was an English mathematician and inventor.", title="Charles Babbage"),
    SourceRecord("turing", "Alan Turing formalised computation with the Turing machine.", title="Alan Turing"),
]


def main() -> None:
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(dimension=256)
    # TitleLinker links a document to every other document whose title it mentions.
    report = Indexer(graph, vectors, embedder, extractors=[TitleLinker()]).index(DOCUMENTS)
    print(f"indexed {report.documents} documents, {report.relations} relations")

    pipeline = presets.no_rerank(graph, vectors, embedder)
    question = "Who designed the machine Ada Lovelace wrote an algorithm for?"
    print(question)
    for result in pipeline.retrieve(question, top_k=3):
        shares = ", ".join(f"{name} {share:.2f}" for name, share in result.contributions.items())
        print(f"  {result.id:8} {result.score:.3f}  ({shares})")


if __name__ == "__main__":
    main()

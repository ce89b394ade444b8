"""GraphFuse context packing in a LlamaIndex query engine, offline.

A GraphFuse pipeline retrieves from a small linked corpus (in-memory graph, local vector store,
``HashingEmbedder``); ``ContextPostprocessor`` packs what it found into a token budget in each
of the three formats (passages, evidence, graph), and the graph context feeds a
``RetrieverQueryEngine`` whose ``response.source_nodes`` keep every cited source. A tiny
offline LLM stands in for the model: it answers with the context line naming a mother.

Run: ``python examples/llama_index_context.py``
"""

from __future__ import annotations

import asyncio
from typing import Any

from llama_index.core.base.llms.types import CompletionResponse, CompletionResponseGen, LLMMetadata
from llama_index.core.llms import CustomLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.postprocessor.graphfuse import CONTEXT_KEY, ContextPostprocessor, ContextSourceNode
from llama_index.retrievers.graphfuse import GraphFuseRetriever

from graphfuse import Document, Relation, VectorRecord, presets
from graphfuse.embedders import HashingEmbedder
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

BUDGET = 160
QUESTION = "Who was the mother of Anna Berg, the director of The Quiet Harbour?"
DOCUMENTS = [
    Document(
        "film",
        "The Quiet Harbour is a 1961 drama film directed by Anna Berg. It premiered at a small festival "
        "and was restored in 2004 by the national film archive.",
        {"title": "The Quiet Harbour", "type": "film"},
    ),
    Document(
        "berg",
        "Anna Berg was a Norwegian film director. She was born in Oslo in 1920. Her mother was the painter "
        "Liv Dahl. Berg studied in Paris before returning to Norway.",
        {"title": "Anna Berg", "type": "person"},
    ),
    Document(
        "dahl",
        "Liv Dahl was a Norwegian painter known for coastal landscapes.",
        {"title": "Liv Dahl", "type": "person"},
    ),
    Document(
        "garden",
        "Tomatoes grow best in a sunny garden bed with rich soil and regular watering.",
        {"title": "Gardening"},
    ),
]
RELATIONS = [Relation("film", "berg", "DIRECTED_BY"), Relation("berg", "dahl", "CHILD_OF")]


class LineLLM(CustomLLM):
    """An offline stand-in for a model: answers with the first prompt line that names a mother."""

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=4096, num_output=64, model_name="line-llm")

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        line = next((x.strip() for x in prompt.splitlines() if "mother" in x.lower() and "[" in x), "I don't know.")
        return CompletionResponse(text=line)

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        raise NotImplementedError


async def build() -> tuple[GraphFuseRetriever, InMemoryGraphStore]:
    embedder = HashingEmbedder(256)
    graph, vectors = InMemoryGraphStore(), LocalVectorStore()
    await graph.store_documents(DOCUMENTS)
    await graph.create_relations(RELATIONS)
    embedded = await embedder.embed_documents([d.content or "" for d in DOCUMENTS])
    await vectors.upsert([VectorRecord(d.id, v, dict(d.metadata)) for d, v in zip(DOCUMENTS, embedded, strict=True)])
    return GraphFuseRetriever(presets.no_rerank(graph, vectors, embedder), similarity_top_k=4), graph


def main() -> None:
    retriever, graph = asyncio.run(build())
    nodes = retriever.retrieve(QUESTION)
    for fmt in ("passages", "evidence", "graph"):
        post = ContextPostprocessor(budget=BUDGET, format=fmt, output="context", graph_store=graph)
        ctx = post.context(nodes, QUESTION)
        print(
            f"{fmt:<9} tokens={ctx.tokens}/{BUDGET} counter={ctx.counter} "
            f"sources={','.join(s.id for s in ctx.sources)} dropped={','.join(d.id for d in ctx.dropped) or '-'}"
        )

    engine = RetrieverQueryEngine.from_args(
        retriever,
        llm=LineLLM(),
        node_postprocessors=[ContextPostprocessor(budget=BUDGET, format="graph", output="context", graph_store=graph)],
    )
    response = engine.query(QUESTION)
    context_node = response.source_nodes[0].node
    print("--- the context the LLM read")
    print(context_node.get_content())
    print("--- answer:", response)
    for s in context_node.metadata[CONTEXT_KEY]["sources"]:
        print(f"cited [{s['id']}] {s['title']} score={s['score']:.3f}")
    held = [n.node.node_id for n in response.source_nodes if isinstance(n.node, ContextSourceNode)]
    print("source nodes:", " ".join(held))


if __name__ == "__main__":
    main()

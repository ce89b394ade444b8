"""A LangChain RAG chain whose context is packed by GraphFuse within a token budget, offline.

``format_docs`` (every retrieved document, whole) is replaced by
``GraphFuseContextFormatter(budget=80, format="evidence")``: the sentences that carry the
question's facts, under numbered source markers, never over 80 tokens. ``.with_sources()``
keeps the sources so the answer can cite them; the ``graph`` format serializes the retrieved
subgraph. GraphFuse retrieves on its in-memory stores with hashing embeddings; a fake chat
model stands in for the LLM only.

Run: python examples/langchain_context.py
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from langchain_core.documents import Document as LCDocument
from langchain_core.language_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnableParallel, RunnablePassthrough
from langchain_graphfuse import GraphFuseContextFormatter, GraphFuseRetriever

from graphfuse import Document, Pipeline, Relation, VectorRecord
from graphfuse.context import Context, get_token_counter
from graphfuse.embedders import HashingEmbedder
from graphfuse.scoring import WeightedScorer
from graphfuse.stages import GraphExpansion, Hydrate, SemanticSearch
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

# id, title, type, text
ARTICLES = [
    (
        "harbour",
        "The Quiet Harbour",
        "film",
        "The Quiet Harbour is a 1961 drama film directed by Anna Berg. It premiered at a small festival in "
        "Bergen and was restored in 2004. The film follows a lighthouse keeper through one winter.",
    ),
    (
        "berg",
        "Anna Berg",
        "person",
        "Anna Berg was a Norwegian film director. She was born in Oslo in 1925 and studied in Paris. "
        "Her mother was the painter Liv Dahl. Berg made four feature films before turning to theatre.",
    ),
    (
        "dahl",
        "Liv Dahl",
        "person",
        "Liv Dahl was a Norwegian painter known for coastal landscapes. Her work hangs in the national gallery.",
    ),
    (
        "festival",
        "Bergen Film Festival",
        "event",
        "The Bergen Film Festival is held every autumn. It has shown Norwegian drama films since 1950.",
    ),
]
LINKS = [("harbour", "berg", "DIRECTED_BY"), ("berg", "dahl", "CHILD_OF"), ("harbour", "festival", "PREMIERED_AT")]
QUESTION = "Who was the mother of the director of The Quiet Harbour?"


async def build() -> Pipeline:
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(dimension=256), HashingEmbedder(dimension=256)
    docs = [Document(i, text, {"title": title, "type": kind}) for i, title, kind, text in ARTICLES]
    await graph.store_documents(docs)
    await graph.create_relations([Relation(a, b, kind) for a, b, kind in LINKS])
    embedded = await embedder.embed_documents([d.content or "" for d in docs])
    await vectors.upsert([VectorRecord(d.id, v, dict(d.metadata)) for d, v in zip(docs, embedded, strict=True)])
    return Pipeline(
        [SemanticSearch(vectors, embedder, limit=2), Hydrate(graph), GraphExpansion(graph, depth=2)],
        WeightedScorer({"semantic": 0.7, "graph": 0.3}),
    )


def format_docs(docs: Sequence[LCDocument]) -> str:
    """What LangChain tutorials pass to the prompt: every document, whole."""
    return "\n\n".join(d.page_content for d in docs)


def main() -> None:
    pipeline = asyncio.run(build())
    retriever = GraphFuseRetriever(pipeline=pipeline, k=4)
    counter = get_token_counter()
    prompt = ChatPromptTemplate.from_template("Answer from the context; cite [n].\n{context}\n\nQuestion: {question}")
    model = FakeListChatModel(responses=["Liv Dahl, the mother of Anna Berg [1]."])

    whole = (retriever | format_docs).invoke(QUESTION)
    print(f"format_docs: {counter.count(whole)} tokens")

    # 1. format_docs replaced: documents -> str within the budget (the query travels with the documents).
    context = GraphFuseContextFormatter(budget=80, format="evidence")
    chain = {"context": retriever | context, "question": RunnablePassthrough()} | prompt | model | StrOutputParser()
    packed = (retriever | context).invoke(QUESTION)
    print(f"evidence: {counter.count(packed)} tokens (budget 80, counter {context.counter.name})")
    print(packed)
    print("answer:", chain.invoke(QUESTION))

    # 2. The same with its sources kept, so the answer can be cited.
    def to_prompt(value: dict[str, Any]) -> dict[str, str]:
        return {"context": value["context"].text, "question": value["question"]}

    cited = RunnableParallel(
        context=retriever | context.with_sources(), question=RunnablePassthrough()
    ) | RunnablePassthrough.assign(answer=RunnableLambda(to_prompt) | prompt | model | StrOutputParser())
    result = cited.invoke(QUESTION)
    ctx: Context = result["context"]
    print("cited answer:", result["answer"])
    for n, source in enumerate(ctx.sources, start=1):
        print(f"source [{n}] {source.id} {source.title!r} score={source.score:.3f}")
    for dropped in ctx.dropped:
        print(f"dropped {dropped.id} ({dropped.reason})")

    # 3. query -> str: the formatter retrieves through the GraphFuse pipeline (graph format, its graph store).
    graph = GraphFuseContextFormatter(budget=160, format="graph", pipeline=pipeline, k=3)
    print(asyncio.run(graph.ainvoke(QUESTION)))


if __name__ == "__main__":
    main()

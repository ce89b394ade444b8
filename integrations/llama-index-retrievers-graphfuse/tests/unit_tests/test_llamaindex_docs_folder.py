"""A docs folder with a huge page, read by SimpleDirectoryReader, through a RetrieverQueryEngine.

With default settings a multihop GraphFuseRetriever gives passages of at most the chunk size,
so the engine's compact synthesizer makes at most two LLM calls per question and never asks for
more than the LLM's context window (before, a 390k-character release-notes page came back as
one node: 73 calls, or MockLLM's "available context size" crash).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from llama_index.core import SimpleDirectoryReader
from llama_index.core.llms import CompletionResponse, MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.utils import get_tokenizer
from llama_index.retrievers.graphfuse import GraphFuseRetriever, source_records
from pydantic import PrivateAttr

from graphfuse import presets, run_sync
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import Indexer, TitleLinker
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

QUESTIONS = [
    "How do I run a background task after returning a response?",
    "Which release changed the default response class?",
    "How do I declare a query parameter with a default value?",
]


class CountingMockLLM(MockLLM):
    """LlamaIndex's MockLLM that records every prompt it completes (one entry per LLM call)."""

    _prompts: list[str] = PrivateAttr(default_factory=list)

    @property
    def prompts(self) -> list[str]:
        return self._prompts

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self._prompts.append(prompt)
        return super().complete(prompt, formatted=formatted, **kwargs)


def _docs_folder(root: Path) -> Path:
    folder = root / "docs"
    folder.mkdir()
    notes = "\n\n".join(
        f"## Release 0.{i}.0\n\n* Changed the default response class handling in routers, fix {i}.\n"
        f"* Background tasks, query parameters, dependencies and security got small fixes ({i})."
        for i in range(1500)
    )
    (folder / "release-notes.md").write_text(f"# Release notes\n\n{notes}\n", encoding="utf-8")
    (folder / "background-tasks.md").write_text(
        "# Background tasks\n\nDefine a function and pass it to BackgroundTasks.add_task; it runs after the "
        "response is sent. See the [query parameters](query-params.md) page for declaring inputs.\n",
        encoding="utf-8",
    )
    (folder / "query-params.md").write_text(
        "# Query parameters\n\nFunction parameters that are not path parameters are query parameters; give "
        "one a default value such as `skip: int = 0` to make it optional.\n",
        encoding="utf-8",
    )
    return folder


def test_query_engine_over_multihop_on_a_docs_folder_stays_within_two_calls(tmp_path: Path) -> None:
    folder = _docs_folder(tmp_path)
    assert (folder / "release-notes.md").stat().st_size > 200_000
    documents = SimpleDirectoryReader(str(folder)).load_data()
    for doc in documents:  # the first heading is the page's title
        doc.metadata["title"] = doc.text.splitlines()[0].lstrip("# ").strip()
    records = source_records(documents, id_key="file_name")
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(dimension=256)
    run_sync(Indexer(graph, vectors, embedder, extractors=[TitleLinker()]).aindex(records))
    pipeline = presets.multihop(graph, vectors, embedder)
    retriever = GraphFuseRetriever(pipeline)  # defaults: similarity_top_k 10, passages
    llm = CountingMockLLM()
    engine = RetrieverQueryEngine.from_args(retriever, llm=llm)
    tokenizer = get_tokenizer()
    window = llm.metadata.context_window
    for question in QUESTIONS:
        before = len(llm.prompts)
        nodes = retriever.retrieve(question)
        assert nodes
        assert max(len(n.node.get_content()) for n in nodes) < 4_000  # passages, not the 700k-character page
        engine.query(question)
        calls = llm.prompts[before:]
        assert 1 <= len(calls) <= 2, (question, len(calls))
        assert all(len(tokenizer(p)) <= window for p in calls)
    # Each passage names its page, so an answer can cite it.
    node = retriever.retrieve(QUESTIONS[1])[0].node
    assert node.metadata["title"] in {"Release notes", "Background tasks", "Query parameters"}

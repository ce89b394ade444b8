"""Nothing of ours in the prompt: LlamaIndex's stock query engines, with MockLLM and LlamaIndex's
own token counter, make one LLM call per question, and no bookkeeping key (file_path, parent_id,
chunk_index, GraphFuse's signals) reaches the prompt; the same engine showing them costs more."""

from __future__ import annotations

from pathlib import Path

from llama_index.core import Settings, SimpleDirectoryReader, StorageContext, VectorStoreIndex
from llama_index.core.callbacks import CallbackManager, TokenCountingHandler
from llama_index.core.llms import MockLLM
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.retrievers.graphfuse import GraphFuseEmbedding, GraphFuseRetriever
from llama_index.retrievers.graphfuse.nodes import BOOKKEEPING_KEYS
from llama_index.vector_stores.graphfuse import GraphFuseVectorStore
from typer.testing import CliRunner

from graphfuse import presets
from graphfuse.cli import app
from graphfuse.stores import open_store

QUESTIONS = ["How often does a deployed request get retried?", "Who owns the Routing Table?"]
OURS = tuple(f"{k}:" for k in (*BOOKKEEPING_KEYS, "graphfuse_signals", "graphfuse_contributions"))


class _ShowEverything(BaseNodePostprocessor):
    """What the prompt held before: every metadata key the reader did not hide, ours included."""

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        for n in nodes:
            n.node.excluded_llm_metadata_keys = [
                k for k in n.node.excluded_llm_metadata_keys if k not in (*BOOKKEEPING_KEYS, "graphfuse_signals")
            ]
        return nodes


def _prompts(engine_for: object, questions: list[str]) -> tuple[list[str], int]:
    counter = TokenCountingHandler()
    Settings.callback_manager = CallbackManager([counter])
    try:
        engine = engine_for()  # type: ignore[operator]
        prompts: list[str] = []
        for q in questions:
            before = len(counter.llm_token_counts)
            engine.query(q)
            assert len(counter.llm_token_counts) - before == 1  # one LLM call per question
            prompts.append(counter.llm_token_counts[-1].prompt)
        return prompts, counter.prompt_llm_token_count
    finally:
        Settings.callback_manager = CallbackManager([])


def _check(prompts: list[str]) -> None:
    for prompt in prompts:
        assert not [k for k in OURS if k in prompt], prompt


def test_the_vector_store_in_the_stock_query_engine(folder: Path, embed_model: GraphFuseEmbedding) -> None:
    docs = SimpleDirectoryReader(str(folder), filename_as_id=True).load_data()
    index = VectorStoreIndex.from_documents(
        docs,
        storage_context=StorageContext.from_defaults(vector_store=GraphFuseVectorStore()),
        embed_model=embed_model,
    )
    prompts, tokens = _prompts(lambda: index.as_query_engine(llm=MockLLM(), similarity_top_k=5), QUESTIONS)
    _check(prompts)
    shown, more = _prompts(
        lambda: index.as_query_engine(llm=MockLLM(), similarity_top_k=5, node_postprocessors=[_ShowEverything()]),
        QUESTIONS,
    )
    assert any("file_path:" in p for p in shown)
    assert more > tokens  # the absolute paths cost tokens on every node


def test_graphfuse_retriever_over_a_cli_store_in_retriever_query_engine(folder: Path, tmp_path: Path) -> None:
    long_page = "# Runbook\n\n" + " ".join(f"Step {i}: check the Edge Proxy logs for retries." for i in range(80))
    (folder / "runbook.md").write_text(long_page, encoding="utf-8")  # split into chunks by the indexer
    store_dir = tmp_path / "store"
    assert runner.invoke(app, ["index", str(folder), "--store", str(store_dir), "--embedder", "hashing"]).exit_code == 0
    directory = open_store(store_dir, mode="ro")
    retriever = GraphFuseRetriever(presets.multihop(directory), similarity_top_k=5)
    nodes = retriever.retrieve("Edge Proxy logs retries step")
    assert any("parent_id" in n.node.metadata and "chunk_index" in n.node.metadata for n in nodes)

    prompts, tokens = _prompts(lambda: RetrieverQueryEngine.from_args(retriever, llm=MockLLM()), QUESTIONS)
    _check(prompts)
    _, more = _prompts(
        lambda: RetrieverQueryEngine.from_args(retriever, llm=MockLLM(), node_postprocessors=[_ShowEverything()]),
        QUESTIONS,
    )
    assert more > tokens
    directory.close()


runner = CliRunner()

"""LangChain's standard retriever suite, offline, on the in-memory GraphFuse backend."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_graphfuse import GraphFuseRetriever
from langchain_tests.integration_tests import RetrieversIntegrationTests


class TestGraphFuseRetrieverStandard(RetrieversIntegrationTests):
    @pytest.fixture(autouse=True)
    def _use_backend(self, backend: Any) -> None:
        # The suite reads the constructor parameters from a property; the session backend feeds it.
        self._backend = backend

    @property
    def retriever_constructor(self) -> type[GraphFuseRetriever]:
        return GraphFuseRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"pipeline": self._backend.pipeline(), "k": 2}

    @property
    def retriever_query_example(self) -> str:
        return "who designed the Analytical Engine?"

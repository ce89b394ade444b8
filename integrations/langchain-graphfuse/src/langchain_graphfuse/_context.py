"""Retrieved documents packed into an LLM context within a token budget: ``format_docs`` for LCEL.

:class:`GraphFuseContextFormatter` replaces the ``format_docs`` function of a LangChain RAG
chain: ``retriever | GraphFuseContextFormatter(budget=600, format="evidence")`` gives the
context string, never over the budget, in one of :mod:`graphfuse.context`'s formats.
:meth:`~GraphFuseContextFormatter.with_sources` gives the same as a
:class:`graphfuse.context.Context` (text, tokens, counter, sources for citation, what was
dropped).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForChainRun, CallbackManagerForChainRun
from langchain_core.documents import Document
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import patch_config

from graphfuse import FilterLike, GraphStore, InvalidInput, MetadataFilter, Pipeline, Result
from graphfuse.context import (
    Context,
    ContextAssembler,
    GraphCaps,
    TokenBudget,
    TokenCounter,
    Turn,
    aretrieve_context,
    retrieve_context,
)

from ._documents import METADATA_KEY, DocumentMapping, combine_filters, parse_input, passage_metadata
from ._history import history_from_messages
from ._retriever import check_k

__all__ = ["ContextInput", "GraphFuseContextFormatter", "GraphFuseContextWithSources"]

ContextInput = str | Sequence[Document] | Mapping[str, Any]
"""A query (with ``retriever=`` or ``pipeline=``), a list of documents, or ``{"query"|"question", "documents"}``
(with ``"history"`` or ``"chat_history"``: the conversation so far; without ``"documents"`` when the
formatter retrieves)."""

_HISTORY_KEYS = ("history", "chat_history")
_KEYS = ("query", "question", "documents", "filter", *_HISTORY_KEYS)
_WHAT = "runnable 'graphfuse.context'"


def _score(doc: Document) -> object:
    ns = doc.metadata.get(METADATA_KEY)
    return ns.get("score") if isinstance(ns, Mapping) else None


class _ContextAssembly:
    """The settings and the work shared by the text and the with-sources forms."""

    name: str | None

    def __init__(
        self,
        *,
        budget: int | TokenBudget,
        format: str = "passages",
        counter: TokenCounter | str | None = None,
        graph_store: GraphStore | None = None,
        filter: FilterLike | None = None,
        caps: GraphCaps | None = None,
        retriever: Runnable[str, Sequence[Document]] | None = None,
        pipeline: Pipeline | None = None,
        k: int | None = None,
        id_key: str | None = None,
        title_key: str = "title",
        name: str = "graphfuse.context",
    ) -> None:
        if retriever is not None and pipeline is not None:
            raise InvalidInput("give retriever= or pipeline= (what a query input retrieves with), not both")
        if retriever is not None and not isinstance(retriever, Runnable):
            raise InvalidInput(f"retriever must be a LangChain Runnable (e.g. a retriever), got {retriever!r}")
        if pipeline is not None and not isinstance(pipeline, Pipeline):
            raise InvalidInput(f"pipeline must be a graphfuse.Pipeline, got {type(pipeline).__name__}")
        if format == "graph" and graph_store is None and pipeline is None:
            raise InvalidInput(
                "the 'graph' context format needs a graph store for the relations: pass graph_store=... "
                "(or pipeline=..., whose own graph store is used)"
            )
        self._assembler = ContextAssembler(
            budget=budget,
            format=format,
            counter=counter,
            graph_store=graph_store,
            filter=combine_filters(filter),
            caps=caps,
            graph_store_optional=True,
        )
        if not isinstance(title_key, str) or not title_key:
            raise InvalidInput(f"title_key must be a non-empty metadata key, got {title_key!r}")
        self._retriever = retriever
        self._pipeline = pipeline
        self._k = None if k is None else check_k(k)
        self._mapping = DocumentMapping(id_key=id_key)
        self._title_key = title_key
        self._settings: dict[str, Any] = {
            "budget": budget,
            "format": format,
            "counter": self._assembler.counter,
            "graph_store": graph_store,
            "filter": filter,
            "caps": caps,
            "retriever": retriever,
            "pipeline": pipeline,
            "k": k,
            "id_key": id_key,
            "title_key": title_key,
            "name": name,
        }
        self.name = name

    @property
    def format(self) -> str:
        """The context format: ``"passages"``, ``"evidence"`` or ``"graph"``."""
        return self._assembler.format

    @property
    def counter(self) -> TokenCounter:
        """The token counter the budget is measured with."""
        return self._assembler.counter

    def __repr__(self) -> str:
        a = self._assembler
        return f"{type(self).__name__}(budget={a.budget!r}, format={a.format!r}, counter={a.counter.name!r})"

    # --- input -------------------------------------------------------------------------------

    def _history(self, value: ContextInput) -> tuple[ContextInput, tuple[Turn, ...]]:
        """The input without its conversation history, and the history's turns (oldest first)."""
        if not isinstance(value, Mapping) or not any(k in value for k in _HISTORY_KEYS):
            return value, ()
        if all(k in value for k in _HISTORY_KEYS):
            raise InvalidInput(f"{_WHAT}: give 'history' or 'chat_history', not both")
        key = next(k for k in _HISTORY_KEYS if k in value)
        turns = history_from_messages(value[key], name=key)
        rest = {k: v for k, v in value.items() if k != key}
        if "documents" not in rest and set(rest) <= {"query", "question"} and len(rest) == 1:
            # {"question": ..., "history": [...]}: the query, retrieved with the retriever or pipeline.
            query = next(iter(rest.values()))
            if not isinstance(query, str):
                raise InvalidInput(f"{_WHAT}: the query must be a string, got {type(query).__name__}")
            return query, turns
        return rest, turns

    def _split(self, value: object) -> tuple[str | None, list[Result], MetadataFilter | None]:
        if isinstance(value, Mapping):
            keys = set(value)
            if "documents" not in keys or keys - set(_KEYS) or {"query", "question"} <= keys:
                raise InvalidInput(
                    f"{_WHAT} takes a query string, a list of Documents, or a mapping with 'documents' and "
                    f"'query' (or 'question'), optionally 'filter' and 'history' (or 'chat_history'); got a "
                    f"mapping with keys {sorted(map(str, keys))}"
                )
            value = {
                "query": value.get("query", value.get("question")),
                "documents": value["documents"],
                "filter": value.get("filter"),
            }
        query, flt, docs = parse_input(value, _WHAT)
        if query is None and docs and self.format != "passages":
            raise InvalidInput(
                f"{_WHAT}: the {self.format!r} format selects by the query, and none came with the documents: use "
                "GraphFuseRetriever (its documents carry the query), wrap another retriever with "
                "with_query(retriever), invoke with {'question': ..., 'documents': [...]}, or build the formatter "
                "with retriever=... and invoke it with the query"
            )
        # Documents as ranked results: their GraphFuse score when all have one, else their rank.
        results = self._assembler.results(
            docs if self._k is None else docs[: self._k],
            id=self._mapping.doc_id,
            content=lambda doc: doc.page_content,
            metadata=passage_metadata,
            score=_score,
            title_key=self._title_key,
        )
        return query, results, flt

    def _query_text(self, value: str) -> str:
        if not value.strip():
            raise InvalidInput(f"{_WHAT}: the query must be a non-empty string")
        if self._retriever is None and self._pipeline is None:
            raise InvalidInput(
                f"{_WHAT} got a query string but has nothing to retrieve with: build it with retriever=... or "
                "pipeline=..., or give it documents (retriever | formatter)"
            )
        return value

    # --- sync / async ------------------------------------------------------------------------

    def _context(self, value: ContextInput, run_manager: CallbackManagerForChainRun, config: RunnableConfig) -> Context:
        value, history = self._history(value)
        if isinstance(value, str):
            query = self._query_text(value)
            if self._pipeline is not None:
                return retrieve_context(
                    self._pipeline, query, top_k=self._k, history=history, **self._assembler.options()
                )
            assert self._retriever is not None
            docs = self._retriever.invoke(query, config=patch_config(config, callbacks=run_manager.get_child()))
            value = {"query": query, "documents": docs}
        query_text, results, flt = self._split(value)
        return self._assembler.build(query_text, results, filter=flt, history=history)

    async def _acontext(
        self, value: ContextInput, run_manager: AsyncCallbackManagerForChainRun, config: RunnableConfig
    ) -> Context:
        value, history = self._history(value)
        if isinstance(value, str):
            query = self._query_text(value)
            if self._pipeline is not None:
                return await aretrieve_context(
                    self._pipeline, query, top_k=self._k, history=history, **self._assembler.options()
                )
            assert self._retriever is not None
            docs = await self._retriever.ainvoke(query, config=patch_config(config, callbacks=run_manager.get_child()))
            value = {"query": query, "documents": docs}
        query_text, results, flt = self._split(value)
        return await self._assembler.abuild(query_text, results, filter=flt, history=history)


class GraphFuseContextFormatter(_ContextAssembly, Runnable[ContextInput, str]):
    """The retrieved documents as one LLM context string within a token budget (replaces ``format_docs``).

    ::

        chain = (
            {"context": retriever | GraphFuseContextFormatter(budget=600, format="evidence"),
             "question": RunnablePassthrough()}
            | prompt | model | StrOutputParser()
        )

    ``budget``: context tokens (an int) or a :class:`graphfuse.context.TokenBudget`; the text
    never has more tokens than that by ``counter`` (a :class:`~graphfuse.context.TokenCounter`
    or a registered counter name; default :func:`graphfuse.context.get_token_counter`).
    ``format``: ``"passages"`` (whole passages, numbered ``[n] Title``), ``"evidence"`` (the
    sentences carrying the query's facts) or ``"graph"`` (entities, relationships and supporting
    text, which needs ``graph_store``; its neighbours are read within ``filter``). See
    :mod:`graphfuse.context`.

    Input, each form giving a ``str``:

    - a ``list[Document]`` (any retriever's output). Documents keep their order; the query is
      the one :class:`GraphFuseRetriever` and the runnables write into
      ``metadata["graphfuse"]["query"]``. ``evidence`` and ``graph`` need it; ``passages`` does
      without (a passage that does not fit whole is then cut or dropped, not selected by the query).
    - ``{"question": ..., "documents": [...]}`` (or ``"query"``, optionally ``"filter"``), such as
      :func:`with_query` produces.
    - a query ``str``, when built with ``retriever=`` (any runnable ``str -> list[Document]``,
      run as a child run) or ``pipeline=`` (a GraphFuse :class:`~graphfuse.Pipeline`, through
      :func:`~graphfuse.context.aretrieve_context`; ``k`` results, default 10; the graph format then
      uses the pipeline's own graph store).

    Conversation history: a mapping input may add ``"history"`` (or ``"chat_history"``, as
    ``RunnableWithMessageHistory`` chains name it): the conversation so far, oldest first, as
    LangChain messages (``HumanMessage``, ``AIMessage``, ``SystemMessage``), ``(role, text)``
    pairs or ``{"role", "content"}`` dicts; ``{"question": ..., "history": [...]}`` without
    documents retrieves when built with ``retriever=`` or ``pipeline=``. Its last five turns go
    newest first into their share of the budget (:func:`graphfuse.context.build_context`), and
    the string is then :attr:`Context.prompt_text <graphfuse.context.Context.prompt_text>`: the
    history block in chronological order, then the context. A tool message or an unknown role
    raises :class:`~graphfuse.InvalidInput` naming ``history[i]``.

    Scores: a document's ``metadata["graphfuse"]["score"]`` when every document has one, else
    its rank. ``k`` keeps the first k documents; ``id_key`` names the metadata key holding the
    GraphFuse id (default ``Document.id``); ``title_key`` the key shown as the title (default
    ``"title"``; ``"source"`` for documents from LangChain loaders). ``filter`` drops documents
    outside it (and bounds the graph format's neighbours), ANDed with a filter that came with
    the documents. No documents give ``"No retrieved context for this query."``.

    ``invoke``/``batch`` run on the caller's thread (the graph format's store reads on
    GraphFuse's private loop); ``ainvoke``/``abatch`` on the caller's loop. Bad settings and
    input raise :class:`~graphfuse.InvalidInput`. :meth:`with_sources` gives the whole
    :class:`~graphfuse.context.Context`, for citations.
    """

    def with_sources(self) -> GraphFuseContextWithSources:
        """The same formatter returning the :class:`~graphfuse.context.Context` (text, sources, dropped)."""
        return GraphFuseContextWithSources(**self._settings)

    def _text(self, value: ContextInput, run_manager: CallbackManagerForChainRun, config: RunnableConfig) -> str:
        return self._context(value, run_manager, config).prompt_text

    async def _atext(
        self, value: ContextInput, run_manager: AsyncCallbackManagerForChainRun, config: RunnableConfig
    ) -> str:
        return (await self._acontext(value, run_manager, config)).prompt_text

    def invoke(self, input: ContextInput, config: RunnableConfig | None = None, **kwargs: Any) -> str:
        """The context text for the documents (or for the query, retrieved)."""
        return self._call_with_config(self._text, input, config)

    async def ainvoke(self, input: ContextInput, config: RunnableConfig | None = None, **kwargs: Any) -> str:
        """The context text (async, on the caller's loop)."""
        return await self._acall_with_config(self._atext, input, config)


class GraphFuseContextWithSources(_ContextAssembly, Runnable[ContextInput, Context]):
    """:class:`GraphFuseContextFormatter`'s twin returning the :class:`~graphfuse.context.Context`.

    ``ctx.text`` is the string, ``ctx.sources`` the cited documents (marker ``[n]`` in the text
    is ``ctx.sources[n - 1]``: ``id``, ``title``, ``score``), ``ctx.dropped`` what did not fit,
    ``ctx.tokens`` and ``ctx.counter`` the cost. Same settings and input as the formatter;
    usually built with ``GraphFuseContextFormatter(...).with_sources()``.
    """

    def invoke(self, input: ContextInput, config: RunnableConfig | None = None, **kwargs: Any) -> Context:
        """The context for the documents (or for the query, retrieved)."""
        return self._call_with_config(self._context, input, config)

    async def ainvoke(self, input: ContextInput, config: RunnableConfig | None = None, **kwargs: Any) -> Context:
        """The context (async, on the caller's loop)."""
        return await self._acall_with_config(self._acontext, input, config)

"""``graphfuse index``: read text, markdown, reStructuredText and JSONL files into a store directory."""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from datetime import timezone as dt_timezone
from pathlib import Path
from typing import Annotated, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from .._core._errors import InvalidInput
from .._core._sync import run_sync
from ..defaults import CHUNK_TOKENS
from ..indexing import (
    LLM_GRAPH_CACHE,
    MAX_CHAT_FILE_BYTES,
    MAX_FILE_BYTES,
    ChatMessage,
    EntityExtractor,
    Indexer,
    IndexReport,
    LLMGraphExtractor,
    SourceRecord,
    TokenChunker,
    conversation_records,
    entity_extractors,
    read_slack,
    read_sources,
    read_whatsapp,
    wants_entity_graph,
)
from ..stores import DEFAULT_STORE, StoreDirectory, aopen_store
from ._errors import reports_errors
from ._options import LlmGraphBaseUrl, LlmGraphModel, MaxTokens, Overlap, byte_size, llm_graph_options

__all__ = [
    "CHAT_FORMATS",
    "CHAT_GAP_MINUTES",
    "chat_sources",
    "index_records",
    "index_sources",
    "register",
    "skipped_types",
    "text_graph_extractors",
]

CHAT_FORMATS = ("whatsapp", "slack")
"""The chat exports ``graphfuse index --chat`` reads."""

CHAT_GAP_MINUTES = 60.0
"""Minutes of silence after which ``graphfuse index --chat`` starts a new conversation (``--chat-gap``)."""
_MAX_GAP_MINUTES = timedelta.max // timedelta(minutes=1)  # (what a timedelta holds: about 2.7 million years)


def chat_sources(
    paths: Sequence[str | os.PathLike[str]],
    chat: str,
    *,
    gap_minutes: float = CHAT_GAP_MINUTES,
    timezone: str | None = None,
    day_first: bool | None = None,
    max_file_bytes: int = MAX_CHAT_FILE_BYTES,
    follow_symlinks: bool = False,
    on_skip: Callable[[str, str], None] | None = None,
    max_tokens: int = CHUNK_TOKENS,
) -> list[SourceRecord]:
    """The conversation records of chat exports (:func:`~graphfuse.indexing.conversation_records`).

    ``chat`` is ``whatsapp`` (each path an exported ``.txt``) or ``slack`` (each path an
    unzipped export folder); ``timezone`` an IANA zone name the WhatsApp times are in (UTC by
    default) and ``day_first`` their date order (inferred from all the files by default);
    ``gap_minutes`` the silence that starts a new conversation; ``max_tokens`` the size of a
    record (the chunk size, so that a record is one chunk). ``max_file_bytes``,
    ``follow_symlinks`` and ``on_skip`` bound the files read as in
    :func:`~graphfuse.indexing.read_slack` (an export larger than ``max_file_bytes`` is refused).
    """
    if chat not in CHAT_FORMATS:
        raise InvalidInput(f"--chat must be one of {', '.join(CHAT_FORMATS)}, got {chat!r}")
    # (NaN, infinity and what a timedelta cannot hold are not; nor a gap that rounds to nothing.)
    gap = timedelta(minutes=gap_minutes) if 0 < gap_minutes <= _MAX_GAP_MINUTES else None
    if not gap:
        raise InvalidInput(
            f"--chat-gap must be a positive number of minutes up to {_MAX_GAP_MINUTES}, got {gap_minutes!r}"
        )
    if timezone is not None and chat != "whatsapp":
        raise InvalidInput("--chat-timezone is for WhatsApp exports (Slack's times are UTC already)")
    try:
        zone = ZoneInfo(timezone) if timezone else None
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise InvalidInput(f"--chat-timezone: unknown time zone {timezone!r}") from exc
    if day_first is not None and chat != "whatsapp":
        raise InvalidInput("--chat-day-first/--chat-month-first are for WhatsApp exports")
    messages: list[ChatMessage] = []
    if chat == "slack":
        for path in paths:
            messages.extend(
                read_slack(path, max_file_bytes=max_file_bytes, follow_symlinks=follow_symlinks, on_skip=on_skip)
            )
    else:
        messages = read_whatsapp(paths, day_first=day_first, tz=zone or dt_timezone.utc, max_file_bytes=max_file_bytes)
    return conversation_records(messages, gap=gap, max_tokens=max_tokens)


def text_graph_extractors(
    records: Sequence[SourceRecord],
    entity_graph: bool | None,
    names: Sequence[str] | None,
    options: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[EntityExtractor] | None:
    """The extractors that build the text graph, or ``None`` for no text graph.

    ``names`` are ``--entity-extractor`` values (:func:`~graphfuse.indexing.entity_extractors`;
    default ``text``); naming one turns the entity graph on. ``entity_graph`` ``None`` decides by
    :func:`~graphfuse.indexing.wants_entity_graph` (mostly untitled records, or titles that link
    almost none of them). ``options`` go to the named extractors' factories (``{"llm": {...}}``).
    """
    if names and entity_graph is False:
        raise InvalidInput("--entity-extractor builds the entity graph from the text: drop --no-entity-graph")
    if entity_graph is None:
        entity_graph = bool(names) or wants_entity_graph(records)
    return entity_extractors(names, options) if entity_graph else None


async def index_records(
    store: StoreDirectory,
    records: Sequence[SourceRecord],
    console: Console,
    *,
    entity_graph: bool | None = None,
    text_extractors: Sequence[EntityExtractor] | None = None,
    chunker: TokenChunker | None = None,
) -> IndexReport:
    """Index ``records`` into an opened store, with a progress bar on ``console``.

    ``entity_graph``: build entity nodes from the text (``Indexer(entity_graph=True)``);
    ``None`` decides by :func:`~graphfuse.indexing.wants_entity_graph` (mostly untitled
    records, or titles that link almost none of them). ``text_extractors`` find the entities
    (default: :class:`~graphfuse.indexing.TextEntityExtractor`); giving them turns the entity
    graph on. ``chunker`` cuts the documents (default :class:`~graphfuse.indexing.TokenChunker`'s
    :data:`~graphfuse.defaults.CHUNK_TOKENS`).
    """
    indexer = Indexer.for_records(
        records,
        store.graph,
        store.vectors,
        store.embedder,
        entity_graph=entity_graph,
        text_extractors=text_extractors,
        chunker=chunker,
    )
    with Progress(
        TextColumn("{task.description:<8}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        # Per document: "reading" while records are chunked and their mentions extracted, then
        # "indexing" as each batch is embedded and written (the first batches are small).
        task = progress.add_task("reading", total=len(records))
        return await indexer.aindex(
            records,
            reading=lambda done: progress.update(task, completed=done),
            progress=lambda done: progress.update(task, description="indexing", completed=done),
        )


def skipped_types(counts: Counter[str]) -> str:
    """``counts`` of files not read, by extension, as a phrase: ``"3 files (2 .png, 1 .py)"``."""
    total = sum(counts.values())
    shown = ", ".join(f"{n} {suffix}" for suffix, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"{total} file{'s' if total != 1 else ''} ({shown})"


_READS = ".txt, .md, .rst and .jsonl"


async def index_sources(
    paths: Sequence[str | os.PathLike[str]],
    store_dir: str | os.PathLike[str],
    *,
    embedder: str | None = None,
    graph_store: str | None = None,
    vector_store: str | None = None,
    console: Console,
    prune: bool = False,
    entity_graph: bool | None = None,
    raw_markdown: bool = False,
    max_file_bytes: int | None = None,
    follow_symlinks: bool = False,
    entity_extractor: Sequence[str] | None = None,
    chat: str | None = None,
    chat_gap: float | None = None,
    chat_timezone: str | None = None,
    chat_day_first: bool | None = None,
    on_unsupported: Callable[[str], None] | None = None,
    llm: str | None = None,
    llm_base_url: str | None = None,
    max_tokens: int | None = None,
    overlap: int | None = None,
) -> IndexReport:
    """Index ``paths`` into ``store_dir``; return the :class:`~graphfuse.indexing.IndexReport`.

    ``on_unsupported(path)`` is called for each file of a directory not read for its type. Sources
    with no document to index raise :class:`~graphfuse.InvalidInput` saying why (every file
    skipped for its type, named by extension; or no file at all), and the store is not touched.

    Every source is read and validated before the store is touched, so a malformed file
    leaves the store as it was. With ``prune``, indexed documents whose id is not among the
    sources are deleted afterwards, with their chunks, vectors and relations (their ids are in
    the report's ``pruned``). ``entity_graph`` as in :func:`index_records`; ``raw_markdown``,
    ``max_file_bytes`` (default :data:`~graphfuse.indexing.MAX_FILE_BYTES`, and
    :data:`~graphfuse.indexing.MAX_CHAT_FILE_BYTES` for chat exports) and ``follow_symlinks`` as
    in :func:`~graphfuse.indexing.read_sources`;
    ``entity_extractor`` as in :func:`text_graph_extractors`
    (built, so a pipeline that is not installed fails, before the store is opened). ``chat``
    reads the paths as chat exports instead (:func:`chat_sources`, with ``chat_gap`` minutes (default
    :data:`CHAT_GAP_MINUTES`) and
    ``chat_timezone``, ``chat_day_first``). ``llm`` (``NAME:MODEL``) and ``llm_base_url`` set up
    the ``llm`` entity extractor (:class:`~graphfuse.indexing.LLMGraphExtractor`), whose replies
    are cached in the store directory (:data:`~graphfuse.indexing.LLM_GRAPH_CACHE`); its counts
    are printed on ``console``. ``max_tokens`` and ``overlap`` size the chunks
    (:meth:`~graphfuse.indexing.TokenChunker.sized`, default
    :data:`~graphfuse.defaults.CHUNK_TOKENS` and :data:`~graphfuse.defaults.CHUNK_OVERLAP`: the
    chunks ``graphfuse eval`` measures); another size than the store's re-chunks every document.
    """
    chunker = TokenChunker.sized(max_tokens, overlap)

    def skipped(path: str, why: str) -> None:
        console.print(f"skipped {path}: {why}", highlight=False, markup=False)

    if chat is not None:
        gap = CHAT_GAP_MINUTES if chat_gap is None else chat_gap
        records = chat_sources(
            paths,
            chat,
            gap_minutes=gap,
            timezone=chat_timezone,
            day_first=chat_day_first,
            max_file_bytes=MAX_CHAT_FILE_BYTES if max_file_bytes is None else max_file_bytes,
            follow_symlinks=follow_symlinks,
            on_skip=skipped,
            max_tokens=CHUNK_TOKENS if max_tokens is None else max_tokens,
        )
    elif chat_timezone is not None or chat_gap is not None or chat_day_first is not None:
        raise InvalidInput("--chat-gap, --chat-timezone and --chat-day-first/--chat-month-first need --chat")
    else:
        types: Counter[str] = Counter()

        def unsupported(path: str) -> None:
            types[Path(path).suffix.lower() or "(no extension)"] += 1
            if on_unsupported is not None:
                on_unsupported(path)

        records = list(
            read_sources(
                paths,
                on_skip=skipped,
                raw_markdown=raw_markdown,
                max_file_bytes=MAX_FILE_BYTES if max_file_bytes is None else max_file_bytes,
                follow_symlinks=follow_symlinks,
                on_unsupported=unsupported,
            )
        )
        if not records and not prune:  # (--prune says what it would do)
            where = ", ".join(map(str, paths))
            why = (
                f"its {skipped_types(types)} are of types graphfuse index does not read (it reads {_READS})"
                if types
                else f"no {_READS} file with text"
            )
            raise InvalidInput(f"no document to index in {where}: {why}; nothing was changed")
    if prune and not records:
        raise InvalidInput("--prune with no source documents would empty the store; nothing was changed")
    llm_options = {"cache": Path(store_dir) / LLM_GRAPH_CACHE, **llm_graph_options(entity_extractor, llm, llm_base_url)}
    text_extractors = text_graph_extractors(records, entity_graph, entity_extractor, {"llm": llm_options})
    store = await aopen_store(
        store_dir, create=True, embedder=embedder, graph_store=graph_store, vector_store=vector_store
    )
    try:
        for note in store.notes:
            console.print(f"note: {note}", highlight=False, markup=False)
        report = await index_records(
            store,
            records,
            console,
            entity_graph=text_extractors is not None,
            text_extractors=text_extractors,
            chunker=chunker,
        )
        if prune:
            indexer = Indexer(store.graph, store.vectors, store.embedder)
            report.pruned = await indexer.aprune(r.id for r in records)
        with console.status("updating the BM25 and title indexes"):
            await store.arefresh_corpus_indexes()
        for ex in text_extractors or ():
            if isinstance(ex, LLMGraphExtractor):
                console.print(ex.stats.summary(ex.model), highlight=False, markup=False)
    except BaseException:
        with contextlib.suppress(Exception):  # (the first error is the one to tell: a full disk fails both)
            await store.aclose()
        raise
    await store.aclose()
    for ex in text_extractors or ():
        if isinstance(ex, LLMGraphExtractor):
            ex.close()
    return report


@reports_errors
def index(
    paths: Annotated[
        list[str],
        typer.Argument(
            help="Files or directories: .txt, .md, .rst, .jsonl (or chat exports, with --chat).", show_default=False
        ),
    ],
    store: Annotated[str, typer.Option("--store", help="Store directory (created if missing).")] = DEFAULT_STORE,
    embedder: Annotated[
        str | None, typer.Option("--embedder", help="Registered embedder name (default: local, else hashing).")
    ] = None,
    graph_store: Annotated[
        str | None, typer.Option("--graph-store", help="Registered graph store name (default: sqlite, in --store).")
    ] = None,
    vector_store: Annotated[
        str | None, typer.Option("--vector-store", help="Registered vector store name (default: local, in --store).")
    ] = None,
    prune: Annotated[
        bool,
        typer.Option(
            "--prune", help="Delete indexed documents that are no longer in the sources (with their relations)."
        ),
    ] = False,
    entity_graph: Annotated[
        bool | None,
        typer.Option(
            "--entity-graph/--no-entity-graph",
            help=(
                "Build entity nodes from the text (default: when most documents have no title, "
                "or the titles link almost none of them)."
            ),
            show_default=False,
        ),
    ] = None,
    raw_markdown: Annotated[
        bool,
        typer.Option(
            "--raw-markdown",
            help="Index markdown as written (default: links shown as their text, e.g. [maps](m.md) as 'maps').",
        ),
    ] = False,
    max_file_size: Annotated[
        str | None,
        typer.Option(
            "--max-file-size",
            help=(
                f"Largest source file (and .jsonl line) to read, e.g. 64MiB (default {MAX_FILE_BYTES // 2**20}MiB; "
                f"{MAX_CHAT_FILE_BYTES // 2**20}MiB for a chat export file with --chat); a larger file found in a "
                "folder is skipped, named itself (or in a chat export) it is an error."
            ),
            show_default=False,
        ),
    ] = None,
    follow_symlinks: Annotated[
        bool,
        typer.Option(
            "--follow-symlinks",
            help=(
                "Follow symbolic links that lead out of a folder being read, or a Slack export "
                "(default: skipped, and said so)."
            ),
        ),
    ] = False,
    entity_extractor: Annotated[
        list[str] | None,
        typer.Option(
            "--entity-extractor",
            help=(
                "Registered entity extractor for the entity graph, NAME or NAME:MODEL (repeatable; default: "
                "text; e.g. spacy:en_core_web_sm with graphfuse-spacy; llm: typed entities and relations "
                "asked of --llm). Turns --entity-graph on."
            ),
            show_default=False,
        ),
    ] = None,
    llm: LlmGraphModel = None,
    llm_base_url: LlmGraphBaseUrl = None,
    max_tokens: MaxTokens = CHUNK_TOKENS,
    overlap: Overlap = None,
    chat: Annotated[
        str | None,
        typer.Option(
            "--chat",
            help=(
                "Read the paths as chat exports: whatsapp (exported .txt files) or slack (unzipped export "
                "folders); indexed as dated conversations."
            ),
            show_default=False,
        ),
    ] = None,
    chat_gap: Annotated[
        float | None,
        typer.Option(
            "--chat-gap",
            help=f"Minutes of silence that start a new conversation (with --chat; default {CHAT_GAP_MINUTES:g}).",
            show_default=False,
        ),
    ] = None,
    chat_timezone: Annotated[
        str | None,
        typer.Option(
            "--chat-timezone",
            help="Time zone of a WhatsApp export's times, e.g. Europe/Berlin (default UTC).",
            show_default=False,
        ),
    ] = None,
    chat_day_first: Annotated[
        bool | None,
        typer.Option(
            "--chat-day-first/--chat-month-first",
            help="How a WhatsApp export writes dates: 3/4/24 as 3 April or March 4 (default: read from the files).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Index documents into a store directory (idempotent: unchanged documents are skipped)."""
    console = Console(stderr=True)
    types: Counter[str] = Counter()
    report = run_sync(
        index_sources(
            paths,
            store,
            embedder=embedder,
            graph_store=graph_store,
            vector_store=vector_store,
            console=console,
            prune=prune,
            entity_graph=entity_graph,
            raw_markdown=raw_markdown,
            max_file_bytes=None if max_file_size is None else byte_size(max_file_size, "--max-file-size"),
            follow_symlinks=follow_symlinks,
            entity_extractor=entity_extractor,
            chat=chat,
            chat_gap=chat_gap,
            chat_timezone=chat_timezone,
            chat_day_first=chat_day_first,
            on_unsupported=lambda path: types.update([Path(path).suffix.lower() or "(no extension)"]),
            llm=llm,
            llm_base_url=llm_base_url,
            max_tokens=max_tokens,
            overlap=overlap,
        )
    )
    typer.echo(
        f"indexed {report.documents} documents ({report.chunks} chunks, {report.relations} relations); "
        f"{report.skipped} unchanged, {len(report.warnings)} warnings -> {store}"
    )
    if types:
        typer.echo(f"skipped {skipped_types(types)} of types graphfuse index does not read (it reads {_READS})")
    if prune:
        typer.echo(f"pruned {len(report.pruned)} documents no longer in the sources")
    for warning in report.warnings[:20]:
        console.print(f"warning: {warning}", highlight=False, markup=False)
    if len(report.warnings) > 20:
        console.print(f"... and {len(report.warnings) - 20} more warnings")


def register(app: typer.Typer) -> None:
    app.command("index")(index)

"""Chat logs as users have them: WhatsApp exports read into conversations, against curated chunks.

Usage (from the project root)::

    python benchmarks/chat_exports.py ../shared/data/lihua_world [--embedder local] [--top-k 5]

Takes a dated chat-log set in the benchmark layout (``corpus.jsonl`` chunks with ``created_at``
and ``doc_id`` = the conversation; ``queries.jsonl`` with ``gold_doc_ids``) and indexes it twice
into temporary stores:

- **chunks**: the set's own chunks as records with their titles and dates (what a curated
  benchmark gives);
- **export**: the same chats written out as WhatsApp exports (iPhone layout, one file per chat
  group of speakers, the messages of a conversation 30 s apart from its time, speakers' joined
  names split as the app writes them), read back with ``read_whatsapp`` and indexed as
  ``conversation_records`` (what ``graphfuse index --chat whatsapp`` does).

Each question is scored by the annotated conversations its top 2 / top 5 results cover (a chunk
by its ``doc_id``; an export record by the conversations whose messages fall in its time span
in the same chat), for ``bm25`` and ``multihop``. Writes ``benchmarks/results/chat_exports.json``;
asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import tempfile
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from _common import RESULTS, write_results

from graphfuse.indexing import Indexer, SourceRecord, conversation_records, read_whatsapp
from graphfuse.stores import aopen_store

STEP = timedelta(seconds=30)  # between the messages of one conversation in the written exports
_SPEAKER = re.compile(r"^([A-Za-z][A-Za-z .'-]*):\s?(.*)$")
_JOINED = re.compile(r"(?<=[a-z])(?=[A-Z])")


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def write_exports(corpus: list[dict[str, Any]], folder: Path) -> dict[str, tuple[str, datetime, datetime]]:
    """Write the chats as WhatsApp exports; return each conversation's (chat, first, last message time)."""
    conversations: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in corpus:
        conversations[row["doc_id"]].append(row)
    chats: dict[str, list[tuple[datetime, str, str]]] = defaultdict(list)
    spans = {}
    for doc_id, rows in conversations.items():
        start = _time(rows[0]["created_at"])
        lines: list[list[str]] = []
        for row in rows:
            for line in row["text"].split("\n"):
                said = _SPEAKER.match(line)
                if said:
                    lines.append([_JOINED.sub(" ", said[1]).strip(), said[2]])
                elif lines:
                    lines[-1][1] += " " + line
        speakers = sorted({who for who, _ in lines})
        chat = " & ".join(speakers)  # a chat is its members (in the set, each conversation's speakers)
        for i, (who, text) in enumerate(lines):
            chats[chat].append((start + i * STEP, who, text))
        spans[doc_id] = (chat, start, start + max(0, len(lines) - 1) * STEP)
    for n, (chat, messages) in enumerate(sorted(chats.items())):
        with (folder / f"chat{n:03d}.txt").open("w", encoding="utf-8") as out:
            out.write(f"[1/1/20, 9:00:00\u202fAM] {chat}: \u200eMessages and calls are end-to-end encrypted.\n")
            for when, who, text in sorted(messages):
                clock = when.strftime("%I:%M:%S").lstrip("0")
                out.write(f"[{when.month}/{when.day}/{when.year % 100}, {clock}\u202f{when:%p}] {who}: {text}\n")
    names = {chat: f"chat{n:03d}" for n, chat in enumerate(sorted(chats))}
    return {doc_id: (names[chat], a, b) for doc_id, (chat, a, b) in spans.items()}


async def build(path: Path, records: list[SourceRecord], embedder: str) -> None:
    store = await aopen_store(path, create=True, embedder=embedder)
    try:
        await Indexer.for_records(records, store.graph, store.vectors, store.embedder).aindex(records)
        await store.arefresh_corpus_indexes()
    finally:
        await store.aclose()


async def score(
    path: Path,
    pipeline: str,
    queries: list[dict[str, Any]],
    spans: dict[str, tuple[str, datetime, datetime]],
    top_k: int,
) -> dict[str, float]:
    store = await aopen_store(path)
    try:
        built = await store.apipeline(pipeline)
        recall: dict[int, list[float]] = {2: [], top_k: []}
        for q in queries:
            results = await built.aretrieve(q["question"], top_k=top_k)
            gold = set(q["gold_doc_ids"])
            for k in recall:
                covered = set()
                for r in results[:k]:
                    meta = r.document.metadata
                    if "doc_id" in meta:
                        covered |= {meta["doc_id"]} & gold
                    elif r.document.created_at is not None and "ended_at" in meta:
                        first, last = r.document.created_at, _time(meta["ended_at"])
                        covered |= {
                            g
                            for g in gold
                            if spans[g][0] == meta["channel"] and spans[g][1] <= last and first <= spans[g][2]
                        }
                recall[k].append(len(covered) / len(gold))
        return {f"R@{k}": round(sum(v) / len(v), 3) for k, v in recall.items()}
    finally:
        await store.aclose()


async def run(data: Path, embedder: str, top_k: int) -> list[dict[str, Any]]:
    corpus = [json.loads(line) for line in (data / "corpus.jsonl").open(encoding="utf-8")]
    queries = [json.loads(line) for line in (data / "queries.jsonl").open(encoding="utf-8")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "exports").mkdir()
        spans = write_exports(corpus, root / "exports")
        chunks = [
            SourceRecord(
                r["id"],
                r["text"],
                title=r.get("title"),
                created_at=_time(r["created_at"]),
                metadata={"doc_id": r["doc_id"]},
            )
            for r in corpus
        ]
        exported = conversation_records(read_whatsapp(sorted((root / "exports").glob("*.txt"))))
        for name, records in (("chunks", chunks), ("export", exported)):
            await build(root / name, records, embedder)
            for pipeline in ("bm25", "multihop"):
                row = {"corpus": name, "records": len(records), "pipeline": pipeline}
                row.update(await score(root / name, pipeline, queries, spans, top_k))
                rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(prog="benchmarks/chat_exports.py", description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="a dated chat-log set (corpus.jsonl, queries.jsonl)")
    parser.add_argument("--embedder", default="local")
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--out", type=Path, default=RESULTS / "chat_exports.json")
    args = parser.parse_args()
    rows = asyncio.run(run(args.data, args.embedder, args.top_k))
    write_results(args.out, "chat_exports", {"data": args.data.name, "embedder": args.embedder}, rows)


if __name__ == "__main__":
    main()

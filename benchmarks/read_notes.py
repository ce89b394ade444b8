"""Reading a folder of markdown notes: front matter, links resolved among them, links shown as text.

Usage (from the project root)::

    python benchmarks/read_notes.py [--notes 10000] [--repeats 3]

Writes a synthetic vault to a temporary folder (``--notes`` notes in 50 folders, each with YAML
front matter, a heading, three ``[[wikilinks]]``, three path wikilinks, three relative markdown
links and a fenced code block) and times ``graphfuse.indexing.read_sources`` over it (best of
``--repeats``; the files are in the page cache after the first). Writes
``benchmarks/results/read_notes.json``; asserts nothing.
"""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path

from _common import arguments, write_results

from graphfuse.indexing import read_sources

FOLDERS = 50


def write_vault(root: Path, n: int) -> None:
    rng = random.Random(1)
    for i in range(n):
        folder = root / f"d{i % FOLDERS}"
        folder.mkdir(exist_ok=True)
        links = " ".join(
            f"[[note {rng.randrange(n)}]] and [x](../d{rng.randrange(FOLDERS)}/note%20{rng.randrange(n)}.md) "
            f"[[d{rng.randrange(FOLDERS)}/note {rng.randrange(n)}]]"
            for _ in range(3)
        )
        (folder / f"note {i}.md").write_text(
            f"---\ntitle: Note {i}\ndate: 2024-01-{1 + i % 28:02d}\ntags: [a, b]\n---\n# Note {i}\n\n"
            f"Some text about topic {i}. {links}\n\n```\ncode [[x]]\n```\n",
            encoding="utf-8",
        )


def main() -> None:
    args = arguments("read_notes", __doc__.splitlines()[0], notes=10_000, repeats=3)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_vault(root, args.notes)
        best = float("inf")
        for _ in range(args.repeats):
            start = time.perf_counter()
            records = list(read_sources([root]))
            best = min(best, time.perf_counter() - start)
    links = sum(len(r.links) for r in records)
    rows = [
        {
            "notes": len(records),
            "links": links,
            "seconds": round(best, 2),
            "ms_per_note": round(1000 * best / max(1, len(records)), 3),
        }
    ]
    write_results(args.out, "read_notes", {"notes": args.notes, "repeats": args.repeats}, rows)


if __name__ == "__main__":
    main()

"""Build the bundled demo sample (``src/graphfuse/data/sample``) from the 2WikiMultihopQA set.

Usage::

    python benchmarks/make_sample.py SOURCE_DIR [--out DIR] [--questions 30] [--passages 400] [--seed 13]

``SOURCE_DIR`` holds ``corpus.jsonl`` and ``queries.jsonl`` in the normalised format
(``{"id", "title", "text"}`` and ``{"id", "question", "answer", "gold_ids", "type"}``).
Reproducible: questions are chosen by a seeded hash of their id; every gold passage is kept;
then, per question, the passages sharing the most rare words with it (hard distractors), then
seeded random passages, up to ``--passages``. Run it only on the development split, never on
held-out questions.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "the",
        "to",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "whose",
        "why",
        "with",
        "both",
        "same",
        "film",
        "song",
        "born",
        "died",
        "director",
    ]
)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def _read(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _rank(seed: int, key: str) -> str:
    return hashlib.sha1(f"{seed}:{key}".encode()).hexdigest()


def make_sample(
    source: Path, out: Path, *, questions: int = 30, passages: int = 400, distractors: int = 8, seed: int = 13
) -> tuple[int, int]:
    """Write ``corpus.jsonl`` and ``queries.jsonl`` under ``out``; return (questions, passages)."""
    corpus = _read(source / "corpus.jsonl")
    queries = _read(source / "queries.jsonl")
    by_id = {p["id"]: p for p in corpus}
    usable = [q for q in queries if q["gold_ids"] and all(g in by_id for g in q["gold_ids"])]
    chosen = sorted(usable, key=lambda q: _rank(seed, q["id"]))[:questions]

    keep: dict[str, None] = {}
    for q in chosen:
        keep.update(dict.fromkeys(q["gold_ids"]))

    words = {p["id"]: _words(f"{p['title']} {p['text']}") for p in corpus}
    df = Counter(w for ws in words.values() for w in ws)
    idf = {w: math.log(len(corpus) / n) for w, n in df.items()}
    for q in chosen:
        qw = _words(q["question"])
        scored = sorted(
            (p["id"] for p in corpus if p["id"] not in keep),
            key=lambda pid: (-sum(idf[w] for w in qw & words[pid]), pid),
        )
        keep.update(dict.fromkeys(scored[:distractors]))

    rest = sorted((p["id"] for p in corpus if p["id"] not in keep), key=lambda pid: _rank(seed, pid))
    rng = random.Random(seed)
    fill = rest[: max(0, passages - len(keep))]
    rng.shuffle(fill)
    keep.update(dict.fromkeys(fill))

    out.mkdir(parents=True, exist_ok=True)
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as fh:
        for p in corpus:  # source order, so the file diffs cleanly when regenerated
            if p["id"] in keep:
                fh.write(json.dumps({"id": p["id"], "title": p["title"], "text": p["text"]}, ensure_ascii=False) + "\n")
    with (out / "queries.jsonl").open("w", encoding="utf-8") as fh:
        for q in chosen:
            row = {k: q[k] for k in ("id", "question", "answer", "gold_ids", "type") if k in q}
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(chosen), len(keep)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path, help="directory with corpus.jsonl and queries.jsonl")
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parents[1] / "src" / "graphfuse" / "data" / "sample"
    )
    parser.add_argument("--questions", type=int, default=30)
    parser.add_argument("--passages", type=int, default=400)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    if "holdout" in args.source.resolve().parts:
        parser.error("refusing to sample held-out questions")
    n_q, n_p = make_sample(args.source, args.out, questions=args.questions, passages=args.passages, seed=args.seed)
    print(f"wrote {n_q} questions and {n_p} passages to {args.out}")


if __name__ == "__main__":
    main()

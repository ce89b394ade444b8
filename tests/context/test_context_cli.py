"""``graphfuse context`` and ``graphfuse eval --context-budget``, including bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from graphfuse import InvalidInput
from graphfuse.cli import app
from graphfuse.evaluation import answer_in_text, normalize_answer, parse_context_budgets

runner = CliRunner()

DOCS = [
    {
        "id": "film",
        "title": "The Quiet Harbour",
        "text": "The Quiet Harbour is a 1961 drama film directed by Anna Berg. It premiered at a festival.",
        "metadata": {"tenant": "acme"},
    },
    {
        "id": "berg",
        "title": "Anna Berg",
        "text": "Anna Berg was a Norwegian film director. Her mother was the painter Liv Dahl.",
        "metadata": {"tenant": "acme"},
    },
    {
        "id": "dahl",
        "title": "Liv Dahl",
        "text": "Liv Dahl was a Norwegian painter of coastal landscapes.",
        "metadata": {"tenant": "globex"},
    },
]
QUESTION = "Who was the mother of the director of The Quiet Harbour?"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in DOCS), encoding="utf-8")
    return path


@pytest.fixture
def store(tmp_path: Path, corpus: Path) -> Path:
    directory = tmp_path / "store"
    result = runner.invoke(app, ["index", str(corpus), "--store", str(directory), "--embedder", "hashing"])
    assert result.exit_code == 0, result.output
    return directory


@pytest.mark.parametrize("fmt", ["passages", "evidence", "graph"])
def test_context_json(store: Path, fmt: str) -> None:
    args = ["context", "--store", str(store), QUESTION, "--budget", "120", "--format", fmt, "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {"text", "tokens", "counter", "sources", "dropped"} <= set(data)
    assert data["counter"] == "cl100k_base"
    assert 0 < data["tokens"] <= 120
    assert {"id", "title", "score"} <= set(data["sources"][0])
    assert "Liv Dahl" in data["text"]


def test_context_text_and_filter(store: Path) -> None:
    args = ["context", "--store", str(store), QUESTION, "--format", "graph", "--filter", '{"tenant": "acme"}']
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("## ENTITIES")
    assert "coastal landscapes" not in result.stdout


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--budget", "0"], "budget must be a positive number of tokens, got 0"),
        (["--format", "summary"], "unknown context format 'summary'"),
        (["--counter", "nope"], "no token counter named 'nope'"),
    ],
)
def test_context_bad_input(store: Path, extra: list[str], message: str) -> None:
    result = runner.invoke(app, ["context", "--store", str(store), QUESTION, *extra])
    assert result.exit_code != 0
    assert message in " ".join(result.output.split())
    assert "Traceback" not in result.output


@pytest.mark.slow
def test_eval_context_budget(tmp_path: Path, corpus: Path) -> None:
    queries = tmp_path / "queries.jsonl"
    rows = [
        {"id": "q1", "question": QUESTION, "answer": "Liv Dahl", "gold_ids": ["film", "berg"]},
        {"id": "q2", "question": "Was Anna Berg Norwegian?", "answer": "yes", "gold_ids": ["berg"]},
        {"id": "q3", "question": "Who directed The Quiet Harbour?", "gold_ids": ["film"]},
    ]
    queries.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "eval.json"
    report = tmp_path / "report"
    args = ["eval", "--corpus", str(corpus), "--queries", str(queries), "--pipeline", "vector,multihop"]
    args += ["--embedder", "hashing", "--context-budget", "50%,40", "--json", str(out), "--report", str(report)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text(encoding="utf-8"))
    ctx = data["context"]
    assert set(ctx) == {f"{p}/{f}" for p in ("vector", "multihop") for f in ("passages", "evidence", "graph")}
    assert ctx["multihop/passages"]["n"] == 1  # the yes/no question and the one without answer are left out
    assert data["context_skipped"] == {"yes_no": 1, "no_answer": 1}
    assert data["context_budgets"][1] == 40
    assert data["context_budget"] == round(0.5 * ctx["vector/passages"]["context_tokens"])
    assert ctx["multihop/evidence"]["context_tokens"] <= data["context_budget"]
    assert [p["budget"] for p in data["context_curve"]["multihop/graph"]] == data["context_budgets"]
    assert (report / "context.png").is_file()
    assert "answer in context" in (report / "report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("spec", ["0", "-5", "abc", "0%", ""])
def test_bad_context_budgets(spec: str) -> None:
    with pytest.raises(InvalidInput, match="context budget"):
        parse_context_budgets(spec)


def test_answer_matching() -> None:
    assert normalize_answer("The  Medal of Honor!") == "medal of honor"
    assert answer_in_text("Medal of Honor", "awarded the medal of honor in 1976")
    assert not answer_in_text("Oslo", "born in Oslofjord")
    assert not answer_in_text("", "anything")


LONG = " ".join(
    ["The harbour manual opens with the tide tables."]
    + [f"Rule {i} of the harbour manual sets berth {i} for ferries." for i in range(120)]
    + ["The manual closes with the zebra signal."]
)


@pytest.fixture
def long_store(tmp_path: Path) -> Path:
    corpus = tmp_path / "long.jsonl"
    rows = [*DOCS, {"id": "manual", "title": "Harbour manual", "text": LONG}]
    corpus.write_text("".join(json.dumps(d) + "\n" for d in rows), encoding="utf-8")
    directory = tmp_path / "long-store"
    result = runner.invoke(app, ["index", str(corpus), "--store", str(directory), "--embedder", "hashing"])
    assert result.exit_code == 0, result.output
    return directory


@pytest.mark.parametrize("preset", ["minimal", "multihop"])
def test_context_granularity(long_store: Path, preset: str) -> None:
    question = "Which signal closes the harbour manual?"
    base = ["context", "--store", str(long_store), question, "--preset", preset, "--budget", "5000", "--json"]
    whole = runner.invoke(app, [*base, "--granularity", "document"])
    assert whole.exit_code == 0, whole.output
    data = json.loads(whole.stdout)
    assert data["sources"][0]["id"] == "manual"
    assert "tide tables" in data["text"]  # the whole page
    assert "zebra signal" in data["text"]
    passages = runner.invoke(app, base)  # the default: passages of at most a chunk (512 tokens)
    assert passages.exit_code == 0, passages.output
    text = json.loads(passages.stdout)["text"]
    assert "zebra signal" in text
    assert "tide tables" not in text
    assert json.loads(passages.stdout)["tokens"] < data["tokens"]


def test_context_max_per_document(long_store: Path) -> None:
    question = "Which berth do the harbour manual rules set for ferries?"
    base = ["context", "--store", str(long_store), question, "--preset", "minimal", "--budget", "5000", "--json"]
    one = json.loads(runner.invoke(app, base).stdout)
    three = json.loads(runner.invoke(app, [*base, "--max-per-document", "3"]).stdout)
    # Three passages of the manual are merged into one source; they hold more of its rules.
    assert three["text"].count("Rule ") > one["text"].count("Rule ")


@pytest.mark.parametrize("command", ["context", "compare"])
def test_granularity_bad_value(long_store: Path, tmp_path: Path, command: str) -> None:
    args = [command, "--store", str(long_store), "--granularity", "page"]
    if command == "context":
        args.append(QUESTION)
    else:
        questions = tmp_path / "q.jsonl"
        questions.write_text(json.dumps({"id": "q", "question": QUESTION}) + "\n", encoding="utf-8")
        args += ["--questions", str(questions), "--llm", "nope:model"]
    result = runner.invoke(app, args)
    assert result.exit_code != 0
    assert "granularity must be one of 'passage', 'document', got 'page'" in " ".join(result.output.split())
    assert "Traceback" not in result.output


async def test_compare_cache_key_follows_the_granularity(long_store: Path) -> None:
    from graphfuse.compare import context_pipeline
    from graphfuse.stores import aopen_store

    async with await aopen_store(str(long_store), mode="ro") as store:
        pipeline = await store.apipeline("minimal")
        assert pipeline.passages is not None

        def shaped(granularity: str | None, max_per_document: int | None) -> Any:
            defaults = pipeline.passages.with_defaults(granularity=granularity, max_per_document=max_per_document)
            return pipeline.with_passages(defaults)

        keys = {
            context_pipeline(p, budget=500).fingerprint for p in (pipeline, shaped("document", None), shaped(None, 3))
        }
        assert len(keys) == 3  # a cached answer from passages is never reused for whole documents
        with pytest.raises(InvalidInput, match="granularity must be one of"):
            shaped("page", None)

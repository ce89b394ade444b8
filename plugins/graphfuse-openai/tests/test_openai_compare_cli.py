"""``graphfuse compare --llm openai:MODEL``: the CLI end to end against a local chat-completions server."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from graphfuse_openai._generator import NO_KEY
from typer.testing import CliRunner

from graphfuse.cli import app
from graphfuse.testing import ChatCompletionsServer

runner = CliRunner()


@pytest.fixture
def chat(monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatCompletionsServer]:
    with ChatCompletionsServer(answers={"capital of France": "Paris", "Hamlet": "Shakespeare"}) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
        yield server


@pytest.fixture
def questions(tmp_path: Path) -> Path:
    path = tmp_path / "questions.jsonl"
    lines = [
        {"id": "q1", "question": "What is the capital of France?", "answer": "Paris"},
        {"id": "q2", "question": "Who wrote Hamlet?", "answer": "William Shakespeare"},
        {"id": "q3", "question": "What is the tallest mountain?"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_compare_writes_json_and_report_and_resumes(
    chat: ChatCompletionsServer, questions: Path, tmp_path: Path
) -> None:
    out, report = tmp_path / "out.json", tmp_path / "report"
    args = ["compare", "--store", str(tmp_path / "store"), "--questions", str(questions), "--pipelines", "llm_only"]
    args += ["--llm", "openai:gpt-4o-mini", "--judge", "openai:gpt-4o", "--concurrency", "2"]
    result = runner.invoke(app, [*args, "--json", str(out), "--report", str(report)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    summary = data["pipelines"]["llm_only"]
    assert summary["exact_match"] == 0.5  # "Shakespeare" is not "William Shakespeare"
    assert summary["f1"] == pytest.approx(5 / 6)
    assert summary["judge"]["pass_rate"] == 0.5
    assert summary["judge"]["failures"] == 0
    assert summary["usage_source"] == "provider"
    assert [q["id"] for q in data["questions"]] == ["q1", "q2", "q3"]
    assert data["questions"][2]["results"]["llm_only"]["judge"] is None
    assert any("1 of 3 questions have no gold answer (q3)" in n for n in data["notes"])
    assert {b["model"] for b in chat.received} == {"gpt-4o-mini", "gpt-4o"}
    assert len(chat.received) == 3 + 2
    assert "1 of 3 questions have no gold answer" in (report / "report.md").read_text()
    assert (report / "judge_radar.png").exists()
    # The same command again: everything comes from the cache, no request is made.
    again = runner.invoke(app, [*args, "--json", str(out)])
    assert again.exit_code == 0, again.output
    assert len(chat.received) == 5
    assert json.loads(out.read_text())["pipelines"]["llm_only"]["judge"]["pass_rate"] == 0.5


def test_without_llm_it_says_what_it_needs(questions: Path) -> None:
    result = runner.invoke(app, ["compare", "--questions", str(questions)])
    assert result.exit_code == 2
    assert "graphfuse compare needs --llm NAME:MODEL (e.g. --llm openai:gpt-4o-mini)" in result.output


def test_unknown_pipeline(chat: ChatCompletionsServer, questions: Path, tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["compare", "--questions", str(questions), "--llm", "openai:gpt-4o-mini", "--pipelines", "llm_only,hybrid_rag"],
    )
    assert result.exit_code == 1
    assert "unknown pipeline 'hybrid_rag'; known: llm_only, basic_rag, graphrag" in result.output
    assert chat.received == []


def test_unknown_generator_and_bad_model_spec(questions: Path) -> None:
    result = runner.invoke(app, ["compare", "--questions", str(questions), "--llm", "nope:model"])
    assert result.exit_code == 1
    assert "no generator named 'nope'; known: openai" in result.output
    result = runner.invoke(app, ["compare", "--questions", str(questions), "--llm", "openai:"])
    assert result.exit_code == 1
    assert "--llm must look like NAME:MODEL" in result.output


def test_compare_three_pipelines_over_an_indexed_store(
    chat: ChatCompletionsServer, questions: Path, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    rows = [
        {"id": "paris", "title": "Paris", "text": "Paris is the capital of France."},
        {"id": "hamlet", "title": "Hamlet", "text": "Hamlet is a tragedy written by William Shakespeare."},
        {"id": "everest", "title": "Mount Everest", "text": "Mount Everest is the tallest mountain on Earth."},
    ]
    corpus.write_text("".join(json.dumps(row) + "\n" for row in rows))
    store = tmp_path / "store"
    indexed = runner.invoke(app, ["index", str(corpus), "--store", str(store), "--embedder", "hashing"])
    assert indexed.exit_code == 0, indexed.output
    out = tmp_path / "out.json"
    args = ["compare", "--store", str(store), "--questions", str(questions), "--llm", "openai:gpt-4o-mini"]
    result = runner.invoke(app, [*args, "--budget", "200", "--json", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert list(data["pipelines"]) == ["llm_only", "basic_rag", "graphrag"]
    for name in ("basic_rag", "graphrag"):
        summary = data["pipelines"][name]
        assert summary["errors"] == 0, data["notes"]
        assert 0 < summary["context_tokens_mean"] <= 200
        q1 = data["questions"][0]["results"][name]
        assert "Paris is the capital of France." in q1["context"]["text"]
        assert q1["context_contains_answer"] is True
    assert data["pipelines"]["llm_only"]["context_contains_answer"] is None
    # basic_rag and graphrag send the context; llm_only does not.
    prompts = [
        b["messages"][-1]["content"] for b in chat.received if "Answer to grade:" not in b["messages"][-1]["content"]
    ]
    assert sum("Context:" in p for p in prompts) == 6


def test_a_local_server_by_base_url_without_a_key(
    questions: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    seen: list[str] = []

    def responder(messages: list[dict[str, str]], body: dict[str, object]) -> str:
        seen.append(str(body["model"]))
        return '{"score": 9, "correctness": 9, "completeness": 9, "clarity": 9, "relevance": 9, "reasoning": "ok"}'

    with ChatCompletionsServer(responder=responder, slots=2) as local:
        local.api_key = NO_KEY  # what a keyless server receives: the placeholder
        out = tmp_path / "out.json"
        args = ["compare", "--store", str(tmp_path / "store"), "--questions", str(questions), "--pipelines"]
        args += ["llm_only", "--llm", "openai:smollm2", "--llm-base-url", local.url, "--llm-timeout", "7.5"]
        result = runner.invoke(app, [*args, "--json", str(out), "--no-cache"])
        url = local.url
    assert result.exit_code == 0, result.output
    settings = json.loads(out.read_text())["settings"]
    assert (settings["endpoint"], settings["timeout_s"]) == (url, 7.5)
    # No --concurrency: llama.cpp's /props said 2 slots.
    assert (settings["concurrency"], settings["concurrency_from"]) == (2, f"suggested by {url}")
    assert f"model smollm2 at {url}, concurrency 2 (suggested by {url})" in result.output
    assert set(seen) == {"smollm2"}


def test_timeouts_retries_and_malformed_verdicts_in_the_report(
    chat: ChatCompletionsServer, questions: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out.json"
    # In arrival order (concurrency 1, seed 0): an answer stalls past --llm-timeout and is sent
    # again; then the judge gets malformed replies.
    chat.plan = [("stall", 5.0), ("reply", "Paris"), ("reply", "not a verdict"), ("reply", "{still not}")]
    args = ["compare", "--store", str(tmp_path / "store"), "--questions", str(questions), "--pipelines", "llm_only"]
    args += ["--llm", "openai:gpt-4o-mini", "--llm-timeout", "0.3", "--judge-attempts", "2", "--concurrency", "1"]
    result = runner.invoke(app, [*args, "--json", str(out), "--no-cache", "--progress-every", "0.1"])
    assert result.exit_code == 0, result.output
    summary = json.loads(out.read_text())["pipelines"]["llm_only"]
    assert (summary["retries"], summary["retried_timeouts"], summary["errors"]) == (1, 1, 0)
    assert summary["judge"]["failures_malformed"] == 1
    assert summary["judge"]["failures_timeout"] == 0
    # Plain progress lines (the runner is not a terminal), with the total from the start.
    assert "compare: 0/3 answers (0%)" in result.output
    assert "compare: 3/3 answers (100%)" in result.output
    # The table at its full width, not cut to 80 columns.
    header = next(line for line in result.output.splitlines() if "pipeline" in line and "judge bad" in line)
    assert len(header) > 80
    for label in ("judge bad", "judge t/o", "ans t/o", "retries", "judge retries"):
        assert label in header
    assert "llm_only: 1 answer requests were sent again (1 after a timeout), 0 judge requests" in result.output


def test_sigterm_writes_what_finished(chat: ChatCompletionsServer, questions: Path, tmp_path: Path) -> None:
    chat.delay = 1.0
    out = tmp_path / "out.json"
    command = [sys.executable, "-m", "graphfuse.cli", "compare", "--store", str(tmp_path / "store")]
    command += ["--questions", str(questions), "--pipelines", "llm_only", "--llm", "openai:gpt-4o-mini"]
    command += ["--concurrency", "1", "--progress-every", "0.1", "--json", str(out), "--report", str(tmp_path / "r")]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stderr is not None
    lines = []
    for line in process.stderr:  # wait until one answer (and its verdict) finished
        lines.append(line)
        if line.startswith("compare: 1/3"):
            break
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 143, "".join(lines) + stderr
    assert "SIGTERM: stopping; writing the answers that finished" in stderr
    data = json.loads(out.read_text())
    assert data["interrupted"] is True
    summary = data["pipelines"]["llm_only"]
    assert summary["answers"] >= 1
    assert summary["not_run"] >= 1
    assert summary["answers"] + summary["not_run"] == 3
    assert "interrupted" in (tmp_path / "r" / "report.md").read_text()
    assert "llm_only" in stdout


def test_serve_passes_the_base_url_to_the_answer_model(tmp_path: Path) -> None:
    # The dashboard's answer model is built with the same flags before anything listens.
    args = ["serve", "--store", str(tmp_path / "none"), "--llm", "openai:local", "--llm-base-url", "127.0.0.1:8080/v1"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    assert "base_url must be an http:// or https:// URL" in " ".join(result.output.split())

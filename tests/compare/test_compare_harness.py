"""The comparison harness: pipelines x questions, metrics, judging, errors, cache, report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _compare_fakes import ContextSource, ScriptedGenerator, last_user, verdict

from graphfuse import ConnectionFailed, InvalidInput, NotFound
from graphfuse.compare import (
    CompareCache,
    CompareQuestion,
    ContextWindowExceeded,
    Judge,
    acompare_pipelines,
    basic_rag,
    builtin_pipelines,
    compare_pipelines,
    context_pipeline,
    graphrag,
    llm_only,
    load_questions,
    markdown_report,
    write_report,
)

QUESTIONS = [
    CompareQuestion("q1", "Where was the performer of Changed It born?", ("Port of Spain",)),
    CompareQuestion("q2", "Are Marufabad and Nasamkhrali in the same country?", ("no",)),
]
CONTEXTS = {
    "Changed It": "Changed It is a song by Nicki Minaj. Nicki Minaj was born in Port of Spain.",
    "Marufabad": "Marufabad is a village in Iran. Nasamkhrali is a village in Georgia.",
}


def answerer(messages: list[dict[str, str]]) -> str:
    user = last_user(messages)
    if "Context:" not in user:
        return "unknown"
    return "Port of Spain" if "Changed It" in user else "No."


def grader(messages: list[dict[str, str]]) -> str:
    user = last_user(messages)
    truth = user.split("Ground truth: ")[1].split("\n")[0]
    answer = user.split("Answer to grade: ")[1]
    return verdict(9 if truth.lower().strip(".") == answer.lower().strip(".") else 2)


def pipelines(source: ContextSource) -> dict[str, object]:
    return {"llm_only": llm_only(), "basic_rag": basic_rag(source), "graphrag": graphrag(source, format="graph")}


async def test_three_pipelines_answer_and_are_judged() -> None:
    source = ContextSource(CONTEXTS)
    generator, judge_model = ScriptedGenerator(answerer), ScriptedGenerator(grader, model="judge-model")
    report = await acompare_pipelines(
        QUESTIONS, pipelines(source), generator, judge=Judge(judge_model, threshold=7), concurrency=2
    )
    data = report.to_dict()
    assert list(data["pipelines"]) == ["llm_only", "basic_rag", "graphrag"]
    rag = data["pipelines"]["basic_rag"]
    assert rag["exact_match"] == 1.0
    assert rag["f1"] == 1.0
    assert rag["judge"]["score"] == 9.0
    assert rag["judge"]["pass_rate"] == 1.0
    assert rag["judge"]["failures"] == 0
    assert rag["context_contains_answer"] == 0.5  # "no" is in neither context
    assert rag["usage_source"] == "provider"
    only = data["pipelines"]["llm_only"]
    assert (only["exact_match"], only["judge"]["pass_rate"], only["context_contains_answer"]) == (0.0, 0.0, None)
    # The documented JSON shape (docs/compare.md): per-pipeline means, judge fields.
    assert set(rag) >= {"prompt_tokens_mean", "completion_tokens_mean", "latency_p50_ms", "exact_match", "f1", "judge"}
    assert set(rag["judge"]) >= {
        "score", "correctness", "completeness", "clarity", "relevance", "pass_rate", "failures"
    }  # fmt: skip
    first = data["questions"][0]
    assert (first["id"], first["answer"]) == ("q1", "Port of Spain")
    entry = first["results"]["graphrag"]
    assert entry["answer"] == "Port of Spain"
    assert entry["prompt_tokens"] == 20
    assert entry["completion_tokens"] == 3
    assert entry["judge"]["score"] == 9.0
    assert entry["context"]["text"] == CONTEXTS["Changed It"]
    # Retrieval options reached acontext; the judge never saw a pipeline name (blind).
    assert {(c["format"], c["top_k"], c["budget"]) for c in source.calls} == {
        ("passages", 5, 3000),
        ("graph", None, 3000),
    }
    judged = [last_user(m) for m in judge_model.calls]
    assert len(judged) == 6
    assert not any(name in text for text in judged for name in ("llm_only", "basic_rag", "graphrag"))
    assert data["settings"]["judge"]["model"] == "judge-model"
    assert data["settings"]["judge"]["blind"] is True
    json.dumps(data)  # JSON-ready


async def test_questions_without_answers_skip_judge_and_em(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(
        '{"id": "a", "question": "Where was the performer of Changed It born?"}\n'
        '{"id": "b", "question": "Marufabad?", "answers": ["no", "No."]}\n'
    )
    questions = load_questions(path)
    judge_model = ScriptedGenerator(grader)
    report = await acompare_pipelines(
        questions, {"rag": basic_rag(ContextSource(CONTEXTS))}, ScriptedGenerator(answerer), judge=Judge(judge_model)
    )
    unanswered = report.result("a", "rag")
    assert unanswered.answer is not None
    assert (unanswered.exact_match, unanswered.f1, unanswered.verdict) == (None, None, None)
    assert len(judge_model.calls) == 1  # only b was judged
    assert report.result("b", "rag").exact_match == 1.0
    assert any("1 of 2 questions have no gold answer (a)" in n and "judging" in n for n in report.notes)
    assert "1 of 2 questions have no gold answer" in markdown_report(report)


async def test_all_questions_without_answers_report_no_metrics(tmp_path: Path) -> None:
    questions = [CompareQuestion("a", "Where was the performer of Changed It born?")]
    report = await acompare_pipelines(
        questions, {"llm_only": llm_only()}, ScriptedGenerator(answerer), judge=Judge(ScriptedGenerator(grader))
    )
    summary = report.to_dict()["pipelines"]["llm_only"]
    assert (summary["exact_match"], summary["f1"], summary["judge"]) == (None, None, None)
    assert report.to_dict()["questions"][0]["answer"] is None
    row = "| llm_only | 20 | 1.0 | 0 | n/a | n/a | n/a | n/a | n/a | n/a | n/a | n/a | n/a | 7 | 0 | 0 | 0 | n/a |"
    assert row in markdown_report(report)


def test_unknown_pipeline_is_named() -> None:
    with pytest.raises(NotFound, match=r"unknown pipeline 'hybrid_rag'; built-in pipelines: llm_only, basic_rag"):
        builtin_pipelines(["llm_only", "hybrid_rag"])
    with pytest.raises(InvalidInput, match="'basic_rag' needs a vector-search pipeline"):
        builtin_pipelines(["basic_rag"])
    with pytest.raises(InvalidInput, match="pipeline 'x' is a str, not an answer pipeline"):
        compare_pipelines(QUESTIONS, {"x": "vector"}, ScriptedGenerator(answerer))  # type: ignore[dict-item]
    with pytest.raises(InvalidInput, match="has no acontext"):
        context_pipeline(object())


async def test_an_empty_answer_is_an_error_not_a_wrong_answer() -> None:
    judge_model = ScriptedGenerator(grader)
    report = await acompare_pipelines(
        QUESTIONS, {"llm_only": llm_only()}, ScriptedGenerator(lambda m: "  \n"), judge=Judge(judge_model)
    )
    outcome = report.result("q1", "llm_only")
    assert outcome.answer is None
    assert outcome.error is not None
    assert "EmptyAnswer: the generator (scripted-model) returned an empty answer" in outcome.error
    assert judge_model.calls == []
    summary = report.summary("llm_only")
    assert (summary["errors"], summary["answers"], summary["exact_match"], summary["judge"]["score"]) == (
        2,
        0,
        None,
        None,
    )
    assert any("llm_only: 2 answers failed" in n for n in report.notes)


async def test_a_judge_that_never_returns_valid_json_is_a_recorded_failure() -> None:
    replies = iter(["not json", '{"score": 11, "correctness": 1, "completeness": 1, "clarity": 1, "relevance": 1, '
                    '"reasoning": "x"}', '{"score": 5}'])  # fmt: skip
    judge_model = ScriptedGenerator(lambda m: next(replies))
    report = await acompare_pipelines(
        QUESTIONS[:1], {"llm_only": llm_only()}, ScriptedGenerator(answerer), judge=Judge(judge_model, attempts=3)
    )
    outcome = report.result("q1", "llm_only")
    assert outcome.verdict is None
    assert outcome.judge_error is not None
    assert "gave no valid verdict in 3 attempts" in outcome.judge_error
    assert "attempt 1: the verdict is not valid JSON" in outcome.judge_error
    assert "attempt 2: the verdict's score is 11, outside 0-10" in outcome.judge_error
    assert (
        "attempt 3: the verdict lacks correctness, completeness, clarity, relevance, reasoning" in outcome.judge_error
    )
    judge = report.summary("llm_only")["judge"]
    assert (judge["failures"], judge["score"], judge["pass_rate"]) == (1, None, None)  # never a silent zero
    assert len(judge_model.calls) == 3


async def test_a_malformed_verdict_is_retried_then_accepted() -> None:
    replies = iter(["```json\n{oops", "```json\n" + verdict(8) + "\n```"])
    judge = Judge(ScriptedGenerator(lambda m: next(replies)))
    result = await judge.ajudge("q?", "Paris", "Paris")
    assert (result.score, result.passed, result.attempts) == (8.0, True, 2)


async def test_repeated_verdicts_report_their_spread() -> None:
    scores = iter([6, 8, 10])
    judge = Judge(ScriptedGenerator(lambda m: verdict(next(scores))), repeats=3, threshold=8)
    result = await judge.ajudge("q?", "a", ["a"])
    assert result.score == 8.0
    assert result.passed
    assert result.score_spread == pytest.approx(1.633, abs=1e-3)
    assert result.repeats == 3


async def test_a_context_larger_than_the_window_is_refused_before_the_call() -> None:
    source = ContextSource({"Changed It": "word " * 500})
    generator = ScriptedGenerator(answerer, context_window=300)
    report = await acompare_pipelines(QUESTIONS[:1], {"rag": basic_rag(source)}, generator, max_tokens=100)
    error = report.result("q1", "rag").error
    assert error is not None
    assert error.startswith("ContextWindowExceeded: the prompt for model 'scripted-model' is ")
    assert "100 more are reserved for the answer" in error
    assert "> the model's context window of 300 tokens" in error
    assert generator.calls == []
    with pytest.raises(ContextWindowExceeded) as info:
        await basic_rag(source).aanswer(QUESTIONS[0].question, generator, max_tokens=100)
    assert info.value.context_window == 300
    assert info.value.prompt_tokens > 500


async def test_concurrency_is_bounded() -> None:
    questions = [CompareQuestion(f"q{i}", f"question {i}", ("x",)) for i in range(12)]
    generator = ScriptedGenerator(answerer, delay=0.01)
    await acompare_pipelines(questions, {"a": llm_only(), "b": llm_only(system_prompt="B")}, generator, concurrency=3)
    assert generator.most_in_flight == 3
    assert len(generator.calls) == 24


async def test_the_cache_resumes_an_interrupted_run(tmp_path: Path) -> None:
    calls = {"n": 0}

    def flaky(messages: list[dict[str, str]]) -> str:
        calls["n"] += 1
        if "Marufabad" in last_user(messages):
            raise ConnectionFailed("network down")
        return answerer(messages)

    progress: list[tuple[int, int]] = []
    cache = CompareCache(tmp_path / "cache.sqlite")
    judge_model = ScriptedGenerator(grader)
    named = pipelines(ContextSource(CONTEXTS))
    first = await acompare_pipelines(
        QUESTIONS,
        named,
        ScriptedGenerator(flaky),
        judge=Judge(judge_model),
        cache=cache,
        progress=lambda d, t: progress.append((d, t)),
    )
    assert [first.result("q2", n).error for n in named] == ["ConnectionFailed: network down"] * 3
    assert progress[-1] == (6, 6)
    assert len(judge_model.calls) == 3
    # Second run: only the failed answers are asked for again; the stored ones are reused.
    generator = ScriptedGenerator(answerer)
    second = await acompare_pipelines(QUESTIONS, named, generator, judge=Judge(judge_model), cache=cache)
    assert len(generator.calls) == 3
    assert len(judge_model.calls) == 6
    assert all(second.result("q1", n).cached for n in named)
    assert second.result("q2", "basic_rag").answer is not None
    # A third run asks nothing; a new threshold re-decides the stored verdicts.
    third = await acompare_pipelines(QUESTIONS, named, generator, judge=Judge(judge_model, threshold=9.5), cache=cache)
    assert len(generator.calls) == 3
    assert len(judge_model.calls) == 6
    assert third.summary("basic_rag")["judge"]["pass_rate"] == 0.0
    # Another prompt or model is another key.
    other = ScriptedGenerator(answerer, model="other-model")
    await acompare_pipelines(QUESTIONS, {"llm_only": llm_only(system_prompt="Be brief.")}, other, cache=cache)
    assert len(other.calls) == 2
    cache.close()


async def test_report_files(tmp_path: Path) -> None:
    report = await acompare_pipelines(
        QUESTIONS,
        pipelines(ContextSource(CONTEXTS)),
        ScriptedGenerator(answerer),
        judge=Judge(ScriptedGenerator(grader)),
    )
    path = write_report(report, tmp_path / "out")
    for name in ("tokens.png", "judge_radar.png", "latency.png"):
        assert (tmp_path / "out" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    markdown = path.read_text()
    assert "| basic_rag | 20 | 2.0 |" in markdown
    assert "Token numbers: llm_only provider, basic_rag provider, graphrag provider" in markdown
    assert json.loads((tmp_path / "out" / "report.json").read_text())["pipelines"]["llm_only"]["exact_match"] == 0.0
    (tmp_path / "file").write_text("x")
    with pytest.raises(InvalidInput, match="is a file, not a directory"):
        write_report(report, tmp_path / "file")


def test_bad_questions_files(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "a", "question": "x", "answer": 3}\n')
    with pytest.raises(InvalidInput, match=r"q.jsonl:1: 'answer' must be a non-empty string"):
        load_questions(path)
    path.write_text('{"id": "a", "question": "x"}\n{"id": "a", "question": "y"}\n')
    with pytest.raises(InvalidInput, match="question id 'a' appears twice"):
        load_questions(path)
    path.write_text("\n")
    with pytest.raises(InvalidInput, match="the questions file is empty"):
        load_questions(path)
    with pytest.raises(InvalidInput, match="no such questions file"):
        load_questions(tmp_path / "missing.jsonl")

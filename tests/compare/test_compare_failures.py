"""The comparison's failure accounting: timeouts vs malformed verdicts, retries, an interrupted run."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from _compare_fakes import last_user, verdict

from graphfuse import RequestTimedOut
from graphfuse.compare import (
    CompareQuestion,
    Generation,
    Judge,
    acompare_pipelines,
    failure_kind,
    llm_only,
    markdown_report,
)
from graphfuse.retry import RetryPolicy, call_with_retry

FAST = RetryPolicy(attempts=3, initial=0.0, maximum=0.0, jitter=0.0)
QUESTIONS = [CompareQuestion(f"q{i}", f"Question number {i}?", (f"answer {i}",)) for i in range(1, 5)]


@dataclass
class FlakyModel:
    """Answers through graphfuse.retry: the first ``timeouts[key]`` attempts of a call time out.

    ``key`` is a substring of the last user message; a key mapped to a number >= the policy's
    attempts never answers. ``reply`` gives the text once a call gets through.
    """

    timeouts: dict[str, int] = field(default_factory=dict)
    verdicts: dict[str, str] = field(default_factory=dict)
    model: str = "flaky"
    endpoint: str = "http://127.0.0.1:9/v1"
    timeout: float = 0.5
    delay: float = 0.0
    sent: int = 0

    async def agenerate(self, messages: list[dict[str, str]], *, max_tokens: int | None = None) -> Generation:
        user = last_user(messages)
        left = next((n for key, n in self.timeouts.items() if key in user), 0)

        async def attempt() -> str:
            nonlocal left
            self.sent += 1
            await asyncio.sleep(self.delay)
            if left > 0:
                left -= 1
                raise RequestTimedOut(f"the server at {self.endpoint} did not answer within {self.timeout} s")
            if "Answer to grade:" in user:
                return next((v for key, v in self.verdicts.items() if key in user), verdict(9))
            return "answer " + user.split("number ")[1].rstrip("?")

        text = await call_with_retry(attempt, FAST, describe=f"chat completion at {self.endpoint}")
        return Generation(text, 10, 2, "provider", 0.0)


def test_failure_kinds() -> None:
    from graphfuse import ConnectionFailed, DeadlineExceeded
    from graphfuse.compare import JudgeFailed

    assert failure_kind(JudgeFailed("x", problems=[], raw=None)) == "malformed"
    assert failure_kind(RequestTimedOut("x")) == "timeout"
    assert failure_kind(DeadlineExceeded("x")) == "timeout"
    assert failure_kind(ConnectionFailed("x")) == "error"


async def test_timeouts_and_malformed_verdicts_are_counted_apart_with_the_retries() -> None:
    answerer = FlakyModel(timeouts={"number 1": 1, "number 2": 5})  # q1: one retry; q2: never answers
    judge_model = FlakyModel(
        timeouts={"Question number 3": 5},  # q3's verdict never comes: a judge timeout
        verdicts={"Question number 4": "not json"},  # q4's verdict is malformed every time
    )
    report = await acompare_pipelines(
        QUESTIONS, {"llm_only": llm_only()}, answerer, judge=Judge(judge_model, attempts=2), concurrency=2
    )
    summary = report.summary("llm_only")
    assert (summary["errors"], summary["errors_timeout"]) == (1, 1)  # q2
    assert report.result("q2", "llm_only").error_kind == "timeout"
    assert "did not answer within" in (report.result("q2", "llm_only").error or "")
    assert (summary["retries"], summary["retried_timeouts"]) == (1 + 2, 1 + 2)  # q1 once, q2 twice (3 attempts)
    judge = summary["judge"]
    assert judge["failures"] == 2
    assert (judge["failures_malformed"], judge["failures_timeout"], judge["failures_other"]) == (1, 1, 0)
    assert judge["retries"] == 2  # q3's verdict: sent 3 times
    assert judge["verdicts"] == 1  # q1
    assert report.result("q3", "llm_only").judge_error_kind == "timeout"
    assert report.result("q4", "llm_only").judge_error_kind == "malformed"
    notes = "\n".join(report.notes)
    assert "llm_only: 1 answers failed (1 timed out)" in notes
    assert "the judge failed on 2 answers (1 malformed, 1 timeout;" in notes
    assert "llm_only: 3 answer requests were sent again (3 after a timeout), 2 judge requests" in notes
    assert report.settings["endpoint"] == "http://127.0.0.1:9/v1"
    assert report.settings["timeout_s"] == 0.5
    text = markdown_report(report)
    header = next(line for line in text.splitlines() if line.startswith("| pipeline |"))
    row = next(line for line in text.splitlines() if line.startswith("| llm_only |"))
    cells = dict(zip(header.split("|"), row.split("|"), strict=True))
    columns = ("judge failures", "malformed verdicts", "judge timeouts", "answer timeouts", "answer retries")
    assert [cells[f" {c} "].strip() for c in (*columns, "judge retries")] == ["2", "1", "1", "1", "3", "2"]


async def test_a_stopped_run_reports_what_finished() -> None:
    model = FlakyModel(delay=0.05)
    stop = asyncio.Event()
    seen: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        seen.append((done, total))
        if done == 2:
            stop.set()

    report = await acompare_pipelines(
        QUESTIONS, {"llm_only": llm_only()}, model, judge=Judge(model), concurrency=1, progress=progress, stop=stop
    )
    assert seen[0] == (0, 4)  # the total is known before the first answer
    assert report.interrupted
    assert sorted(q for q, _ in report.results) == sorted({q for q, _ in report.results})
    assert len(report.results) == 2
    data = report.to_dict()
    assert data["interrupted"] is True
    assert data["pipelines"]["llm_only"]["not_run"] == 2
    assert data["pipelines"]["llm_only"]["answers"] == 2
    assert sum(q["results"]["llm_only"] is None for q in data["questions"]) == 2
    assert data["notes"][0].startswith("interrupted: 2 of 4 answers finished")
    assert "(interrupted: only what finished is reported)" in markdown_report(report)


async def test_a_stop_cancels_answers_in_flight() -> None:
    model = FlakyModel(delay=30.0)
    stop = asyncio.Event()
    asyncio.get_running_loop().call_later(0.2, stop.set)
    report = await asyncio.wait_for(
        acompare_pipelines(QUESTIONS, {"llm_only": llm_only()}, model, concurrency=2, stop=stop), 10
    )
    assert report.interrupted
    assert report.results == {}
    assert model.sent == 2  # two were in flight and were cancelled; the others never started

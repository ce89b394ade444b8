"""Exact match, token F1 (SQuAD normalisation) and answer containment."""

from __future__ import annotations

import pytest

from graphfuse.compare import contains_answer, exact_match, normalize_answer, token_f1


@pytest.mark.parametrize(
    ("text", "normal"),
    [("The Eiffel Tower!", "eiffel tower"), ("  a   Cat, an apple ", "cat apple"), ("Theatre", "theatre")],
)
def test_squad_normalisation(text: str, normal: str) -> None:
    assert normalize_answer(text) == normal


def test_exact_match_takes_any_gold() -> None:
    assert exact_match("the Port of Spain.", "Port of Spain") == 1.0
    assert exact_match("Spain", "Port of Spain") == 0.0
    assert exact_match("yes", ["no", "Yes"]) == 1.0


def test_token_f1() -> None:
    assert token_f1("Port of Spain", "Port of Spain") == 1.0
    # 2 common tokens of 2 predicted and 3 gold: P=1, R=2/3.
    assert token_f1("Port Spain", "Port of Spain") == pytest.approx(0.8)
    assert token_f1("London", "Paris") == 0.0
    assert token_f1("the", "a") == 1.0  # both normalise to nothing, as SQuAD scores it
    assert token_f1("Paris", ["London", "Paris France"]) == pytest.approx(2 / 3)


def test_containment_on_word_boundaries() -> None:
    assert contains_answer("He was born in Port of Spain, Trinidad.", "port of spain")
    assert not contains_answer("Spaniards", "Spain")
    assert not contains_answer("anything", "the")
    assert contains_answer("x yes y", ["no", "yes"])

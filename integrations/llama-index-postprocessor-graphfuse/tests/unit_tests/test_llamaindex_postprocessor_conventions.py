"""Written as a LlamaIndex user's code: postprocessors refuse unknown keyword arguments (with a
suggestion) and take ``half_life`` with an explicit unit."""

from __future__ import annotations

from datetime import timedelta

import pytest
from llama_index.postprocessor.graphfuse import AccessPostprocessor, TemporalDecayPostprocessor

from graphfuse import InvalidInput


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: TemporalDecayPostprocessor(halflife=timedelta(days=30)),
            "'halflife' \\(did you mean 'half_life'\\?\\)",
        ),
        (lambda: AccessPostprocessor(max_acess_count=10), "'max_acess_count' \\(did you mean 'max_access_count'\\?\\)"),
        (lambda: TemporalDecayPostprocessor(half_life=30), "a bare number has no unit, use half_life_days=30"),
        (lambda: TemporalDecayPostprocessor(half_life="30"), "a bare number has no unit"),
        (lambda: TemporalDecayPostprocessor(half_life=timedelta(days=3), half_life_days=3), "not both"),
    ],
    ids=["halflife-typo", "max_acess_count-typo", "bare-number", "numeric-string", "both"],
)
def test_postprocessors_refuse_typos_and_unitless_half_lives(make: object, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        make()  # type: ignore[operator]


def test_half_life_in_days_or_as_a_duration() -> None:
    assert TemporalDecayPostprocessor(half_life_days=30).half_life == timedelta(days=30)
    assert TemporalDecayPostprocessor(half_life="P30D").half_life == timedelta(days=30)
    post = TemporalDecayPostprocessor(half_life=timedelta(days=3))
    assert '"half_life": "P3D"' in post.to_json()
    assert TemporalDecayPostprocessor.from_json(post.to_json()).half_life == timedelta(days=3)

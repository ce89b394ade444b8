"""NamedStage: the base every built-in stage shares, usable by a third-party stage."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from graphfuse import Candidate, Document, InvalidInput, Pipeline, Query, RunContext
from graphfuse.multihop import BridgeSearch, PersonalizedPageRank
from graphfuse.scoring import WeightedScorer
from graphfuse.stages import AccessPopularity, NamedStage, TemporalDecay
from graphfuse.timeaware import TimeAware


class Constant(NamedStage):
    __slots__ = ("_value",)

    def __init__(self, value: float, *, name: str = "constant", signal: str = "constant") -> None:
        self._set_names(name, signal)
        self._value = value

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        return [c.with_signal(self._signal, self._value) for c in candidates]


async def test_a_third_party_stage_gets_its_name_and_signal_checked() -> None:
    stage = Constant(0.5, name="mine")
    assert stage.name == "mine"
    with pytest.raises(AttributeError):
        stage.name = "other"  # type: ignore[misc]
    out = await stage.run(Query("q"), [Candidate(Document("a", "x"))], None)  # type: ignore[arg-type]
    assert dict(out[0].signals) == {"constant": 0.5}
    with pytest.raises(InvalidInput, match="name"):
        Constant(0.5, name="")
    with pytest.raises(InvalidInput, match="signal"):
        Constant(0.5, signal="not a name!")
    assert Pipeline([stage], WeightedScorer({"constant": 1.0})).stages[0] is stage


def test_the_built_in_stages_share_it() -> None:
    for cls in (AccessPopularity, TemporalDecay, PersonalizedPageRank, BridgeSearch, TimeAware):
        assert issubclass(cls, NamedStage)
    assert not hasattr(TemporalDecay(), "__dict__")  # still slotted
    with pytest.raises(InvalidInput, match="name"):
        AccessPopularity(name="")

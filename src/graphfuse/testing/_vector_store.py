"""The :class:`VectorStoreContract` suite: every promise of :class:`graphfuse.VectorStore`."""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Sequence
from typing import Any

import pytest

from .._core._capabilities import VectorSource
from .._core._errors import InvalidInput
from .._core._filters import MetadataFilter
from .._core._protocols import VectorStore
from .._core._types import VectorHit, VectorRecord
from ._filter_cases import random_filter, random_metadata

__all__ = ["VectorStoreContract"]


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def _ids(hits: Sequence[VectorHit]) -> list[str]:
    return [h.id for h in hits]


@pytest.mark.asyncio
class VectorStoreContract:
    """Subclass and provide an async ``vector_store`` fixture yielding an empty store.

    The store must accept vectors of ``vector_dimension`` floats (a class attribute, 4 by
    default; override it when your store is created with a fixed dimension). The fixture
    should close the store after the test. The ``test_get_vectors_*`` tests run only when the
    store implements :class:`graphfuse.VectorSource` (they skip otherwise).
    """

    vector_dimension = 4

    def vec(self, *values: float) -> list[float]:
        """A vector of ``vector_dimension`` floats starting with ``values`` (zero-padded)."""
        out = [float(v) for v in values] + [0.0] * (self.vector_dimension - len(values))
        return out[: self.vector_dimension]

    async def _filter_fixture(self, store: VectorStore) -> None:
        await store.upsert(
            [
                VectorRecord("a", self.vec(1, 0.1), {"tenant": "t1", "year": 2020, "lang": "en", "draft": True}),
                VectorRecord("b", self.vec(1, 0.2), {"tenant": "t2", "year": 2021, "lang": "de", "draft": False}),
                VectorRecord("c", self.vec(1, 0.3), {"tenant": "t1", "year": 2022, "lang": "fr"}),
                VectorRecord("d", self.vec(1, 0.4), {"tenant": "t3", "year": 2023, "flag": 1}),
                VectorRecord("e", self.vec(1, 0.5), {}),
            ]
        )

    async def _filtered(self, store: VectorStore, spec: dict[str, Any]) -> set[str]:
        return set(_ids(await store.search(self.vec(1, 0), limit=10, filter=spec)))  # type: ignore[arg-type]

    async def test_filters_agree_with_the_reference(self, vector_store: VectorStore) -> None:
        """Differential: random tricky metadata and filters vs ``MetadataFilter.matches``.

        A record or filter the store refuses with ``InvalidInput`` is left out (a clear
        refusal is allowed); everything else must select exactly what the reference selects.
        """
        rng = random.Random(20260601)
        kept: dict[str, dict[str, Any]] = {}
        for i in range(40):
            metadata = random_metadata(rng)
            try:
                await vector_store.upsert([VectorRecord(f"r{i}", self.vec(1, i / 40), metadata)])
            except InvalidInput:
                continue
            kept[f"r{i}"] = metadata
        assert len(kept) >= 20, "the store refused most of the records"
        wrong, refused = [], 0
        for _ in range(150):
            spec = random_filter(rng)
            try:
                hits = await vector_store.search(self.vec(1, 0.5), limit=100, filter=spec)  # type: ignore[arg-type]
            except InvalidInput:
                refused += 1
                continue
            flt = MetadataFilter.parse(spec)
            assert flt is not None
            expected = {k for k, md in kept.items() if flt.matches(md)}
            got = set(_ids(hits))
            if got != expected:
                wrong.append(f"{spec}: extra {sorted(got - expected)}, missing {sorted(expected - got)}")
        assert not wrong, f"{len(wrong)} filters disagree with MetadataFilter.matches: " + "; ".join(wrong[:5])
        assert refused < 75, f"the store refused {refused} of 150 filters"

    async def test_empty_store(self, vector_store: VectorStore) -> None:
        assert await vector_store.count() == 0
        assert await vector_store.search(self.vec(1), limit=5) == []
        assert await vector_store.delete(["missing"]) == 0

    async def test_upsert_count_and_dimension(self, vector_store: VectorStore) -> None:
        await vector_store.upsert([VectorRecord(f"v{i}", self.vec(1, i)) for i in range(7)])
        assert await vector_store.count() == 7
        assert vector_store.dimension == self.vector_dimension
        await vector_store.upsert([])
        assert await vector_store.count() == 7

    async def test_search_scores_are_cosine_best_first(self, vector_store: VectorStore) -> None:
        vectors = {
            "same": self.vec(2, 0, 0),  # same direction, different length: cosine 1
            "close": self.vec(3, 1, 0),
            "right": self.vec(0, 5, 0),
            "opposite": self.vec(-1, 0, 0),
            "mixed": self.vec(1, -1, 1),
        }
        await vector_store.upsert([VectorRecord(k, v) for k, v in vectors.items()])
        query = self.vec(1, 0, 0)
        hits = await vector_store.search(query, limit=10)
        assert len(hits) == 5
        expected = sorted(vectors, key=lambda k: -_cosine(query, vectors[k]))
        assert _ids(hits) == expected
        for hit in hits:
            assert hit.score == pytest.approx(_cosine(query, vectors[hit.id]), abs=1e-4)
        assert hits[0].score == pytest.approx(1.0, abs=1e-4)
        assert hits[-1].score == pytest.approx(-1.0, abs=1e-4)

    async def test_search_limit(self, vector_store: VectorStore) -> None:
        await vector_store.upsert([VectorRecord(f"v{i}", self.vec(1, i / 10)) for i in range(10)])
        hits = await vector_store.search(self.vec(1, 0), limit=3)
        assert _ids(hits) == ["v0", "v1", "v2"]
        assert len(await vector_store.search(self.vec(1, 0))) == 10, "default limit is 50"

    async def test_limit_zero_and_negative(self, vector_store: VectorStore) -> None:
        await vector_store.upsert([VectorRecord("a", self.vec(1))])
        assert await vector_store.search(self.vec(1), limit=0) == []
        with pytest.raises(InvalidInput):
            await vector_store.search(self.vec(1), limit=-1)

    async def test_min_score(self, vector_store: VectorStore) -> None:
        await vector_store.upsert(
            [VectorRecord("x", self.vec(1, 0)), VectorRecord("y", self.vec(1, 1)), VectorRecord("z", self.vec(0, 1))]
        )
        hits = await vector_store.search(self.vec(1, 0), min_score=0.5)
        assert _ids(hits) == ["x", "y"]
        assert all(h.score >= 0.5 for h in hits)
        assert await vector_store.search(self.vec(-1, 0), min_score=0.1) == []

    async def test_filter_and_min_score_apply_before_limit(self, vector_store: VectorStore) -> None:
        near = [VectorRecord(f"near{i}", self.vec(1, i / 100), {"tenant": "other"}) for i in range(8)]
        far = [VectorRecord(f"far{i}", self.vec(1, 1 + i), {"tenant": "mine"}) for i in range(3)]
        await vector_store.upsert(near + far)
        hits = await vector_store.search(self.vec(1, 0), limit=2, filter={"tenant": "mine"})  # type: ignore[arg-type]
        assert _ids(hits) == ["far0", "far1"]
        hits = await vector_store.search(self.vec(0, 1), limit=2, min_score=0.9)
        assert _ids(hits) == ["far2"]
        hits = await vector_store.search(self.vec(0, 1), limit=2, min_score=0.8, filter={"tenant": "mine"})  # type: ignore[arg-type]
        assert _ids(hits) == ["far2", "far1"]

    async def test_upsert_is_idempotent_by_id(self, vector_store: VectorStore) -> None:
        await vector_store.upsert([VectorRecord("a", self.vec(1, 0), {"v": 1})])
        await vector_store.upsert([VectorRecord("a", self.vec(0, 1), {"v": 2})])
        assert await vector_store.count() == 1
        hits = await vector_store.search(self.vec(0, 1), limit=5)
        assert _ids(hits) == ["a"]
        assert hits[0].score == pytest.approx(1.0, abs=1e-4)
        assert _ids(await vector_store.search(self.vec(0, 1), filter={"v": 2})) == ["a"]  # type: ignore[arg-type]
        assert await vector_store.search(self.vec(0, 1), filter={"v": 1}) == []  # type: ignore[arg-type]

    async def test_dimension_mismatch_writes_nothing(self, vector_store: VectorStore) -> None:
        with pytest.raises(InvalidInput):
            await vector_store.upsert(
                [VectorRecord("ok", self.vec(1)), VectorRecord("bad", [1.0] * (self.vector_dimension + 1))]
            )
        assert await vector_store.count() == 0
        await vector_store.upsert([VectorRecord("first", self.vec(1))])
        with pytest.raises(InvalidInput):
            await vector_store.upsert(
                [VectorRecord("ok", self.vec(0, 1)), VectorRecord("short", [1.0] * (self.vector_dimension - 1))]
            )
        assert await vector_store.count() == 1
        assert _ids(await vector_store.search(self.vec(0, 1), limit=5)) == ["first"]

    async def test_non_finite_vector_writes_nothing(self, vector_store: VectorStore) -> None:
        bad = self.vec(1)
        bad[0] = math.nan
        with pytest.raises(InvalidInput):
            await vector_store.upsert([VectorRecord("ok", self.vec(1)), VectorRecord("nan", bad)])
        assert await vector_store.count() == 0

    async def test_search_dimension_mismatch(self, vector_store: VectorStore) -> None:
        await vector_store.upsert([VectorRecord("a", self.vec(1))])
        with pytest.raises(InvalidInput):
            await vector_store.search([1.0] * (self.vector_dimension + 2))

    async def test_unusual_ids_round_trip(self, vector_store: VectorStore) -> None:
        ids = ["a/b:c d", "ünïcødé-文書", "x" * 512, "42", "00000000-0000-0000-0000-000000000000"]
        await vector_store.upsert([VectorRecord(doc_id, self.vec(1, i)) for i, doc_id in enumerate(ids)])
        assert await vector_store.count() == len(ids)
        assert set(_ids(await vector_store.search(self.vec(1), limit=10))) == set(ids)
        assert await vector_store.delete(ids[:2]) == 2

    async def test_delete(self, vector_store: VectorStore) -> None:
        await vector_store.upsert([VectorRecord(k, self.vec(1, i)) for i, k in enumerate("abc")])
        assert await vector_store.delete(["a", "missing", "b"]) == 2
        assert await vector_store.count() == 1
        assert _ids(await vector_store.search(self.vec(1), limit=10)) == ["c"]
        assert await vector_store.delete(["a"]) == 0
        assert await vector_store.delete([]) == 0

    async def test_concurrent_upserts(self, vector_store: VectorStore) -> None:
        await asyncio.gather(*(vector_store.upsert([VectorRecord(f"c{i}", self.vec(1, i))]) for i in range(16)))
        assert await vector_store.count() == 16

    def _source(self, store: VectorStore) -> VectorSource:
        if not isinstance(store, VectorSource):
            pytest.skip("the store does not implement graphfuse.VectorSource (get_vectors)")
        return store

    async def test_get_vectors_gives_each_stored_direction(self, vector_store: VectorStore) -> None:
        source = self._source(vector_store)
        assert await source.get_vectors([]) == {}
        assert await source.get_vectors(["missing"]) == {}, "an empty store holds no vector"
        written = {"a": self.vec(3, 4), "b": self.vec(0, -2, 1), "c": self.vec(1, 1, 1)}
        await vector_store.upsert([VectorRecord(k, v) for k, v in written.items()])
        # Missing ids are left out; the order and repetition of the ids do not matter.
        got = await source.get_vectors(["c", "missing", "a", "c"])
        assert set(got) == {"a", "c"}
        for key, vector in got.items():
            assert isinstance(vector, list)
            assert all(isinstance(x, float) for x in vector)
            assert len(vector) == self.vector_dimension
            # A store may keep the vector normalised: its direction is what must come back.
            assert _cosine(vector, written[key]) == pytest.approx(1.0, abs=1e-5)
        assert set(await source.get_vectors(["b", "a", "c"])) == {"a", "b", "c"}

    async def test_get_vectors_after_replace_and_delete(self, vector_store: VectorStore) -> None:
        source = self._source(vector_store)
        await vector_store.upsert([VectorRecord("a", self.vec(1, 0)), VectorRecord("b", self.vec(0, 1))])
        await vector_store.upsert([VectorRecord("a", self.vec(0, 0, 1))])
        assert await vector_store.delete(["b"]) == 1
        got = await source.get_vectors(["a", "b"])
        assert set(got) == {"a"}
        assert _cosine(got["a"], self.vec(0, 0, 1)) == pytest.approx(1.0, abs=1e-5)

    async def test_get_vectors_unusual_ids(self, vector_store: VectorStore) -> None:
        source = self._source(vector_store)
        ids = ["a/b:c d", "ünïcødé-文書", "x" * 512, "42", "00000000-0000-0000-0000-000000000000"]
        await vector_store.upsert([VectorRecord(doc_id, self.vec(1, i)) for i, doc_id in enumerate(ids)])
        got = await source.get_vectors(ids)
        assert set(got) == set(ids)
        for i, doc_id in enumerate(ids):
            assert _cosine(got[doc_id], self.vec(1, i)) == pytest.approx(1.0, abs=1e-5)

    async def test_get_vectors_bad_input(self, vector_store: VectorStore) -> None:
        source = self._source(vector_store)
        await vector_store.upsert([VectorRecord("a", self.vec(1))])
        with pytest.raises(InvalidInput):
            await source.get_vectors("a")  # a bare string, not a list of ids
        with pytest.raises(InvalidInput):
            await source.get_vectors([1])  # type: ignore[list-item]

    async def test_filter_eq(self, vector_store: VectorStore) -> None:
        await self._filter_fixture(vector_store)
        assert await self._filtered(vector_store, {"tenant": "t1"}) == {"a", "c"}
        assert await self._filtered(vector_store, {"tenant": {"$eq": "t2"}}) == {"b"}
        assert await self._filtered(vector_store, {"year": 2022}) == {"c"}
        assert await self._filtered(vector_store, {"tenant": "t1", "lang": "fr"}) == {"c"}
        assert await self._filtered(vector_store, {"tenant": "nobody"}) == set()

    async def test_filter_bool_is_not_int(self, vector_store: VectorStore) -> None:
        await self._filter_fixture(vector_store)
        assert await self._filtered(vector_store, {"draft": True}) == {"a"}
        assert await self._filtered(vector_store, {"draft": False}) == {"b"}
        assert await self._filtered(vector_store, {"flag": 1}) == {"d"}
        assert await self._filtered(vector_store, {"flag": True}) == set()

    async def test_filter_ne(self, vector_store: VectorStore) -> None:
        await self._filter_fixture(vector_store)
        # A missing key passes $ne.
        assert await self._filtered(vector_store, {"tenant": {"$ne": "t1"}}) == {"b", "d", "e"}
        assert await self._filtered(vector_store, {"lang": {"$ne": "en"}}) == {"b", "c", "d", "e"}

    async def test_filter_in_nin(self, vector_store: VectorStore) -> None:
        await self._filter_fixture(vector_store)
        assert await self._filtered(vector_store, {"lang": {"$in": ["en", "de"]}}) == {"a", "b"}
        assert await self._filtered(vector_store, {"year": {"$in": [2020, 2023]}}) == {"a", "d"}
        assert await self._filtered(vector_store, {"lang": {"$nin": ["en", "de"]}}) == {"c", "d", "e"}

    async def test_filter_ranges(self, vector_store: VectorStore) -> None:
        await self._filter_fixture(vector_store)
        assert await self._filtered(vector_store, {"year": {"$gt": 2021}}) == {"c", "d"}
        assert await self._filtered(vector_store, {"year": {"$gte": 2021}}) == {"b", "c", "d"}
        assert await self._filtered(vector_store, {"year": {"$lt": 2021}}) == {"a"}
        assert await self._filtered(vector_store, {"year": {"$lte": 2021}}) == {"a", "b"}
        assert await self._filtered(vector_store, {"year": {"$gte": 2021, "$lt": 2023}}) == {"b", "c"}
        assert await self._filtered(vector_store, {"year": {"$gt": 2020.5}}) == {"b", "c", "d"}

    async def test_filter_exists(self, vector_store: VectorStore) -> None:
        await self._filter_fixture(vector_store)
        assert await self._filtered(vector_store, {"lang": {"$exists": True}}) == {"a", "b", "c"}
        assert await self._filtered(vector_store, {"lang": {"$exists": False}}) == {"d", "e"}

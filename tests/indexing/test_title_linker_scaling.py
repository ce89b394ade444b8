"""TitleLinker.add/remove touch only the titles involved (add must not be quadratic).

Timing figures come from ``python benchmarks/title_linker.py``; these tests check the
structure that makes it linear (no copy of the dictionary per call) and that in-place
updates keep lookups, extraction and the longest-title bound right.
"""

from __future__ import annotations

from graphfuse.indexing import TitleLinker


def test_add_and_remove_update_in_place_without_copying() -> None:
    linker = TitleLinker()
    linker.add("Alpha Centauri", "a")
    entries = linker._entries  # the dictionary an add used to copy on every call
    for i in range(2000):
        linker.add(f"Station Number {i}", f"s{i}")
    linker.remove("s5")
    assert linker._entries is entries
    assert len(linker) == 2000


def test_remove_forgets_only_that_document_and_shrinks_the_longest_title() -> None:
    linker = TitleLinker()
    linker.add("The Very Long Title Of A Book", "long")
    linker.add("Paris", "p1")
    linker.add("Paris", "p2")
    assert [m.targets for m in linker.extract("In Paris.")] == [("p1", "p2")]
    linker.remove("p1")
    assert linker.lookup("Paris") == ("p2",)
    linker.remove("long")
    assert linker.lookup("The Very Long Title Of A Book") == ()
    assert linker._longest == 1
    linker.remove("p2")
    assert len(linker) == 0
    assert linker.extract("Paris again") == []
    linker.add("Paris", "p3")  # a removed key comes back cleanly
    assert [m.targets for m in linker.extract("Paris")] == [("p3",)]

"""SpacyEntityExtractor on a real spaCy pipeline: mentions, keys, labels, loading errors, threads."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import spacy
from graphfuse_spacy import DEFAULT_LABELS, SpacyEntityExtractor

from graphfuse import InvalidInput, NotFound
from graphfuse.indexing import Mention, entity_extractor

TEXT = (
    "Angela Merkel met Emmanuel Macron in Paris on 3 March 2019. "
    "The United Nations sent three observers, and Greta Berg's band played."
)


def test_named_entities_become_mentions(extractor: SpacyEntityExtractor) -> None:
    mentions = extractor.extract(TEXT)
    keys = [m.entity for m in mentions]
    assert "angela merkel" in keys
    assert "emmanuel macron" in keys
    assert "paris" in keys
    assert "united nations" in keys  # "The" dropped, as TextEntityExtractor drops it
    assert "greta berg" in keys  # the possessive cut off
    # Dates and numbers are not names.
    assert not any(k in keys for k in ("3 march 2019", "three"))
    for m in mentions:
        assert isinstance(m, Mention)
        assert m.targets == ()
        assert 0 <= m.start < m.end <= len(TEXT)
    un = next(m for m in mentions if m.entity == "united nations")
    assert TEXT[un.start : un.end] == "United Nations"


def test_labels_choose_what_is_kept(model: str) -> None:
    people = SpacyEntityExtractor(model, labels={"PERSON"})
    assert people.labels == frozenset({"PERSON"})
    keys = [m.entity for m in people.extract(TEXT)]
    assert "angela merkel" in keys
    assert "paris" not in keys
    with pytest.raises(InvalidInput, match=r"does not predict label\(s\) \['NONSENSE'\]"):
        SpacyEntityExtractor(model, labels={"PERSON", "NONSENSE"})
    with pytest.raises(InvalidInput, match="not the string"):
        SpacyEntityExtractor(model, labels="PERSON")
    with pytest.raises(InvalidInput, match="min_chars"):
        SpacyEntityExtractor(model, min_chars=0)


def test_default_labels_are_names_only(extractor: SpacyEntityExtractor) -> None:
    assert extractor.labels <= DEFAULT_LABELS
    assert {"DATE", "CARDINAL", "MONEY", "PERCENT", "ORDINAL", "QUANTITY", "TIME"}.isdisjoint(extractor.labels)


def test_blank_text_and_wrong_types(extractor: SpacyEntityExtractor) -> None:
    assert extractor.extract("") == []
    assert extractor.extract("   \n") == []
    with pytest.raises(InvalidInput, match="text must be a string"):
        extractor.extract(b"Paris")  # type: ignore[arg-type]


def test_a_name_that_is_not_installed_says_how_to_install_it() -> None:
    with pytest.raises(NotFound) as info:
        SpacyEntityExtractor("en_core_web_nonesuch")
    message = str(info.value)
    assert "not installed" in message
    assert "never downloads" in message
    assert "python -m spacy download en_core_web_nonesuch" in message


def test_paths(model: str, tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="does not exist"):
        SpacyEntityExtractor(tmp_path / "missing")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(NotFound, match="could not load"):
        SpacyEntityExtractor(empty)
    saved = tmp_path / "pipeline"
    spacy.load(model).to_disk(saved)
    from_disk = SpacyEntityExtractor(saved)
    assert "angela merkel" in [m.entity for m in from_disk.extract(TEXT)]
    assert from_disk.model == str(saved)


def test_a_pipeline_without_ner_is_refused(tmp_path: Path) -> None:
    blank = tmp_path / "blank"
    spacy.blank("en").to_disk(blank)
    with pytest.raises(InvalidInput, match="has no 'ner' component"):
        SpacyEntityExtractor(blank)


def test_the_registry_builds_it_by_name_and_model(model: str) -> None:
    built = entity_extractor(f"spacy:{model}")
    assert isinstance(built, SpacyEntityExtractor)
    assert built.model == model
    with pytest.raises(NotFound, match="python -m spacy download en_core_web_nonesuch"):
        entity_extractor("spacy:en_core_web_nonesuch")


def test_safe_from_worker_threads(extractor: SpacyEntityExtractor) -> None:
    texts = [TEXT, "Li Hua flew to Tokyo with Wolfgang Schulz.", "Barack Obama visited Berlin."] * 8
    alone = [extractor.extract(t) for t in texts]
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(extractor.extract, texts))
    assert together == alone

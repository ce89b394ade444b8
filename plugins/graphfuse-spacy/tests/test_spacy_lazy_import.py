"""Loading the ``spacy`` plugin must not import spaCy: it is imported when an extractor is built."""

from __future__ import annotations

import graphfuse_spacy
import pytest

from graphfuse.testing import modules_imported_by

HEAVY = ("spacy", "graphfuse_spacy._extractor")


@pytest.mark.parametrize(
    "statements",
    [
        "import graphfuse_spacy._plugin",
        "import graphfuse_spacy",
        "from graphfuse.plugins import get_registry\nassert 'spacy' in get_registry().names('entity_extractor')",
    ],
)
def test_loading_the_plugin_does_not_import_spacy(statements: str) -> None:
    assert modules_imported_by(statements, HEAVY) == dict.fromkeys(HEAVY, False)


def test_using_the_public_names_imports_spacy() -> None:
    statements = "import graphfuse_spacy as package\nfor name in package.__all__:\n    getattr(package, name)"
    assert modules_imported_by(statements, HEAVY) == dict.fromkeys(HEAVY, True)


def test_public_names_resolve_on_first_access() -> None:
    assert sorted(dir(graphfuse_spacy)) == sorted(graphfuse_spacy.__all__)
    assert graphfuse_spacy.SpacyEntityExtractor.__module__ == "graphfuse_spacy._extractor"
    with pytest.raises(AttributeError, match="has no attribute 'NotAName'"):
        graphfuse_spacy.NotAName  # noqa: B018

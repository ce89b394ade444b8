"""``graphfuse.defaults``: each tuned constant documented, linked to its measurements, and used."""

from __future__ import annotations

import ast
import inspect
import itertools
import re
from pathlib import Path

import pytest
from markdown.extensions.toc import slugify

from graphfuse import Passages, defaults
from graphfuse.context import WHOLE_PAGE_CHUNKS
from graphfuse.evaluation import aevaluate, aevaluate_files
from graphfuse.indexing import TokenChunker, conversation_records
from graphfuse.multihop import (
    DOCUMENT_WEIGHT,
    FUSED_WEIGHT,
    MULTIHOP_WEIGHTS,
    BridgeSearch,
    DocumentEvidence,
    PersonalizedPageRank,
)
from graphfuse.scoring import AdaptiveScorer
from graphfuse.stores import InMemoryGraphStore

ROOT = Path(__file__).resolve().parents[2]
SOURCE = Path(inspect.getfile(defaults)).read_text(encoding="utf-8")
LINK = re.compile(r"docs/([\w/-]+\.md)#([\w-]+)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def _docstrings() -> dict[str, str]:
    """Each module-level constant's attribute docstring (the string literal right after it)."""
    body = ast.parse(SOURCE).body
    found = {}
    for node, following in itertools.pairwise(body):
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if isinstance(target, ast.Name) and isinstance(following, ast.Expr):
            value = following.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found[target.id] = value.value
    return found


def _anchors(page: str) -> set[str]:
    text = FENCE.sub("", (ROOT / "docs" / page).read_text(encoding="utf-8"))
    headings = re.findall(r"^#{1,6} (.+)$", text, re.M)
    return {slugify(h.replace("`", ""), "-") for h in headings}


DOCSTRINGS = _docstrings()


@pytest.mark.parametrize("name", defaults.__all__)
def test_each_constant_says_what_it_does_and_links_its_measurements(name: str) -> None:
    doc = DOCSTRINGS.get(name)
    assert doc, f"{name} has no docstring in graphfuse/defaults.py"
    links = LINK.findall(doc)
    assert links, f"{name}'s docstring links no docs section (docs/PAGE.md#anchor)"
    for page, anchor in links:
        assert anchor in _anchors(page), f"{name} links docs/{page}#{anchor}, which is not a heading there"


def test_the_anchor_check_can_fail() -> None:
    assert "long-pages" in _anchors("multihop.md")
    assert "no-such-section" not in _anchors("multihop.md")


def test_no_history_in_the_docstrings() -> None:
    # The sweeps' history lives in the docs; the code states the value and where it was measured.
    assert not re.search(r"\b(was|before|previously|used to be|now|changed|no longer)\b|->", SOURCE.split("__all__")[1])


def test_the_public_names_elsewhere_are_these_values() -> None:
    assert MULTIHOP_WEIGHTS is defaults.MULTIHOP_WEIGHTS
    assert FUSED_WEIGHT == defaults.FUSED_WEIGHT
    assert DOCUMENT_WEIGHT == defaults.DOCUMENT_WEIGHT
    assert WHOLE_PAGE_CHUNKS == defaults.WHOLE_PAGE_CHUNKS


def _default(callable_: object, parameter: str) -> object:
    return inspect.signature(callable_).parameters[parameter].default  # type: ignore[arg-type]


def test_the_components_take_their_defaults_from_here() -> None:
    assert _default(AdaptiveScorer, "lexical_weight") == defaults.ADAPTIVE_LEXICAL_WEIGHT
    assert _default(AdaptiveScorer, "vector_boost") == defaults.ADAPTIVE_VECTOR_BOOST
    assert _default(AdaptiveScorer, "reference") == defaults.ADAPTIVE_REFERENCE
    assert _default(AdaptiveScorer, "time_boost") == defaults.ADAPTIVE_TIME_BOOST
    assert _default(Passages, "max_per_document") == defaults.MAX_PER_DOCUMENT
    assert _default(Passages, "lexical") == defaults.PASSAGE_LEXICAL
    assert _default(Passages, "hub_share") == defaults.HUB_SHARE
    assert _default(BridgeSearch, "seeds") == defaults.BRIDGE_SEEDS
    assert _default(DocumentEvidence, "top") == defaults.DOCUMENT_TOP
    seeds = f"seed_signals={dict(defaults.SEED_SIGNALS)!r}"
    assert seeds in repr(PersonalizedPageRank(InMemoryGraphStore()))


def test_one_chunk_size_for_the_indexer_and_eval() -> None:
    # What `graphfuse eval` measures is the store `graphfuse index` and the server build.
    assert _default(TokenChunker, "max_tokens") == defaults.CHUNK_TOKENS
    assert _default(TokenChunker, "overlap") == defaults.CHUNK_OVERLAP
    assert TokenChunker.sized().fingerprint == TokenChunker().fingerprint
    assert _default(conversation_records, "max_tokens") == defaults.CHUNK_TOKENS
    assert _default(aevaluate, "max_tokens") == defaults.CHUNK_TOKENS
    assert _default(aevaluate_files, "max_tokens") == defaults.CHUNK_TOKENS

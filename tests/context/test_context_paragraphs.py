"""The paragraph rule contexts read text by: hard-wrapped lines joined, structure kept line by line."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphfuse import Document, Result
from graphfuse.context import build_context
from graphfuse.context._items import item_body, items_from_results
from graphfuse.context._paragraphs import CODE, HEADING, MARKUP, PROSE, TABLE, join_paragraphs, line_kinds


def _lines(text: str) -> list[tuple[str, str]]:
    joined = join_paragraphs(text)
    _, kinds = line_kinds(joined)
    return [(kind, line) for line, kind in zip(joined.split("\n"), kinds, strict=True) if line.strip()]


def test_a_hard_wrapped_paragraph_is_one_line_and_a_blank_line_ends_it() -> None:
    text = "The proxy forwards each request to the\nupstream that owns its path.  Proxies may\nrewrite it.\n\nNext one."
    joined = "The proxy forwards each request to the upstream that owns its path.  Proxies may rewrite it."
    assert join_paragraphs(text) == f"{joined}\n\nNext one."
    assert join_paragraphs("One line. Two sentences.") == "One line. Two sentences."
    assert join_paragraphs("Windows\r\nline ends\r\n\r\ntoo") == "Windows line ends\n\ntoo"


def test_list_items_headings_and_quotes_end_a_paragraph() -> None:
    text = (
        "# Install\n"
        "Run the installer on every\nnode.\n"
        "- first item, wrapped\n  over two lines\n"
        "* second item\n"
        "1. numbered, wrapped\n   as well\n"
        "#. rst's auto-numbered item\n"
        ":param name: a field, wrapped\n  too\n"
        "> a quote that is\n> wrapped\n\n"
        "Setext title\n============\n"
        "Text.\n"
    )
    assert _lines(text) == [
        (HEADING, "# Install"),
        (PROSE, "Run the installer on every node."),
        (PROSE, "- first item, wrapped over two lines"),
        (PROSE, "* second item"),
        (PROSE, "1. numbered, wrapped as well"),
        (PROSE, "#. rst's auto-numbered item"),
        (PROSE, ":param name: a field, wrapped too"),
        (PROSE, "> a quote that is wrapped"),
        (HEADING, "Setext title"),
        (MARKUP, "============"),
        (PROSE, "Text."),
    ]


def test_code_blocks_are_kept_as_written() -> None:
    fenced = "Call it like\nthis:\n\n```python\ndef f():\n\n    return 1\n```\nAfter the\nfence."
    assert _lines(fenced) == [
        (PROSE, "Call it like this:"),
        (MARKUP, "```python"),
        (CODE, "def f():"),
        (CODE, "    return 1"),
        (MARKUP, "```"),
        (PROSE, "After the fence."),
    ]
    indented = "A paragraph\nwrapped.\n\n    x = 1\n    y = 2\n\nMore prose\nhere."
    assert _lines(indented) == [
        (PROSE, "A paragraph wrapped."),
        (CODE, "    x = 1"),
        (CODE, "    y = 2"),
        (PROSE, "More prose here."),
    ]
    # After a list item, an indented paragraph belongs to the item: prose, not code.
    in_list = "- an item\n\n    its second paragraph,\n    wrapped"
    assert _lines(in_list)[-1] == (PROSE, "    its second paragraph, wrapped")


def test_restructuredtext_directives_literal_blocks_and_tables() -> None:
    text = (
        "============\nWeb security\n============\n\n"
        ".. code-block:: nginx\n   :linenos:\n\n   server {\n       listen 80;\n   }\n\n"
        ".. note::\n\n   A note that is\n   wrapped.\n\n"
        "For example::\n\n    ledger invoice\n    --tenant acme\n\n"
        "=====  =====\nport   use\n=====  =====\n443    TLS\n=====  =====\n\n"
        "+------+-----+\n| port | use |\n+======+=====+\n\n"
        ".. toctree::\n\n   intro\n   install\n\n"
        ".. _label:\n\nBack to prose that\nis wrapped."
    )
    assert _lines(text) == [
        (MARKUP, "============"),
        (HEADING, "Web security"),
        (MARKUP, "============"),
        (MARKUP, ".. code-block:: nginx"),
        (CODE, "   :linenos:"),
        (CODE, "   server {"),
        (CODE, "       listen 80;"),
        (CODE, "   }"),
        (MARKUP, ".. note::"),
        (PROSE, "   A note that is wrapped."),
        (PROSE, "For example::"),
        (CODE, "    ledger invoice"),
        (CODE, "    --tenant acme"),
        (MARKUP, "=====  ====="),
        (TABLE, "port   use"),
        (MARKUP, "=====  ====="),
        (TABLE, "443    TLS"),
        (MARKUP, "=====  ====="),
        (MARKUP, "+------+-----+"),
        (TABLE, "| port | use |"),
        (MARKUP, "+======+=====+"),
        (MARKUP, ".. toctree::"),
        (CODE, "   intro"),
        (CODE, "   install"),
        (MARKUP, ".. _label:"),
        (PROSE, "Back to prose that is wrapped."),
    ]


def test_markdown_extensions_tables_html_and_front_matter() -> None:
    text = (
        "---\ntitle: Models\ntags: [api]\n---\n"
        "Models are classes that\ninherit from BaseModel.\n\n"
        "::: pydantic.BaseModel\n    options:\n        show_root_heading: true\n\n"
        "!!! note\n    Admonitions hold prose that\n    is wrapped.\n\n"
        "| key | value |\n|-----|-------|\n| a   | 1     |\n\n"
        "<div class='x'>\n\n[docs]: https://example.org/docs\n"
    )
    assert _lines(text) == [
        (MARKUP, "---"),
        (MARKUP, "title: Models"),
        (MARKUP, "tags: [api]"),
        (MARKUP, "---"),
        (PROSE, "Models are classes that inherit from BaseModel."),
        (MARKUP, "::: pydantic.BaseModel"),
        (CODE, "    options:"),
        (CODE, "        show_root_heading: true"),
        (MARKUP, "!!! note"),
        (PROSE, "    Admonitions hold prose that is wrapped."),
        (TABLE, "| key | value |"),
        (MARKUP, "|-----|-------|"),
        (TABLE, "| a   | 1     |"),
        (MARKUP, "<div class='x'>"),
        (MARKUP, "[docs]: https://example.org/docs"),
    ]


def test_in_a_dialogue_each_turn_is_a_paragraph_and_its_continuation_lines_join_it() -> None:
    chat = "Anna: Lunch on Friday?\nBen: Yes, at the harbour.\nIt is near the\nriver.\nAnna: Booked."
    assert (
        join_paragraphs(chat)
        == "Anna: Lunch on Friday?\nBen: Yes, at the harbour. It is near the river.\nAnna: Booked."
    )
    # One "Note:" line does not make a dialogue: the paragraph is joined.
    assert join_paragraphs("Note: the proxy\nretries twice.") == "Note: the proxy retries twice."


@pytest.mark.parametrize(
    "text",
    [
        "A wrapped\nparagraph.\n\n- item\n  wrapped\n\n```\ncode\n```\n",
        "Title\n=====\n\n.. code-block:: python\n\n   x = 1\n\nText::\n\n    literal\n\nEnd\nhere.",
        "Anna: hi\nBen: a message\nover lines\n",
        "---\na: b\n---\n\n    indented\n\n| t |\n|---|\n",
    ],
)
def test_joining_a_joined_text_changes_nothing(text: str) -> None:
    once = join_paragraphs(text)
    assert join_paragraphs(once) == once
    assert line_kinds(once) == line_kinds(text)


def test_a_passage_loses_the_title_lines_that_repeat_its_title() -> None:
    assert item_body("# Atlas\nAtlas is a\nrouting service.", "Atlas") == "Atlas is a routing service."
    assert item_body("Atlas\n=====\n\nAtlas is a\nservice.", "atlas") == "Atlas is a service."
    assert item_body("=====\nAtlas\n=====\n\nAtlas is a\nservice.", "Atlas") == "Atlas is a service."
    assert item_body("Atlas\nAtlas is a\nservice.", "Atlas") == "Atlas is a service."
    assert item_body("# Atlas", "Atlas") == "# Atlas"  # (nothing else to show)
    assert item_body("Atlas is a\nservice.", "Other") == "Atlas is a service."


def test_chunks_that_do_not_meet_are_separate_paragraphs() -> None:
    def chunk(i: int, text: str) -> Result:
        return Result(Document(f"p#{i}", text, {"parent_id": "p", "chunk_index": i}), 1.0 - i / 10, {})

    items, _ = items_from_results(
        [chunk(0, "The first part of the\npage ends"), chunk(3, "here a later\npart begins.")]
    )
    assert items[0].text == "The first part of the page ends\n\nhere a later part begins."


def test_evidence_gives_a_wrapped_message_its_speaker() -> None:
    chat = "Anna: Where is the report?\nBen: I put it in the shared folder.\nThe budget table is on\npage four."
    results = [Result(Document("c", chat, {}), 1.0, {})]
    context = build_context("Where is the budget table?", results, budget=60, format="evidence")
    assert "Ben: The budget table is on page four." in context.text  # (Ben's words, as a whole sentence)


_PIECES = [
    "",
    "prose that is",
    "  wrapped, indented",
    "    code = 1",
    "- item",
    "1. step",
    "#. auto",
    "# Heading",
    "Title",
    "=====",
    "-----",
    "```",
    "~~~",
    ".. note::",
    ".. code-block:: py",
    "   body",
    "Example::",
    "| a | b |",
    "|---|---|",
    "+--+--+",
    "=== ===",
    "> quote",
    "<div>",
    "[x]: https://example.org",
    ":field: value",
    ":flag:",
    "Anna: hi",
    "Ben: hello",
    "---",
    "::: module",
    "!!! note",
    "\tcode",
    "A sentence ends.",
    " " * 300 + "x",
    "|-|" + " " * 300 + "x",
]


@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=14))
@settings(max_examples=300, deadline=None)
def test_joining_keeps_every_word_and_is_idempotent(pieces: list[str]) -> None:
    text = "\n".join(pieces)
    joined = join_paragraphs(text)
    assert re.sub(r"[\s>]", "", joined) == re.sub(r"[\s>]", "", text)  # (only blanks and quote marks go)
    assert join_paragraphs(joined) == joined
    assert line_kinds(joined) == line_kinds(text)


def test_long_lines_of_blanks_and_rules_are_read_in_linear_time() -> None:
    # (Two runs of blanks meeting in one pattern made such a line quadratic: minutes, not milliseconds.
    # The suite's timeout catches a relapse; nothing here measures time.)
    for line in (" " * 200_000 + "x", "|-|" + " " * 200_000 + "x", "\t" * 200_000 + "-", "=" * 200_000 + " x"):
        assert join_paragraphs(f"{line}\nnext") in (f"{line} next", f"{line}\nnext")


def test_a_passage_cut_from_inside_a_code_block_reads_its_prose() -> None:
    # A chunk that starts in the middle of a fenced block: its first fence closes it.
    chunk = "    return x\n```\n\nProse after the\nblock wraps.\n\n### Next\n\n```python\nz = 1\n```"
    assert _lines(chunk) == [
        (CODE, "    return x"),
        (MARKUP, "```"),
        (PROSE, "Prose after the block wraps."),
        (HEADING, "### Next"),
        (MARKUP, "```python"),
        (CODE, "z = 1"),
        (MARKUP, "```"),
    ]
    # One that ends inside one keeps the rest as code.
    assert _lines("Prose that\nwraps.\n\n```python\nx = 1")[-1] == (CODE, "x = 1")
    # One that starts inside an indented block.
    assert _lines("    x = 1\n    y = 2\n\nProse\nwraps.")[:2] == [(CODE, "    x = 1"), (CODE, "    y = 2")]

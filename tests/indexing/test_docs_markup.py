"""Markup of documentation tools (MkDocs / Material, Docusaurus, MyST, HTML) stays out of what is indexed."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphfuse.indexing import read_sources
from graphfuse.indexing._markup import clean_markup, clean_title


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        # MkDocs attribute lists, in headings and after images/links
        ("# Background Tasks { #background-tasks }\n\nText.\n", "# Background Tasks\n\nText.\n"),
        ("## Setup {: #setup .wide }\n", "## Setup\n"),
        ('![logo](logo.png){ width="300" }\n', "![logo](logo.png)\n"),
        # autorefs anchors: an empty link with an attribute list is left out whole
        ("Intro.\n\n[](){#int}\n\n### Integers\n", "Intro.\n\n### Integers\n"),
        ("See [](){ #strict-mode } here.\n", "See here.\n"),
        # Python-Markdown / Material admonitions: the title and content stay, the markers go
        (
            '!!! tip "Use it well"\n    The content is prose.\n\nAfter.\n',
            "Use it well\n\nThe content is prose.\n\nAfter.\n",
        ),
        ("??? note\n    Collapsed text.\n", "Collapsed text.\n"),
        ('???+ warning "Open"\n    Shown.\n', "Open\n\nShown.\n"),
        # Material content tabs
        ('=== "Python 3.10+"\n\n    ```python\n    x = 1\n    ```\n', "Python 3.10+\n\n```python\nx = 1\n```\n"),
        # PyMdown blocks, options included
        ("/// tip | Careful\n    type: warning\n\nDo not block.\n///\n", "Careful\n\nDo not block.\n"),
        ("/// info\n\nInfo text.\n\n///\n", "Info text.\n"),
        # mkdocstrings with its options
        ("Intro.\n\n::: fastapi.BackgroundTasks\n    options:\n      members: true\n\nMore.\n", "Intro.\n\nMore.\n"),
        # Docusaurus and MyST admonitions
        (":::note Title here\nDocusaurus content.\n:::\n", "Title here\n\nDocusaurus content.\n"),
        (":::tip[Tabs]\nText.\n:::\n", "Tabs\n\nText.\n"),
        (":::{note}\n:class: tip\nMyST content.\n:::\n", "MyST content.\n"),
        ("```{warning}\nFenced directive content.\n```\n", "Fenced directive content.\n"),
        # snippet includes, FastAPI's includes, template statements
        ('Before.\n\n--8<-- "includes/abbr.md"\n\nAfter.\n', "Before.\n\nAfter.\n"),
        ("Before.\n--8<--\na.md\nb.md\n--8<--\nAfter.\n", "Before.\nAfter.\n"),
        ("{* ../../docs_src/app/tutorial001.py hl[6] *}\nText.\n", "Text.\n"),
        ('{% include "x.md" %}\nText.\n', "Text.\n"),
        # HTML comments, tags, elements that are not text, entities, icons
        ("Kept.<!-- a comment\nover lines -->\n", "Kept.\n"),
        ('<p align="center"><em>Fast</em> &amp; <abbr title="x">ASGI</abbr></p>\n', "Fast & ASGI\n"),
        ("<style>\nh1 { display: none; }\n</style>\nText.\n", "Text.\n"),
        ("Done :material-check: here.\n", "Done  here.\n"),
        # diagrams
        ("Flow:\n\n```mermaid\ngraph TD; A-->B;\n```\n\nEnd.\n", "Flow:\n\nEnd.\n"),
        ("~~~plantuml\n@startuml\n~~~\nEnd.\n", "End.\n"),
    ],
)
def test_markup_is_left_out_and_prose_kept(markdown: str, expected: str) -> None:
    assert clean_markup(markdown) == expected


def test_code_stays_code() -> None:
    markdown = (
        "Use `<div>` and `{ #id }` and `app.dependency_overrides`.\n\n"
        '```python\nx = {"a": 1}  # <b>kept</b> { #kept }\n!!! note\n::: not.mkdocstrings\n<!-- kept -->\n```\n'
    )
    assert clean_markup(markdown) == markdown


@pytest.mark.parametrize(
    "plain",
    [
        "# Title\n\nA paragraph.\n\n- a list\n- of items\n",
        "Setext\n===\n\nText with a | table | row |\n",
        "Two\n\n\n\nblank runs stay in code:\n\n```\na\n\n\n\nb\n```\n",
        "No newline at the end",
        "a < b and c > d; {braces} and ::: inside a line\n",
    ],
)
def test_markdown_without_tool_markup_is_unchanged(plain: str) -> None:
    assert clean_markup(plain) == plain


def test_nested_blocks_are_unwrapped() -> None:
    markdown = (
        '!!! note "Outer"\n    Outer text.\n\n    !!! warning\n        Inner text.\n\n    ```py\n    code()\n    ```\n'
    )
    assert clean_markup(markdown) == "Outer\n\nOuter text.\n\nInner text.\n\n```py\ncode()\n```\n"


def test_titles_have_no_markup() -> None:
    assert clean_title("Background Tasks { #background-tasks }") == "Background Tasks"
    assert clean_title("<code>Model</code> config { data-toc-label='Config' }") == "Model config"


def test_read_sources_titles_text_and_raw_markdown(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    page = (
        "# Background Tasks { #background-tasks }\n\n"
        "Run work after the response.<!-- TODO -->\n\n"
        "/// tip | Use it well\n\nBackground tasks run in the same process.\n\n///\n\n"
        "::: fastapi.BackgroundTasks\n\n"
        "```mermaid\ngraph TD; A-->B;\n```\n\n"
        "```python\ntasks.add_task(write_log)\n```\n"
    )
    (docs / "tasks.md").write_text(page)
    (docs / "titled.md").write_text('---\ntitle: "Settings { #settings }"\n---\nText.\n')
    (record,) = [r for r in read_sources([docs]) if r.id == "tasks.md"]
    assert record.title == "Background Tasks"
    assert record.text == (
        "# Background Tasks\n\nRun work after the response.\n\nUse it well\n\n"
        "Background tasks run in the same process.\n\n```python\ntasks.add_task(write_log)\n```\n"
    )
    titled = {r.id: r for r in read_sources([docs])}["titled.md"]
    assert titled.title == "Settings"
    raw = {r.id: r for r in read_sources([docs], raw_markdown=True)}
    assert raw["tasks.md"].text == page  # as written
    assert raw["tasks.md"].title == "Background Tasks"  # a title never keeps markup


def test_links_in_comments_and_diagrams_are_not_links(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(
        '# A\n\nSee [b](b.md).\n\n<!-- [old](c.md) -->\n\n```mermaid\nclick X "[c](c.md)"\n```\n'
    )
    (tmp_path / "b.md").write_text("# B\n\nBee.\n")
    (tmp_path / "c.md").write_text("# C\n\nSea.\n")
    records = {r.id: r for r in read_sources([tmp_path])}
    assert records["a.md"].links == ("b.md",)

"""reStructuredText folders (Sphinx), page titles for every format, and files skipped for their type."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphfuse import InvalidInput
from graphfuse.cli import app
from graphfuse.indexing import SourceRecord, read_sources, records_from_loaded
from graphfuse.indexing._titles import file_title, heading_title, qualified_titles

runner = CliRunner()

SPHINX = {
    "conf.py": 'project = "Demo"\nextensions = ["sphinx.ext.autodoc"]\n',
    "index.rst": """\
.. _home:

Welcome to Demo
===============

.. toctree::
   :maxdepth: 2
   :caption: Contents:

   quickstart
   deploying/index
   The API <api>

Read :doc:`quickstart` first, then :ref:`nginx-setup`.

.. note:: A note with ``code`` in it.
""",
    "quickstart.rst": """\
.. _quick:

==========
Quickstart
==========

Install it as `the API page <api.html>`_ says, or see `the site <https://example.org/>`_.

.. code-block:: python
   :caption: app.py
   :emphasize-lines: 2

   # etc.
   app = Demo(__name__)

Use :class:`~demo.app.Demo` and :func:`demo.url_for` with :unknownrole:`some text`.

.. versionadded:: 2.0
   Apps can be nested.

.. some-extension-directive:: an argument
   :any-option: 1

   Content of an unknown directive.

.. mermaid::

   graph TD; A-->B

.. include:: snippets/shared.rst
""",
    "snippets/shared.rst": "Shared text\n-----------\n\nIncluded in other pages.\n",
    "deploying/index.rst": "Deploying\n=========\n\n.. toctree::\n   :glob:\n\n   *\n",
    "deploying/nginx.rst": """\
.. _nginx-setup:

Behind nginx
------------

Start from :doc:`/quickstart` and :ref:`the quick page <quick>`; an :ref:`unknown-label` stays text.

Term
   Its definition.
""",
    "api.rst": "API\n===\n\n.. module:: demo\n\n.. autoclass:: demo.Demo\n   :members:\n\nThe public API.\n",
    "_static/logo.png": "\x89PNG not really",
    "_templates/layout.html": "<html></html>",
    "_build/text/index.txt": "Welcome to Demo\n***************\n",
}


def _folder(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def sphinx(tmp_path: Path) -> Path:
    return _folder(tmp_path / "docs", SPHINX)


def test_a_sphinx_folder_reads_with_titles_links_and_readable_text(sphinx: Path) -> None:
    unsupported: list[str] = []
    records = {r.id: r for r in read_sources([sphinx], on_unsupported=unsupported.append)}
    # conf.py is not read for its type; _build, _static and _templates are no pages.
    assert sorted(records) == [
        "api.rst",
        "deploying/index.rst",
        "deploying/nginx.rst",
        "index.rst",
        "quickstart.rst",
        "snippets/shared.rst",
    ]
    assert [Path(p).name for p in unsupported] == ["conf.py"]
    titles = {i: r.title for i, r in records.items()}
    assert titles == {
        "api.rst": "API",
        "deploying/index.rst": "Deploying",
        "deploying/nginx.rst": "Behind nginx",
        "index.rst": "Welcome to Demo",
        "quickstart.rst": "Quickstart",
        "snippets/shared.rst": "Shared text",
    }
    # toctree entries (with a title, and a glob), :doc:, :ref: through the labels, include, a link to a built page
    assert records["index.rst"].links == ("quickstart.rst", "deploying/index.rst", "api.rst", "deploying/nginx.rst")
    assert records["deploying/index.rst"].links == ("deploying/nginx.rst",)
    assert records["deploying/nginx.rst"].links == ("quickstart.rst",)
    assert records["quickstart.rst"].links == ("api.rst", "snippets/shared.rst")

    quick = records["quickstart.rst"].text
    assert quick.startswith("# Quickstart\n")
    assert "```python\n# etc.\napp = Demo(__name__)\n```" in quick  # code stays code
    assert "Use `Demo` and `demo.url_for` with some text." in quick
    assert "Added in version 2.0. " in quick
    assert "Apps can be nested." in quick
    assert "Content of an unknown directive." in quick
    assert "Install it as the API page says, or see the site." in quick
    for leftover in ("graph TD", "caption", "emphasize", ":class:", "unknownrole", "ERROR", "Unknown", "include::"):
        assert leftover not in quick
    index = records["index.rst"].text
    # toctree entries shown by their pages' titles; a reference without text by its target's title
    assert "- Quickstart\n- Deploying\n- The API" in index
    assert "Read Quickstart first, then Behind nginx." in index
    nginx = records["deploying/nginx.rst"].text
    assert "Start from Quickstart and the quick page; an unknown-label stays text." in nginx
    assert "Term: Its definition." in nginx
    assert "`demo.Demo`" in records["api.rst"].text
    assert records["deploying/index.rst"].text == "# Deploying\n\n- Behind nginx\n"  # (a glob's pages)


def test_a_code_comment_is_never_a_title(tmp_path: Path) -> None:
    folder = _folder(
        tmp_path / "d",
        {
            "notitle.rst": "Some text first.\n\n.. code-block:: python\n\n   # etc.\n   x = 1\n",
            "guide/howto.txt": "A plain page.\n\n   # instead of\n   code = 1\n",
            "fenced.md": "Intro.\n\n```python\n# not a title\n```\n\nSetext later\n------------\n",
        },
    )
    titles = {r.id: r.title for r in read_sources([folder])}
    assert titles == {"notitle.rst": "notitle", "guide/howto.txt": "howto", "fenced.md": "Setext later"}


def test_a_broken_page_reads_without_error_text(tmp_path: Path) -> None:
    page = tmp_path / "broken.rst"
    page.write_text(
        "Title\n=====\n\n.. image::\n\n:bad:`x\n\n+---+\n| a |\n\nText *unclosed.\n\n.. raw:: html\n\n   <b>x</b>\n",
        encoding="utf-8",
    )
    [record] = read_sources([page])
    assert record.title == "Title"
    assert "ERROR" not in record.text
    assert "Error" not in record.text
    assert "<b>" not in record.text
    assert "Text *unclosed." in record.text


def test_a_page_of_markup_only_is_skipped(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "d", {"a.rst": ".. index:: x\n\n.. highlight:: python\n", "b.rst": "Text.\n"})
    skipped: list[tuple[str, str]] = []
    assert [r.id for r in read_sources([folder], on_skip=lambda p, why: skipped.append((Path(p).name, why)))] == [
        "b.rst"
    ]
    assert skipped == [("a.rst", "the file has no text besides its markup")]


@pytest.mark.parametrize(
    ("text", "plain", "title"),
    [
        ("# Atlas\n\n## Part\n", False, "Atlas"),
        ("Atlas\n=====\n\nText.\n", False, "Atlas"),
        ("Atlas\n-----\n\nText.\n", False, "Atlas"),
        ("```\n# comment\n```\n\n# Real\n", False, "Real"),
        ("Text.\n\n    # indented code\n\n# Real\n", False, "Real"),
        ("~~~~\n# comment\n~~~~\n", False, None),
        ("Just text.\n", False, None),
        # Plain text: headings at the margin, reStructuredText adornments
        ("Welcome\n*******\n\nText.\n", True, "Welcome"),
        ("=========\n Welcome\n=========\n\nText.\n", True, "Welcome"),
        ("Text.\n\n   # etc.\n   x = 1\n", True, None),
        ("# Notes\n\ntext\n", True, "Notes"),
        ("Short\n==\n", True, None),  # (an underline shorter than the title is no adornment)
    ],
)
def test_heading_title(text: str, plain: bool, title: str | None) -> None:
    assert heading_title(text, plain=plain) == title


@pytest.mark.parametrize(
    ("path", "title"),
    [
        ("deploying/nginx.rst", "nginx"),
        ("people/Jonas Berg.md", "Jonas Berg"),
        ("api/index.md", "api"),
        ("index.rst", "index"),
        ("quick_start-guide.txt", "quick start guide"),
        ("a/b/README.md", "b"),
    ],
)
def test_file_title(path: str, title: str) -> None:
    assert file_title(path) == title


def test_a_title_several_pages_share_is_qualified_by_their_folders(tmp_path: Path) -> None:
    shared = {"api/overview.md": "Overview", "guide/o.md": "overview", "x.md": "Overview!", "y": "Y"}
    assert qualified_titles(shared) == {
        "api/overview.md": "Api: Overview",
        "guide/o.md": "Guide: overview",
        "x.md": "Overview!",
        "y": "Y",
    }
    folder = _folder(
        tmp_path / "d",
        {
            "api/index.rst": "Overview\n========\n\nThe API. See the Overview of the guide.\n",
            "guide/index.md": "# Overview\n\nThe guide.\n",
            "other.md": "# Other\n\nThe Overview pages.\n",
        },
    )
    titles = {r.id: r.title for r in read_sources([folder])}
    assert titles == {"api/index.rst": "Api: Overview", "guide/index.md": "Guide: Overview", "other.md": "Other"}


def test_loaded_rst_and_text_read_as_the_files_are(sphinx: Path) -> None:
    files = sorted(p for p in sphinx.rglob("*") if p.suffix in (".rst", ".txt") and "_build" not in p.parts)
    loaded = records_from_loaded(
        [(str(p), p.read_text(encoding="utf-8"), {"file_path": str(p)}) for p in files], path_key="file_path"
    )
    by_rel = {Path(r.id).relative_to(sphinx).as_posix(): r for r in loaded}
    read = {r.id: r for r in read_sources([sphinx])}
    assert sorted(by_rel) == sorted(read)
    for rel, record in read.items():
        other = by_rel[rel]
        assert (other.title, other.text) == (record.title, record.text), rel
        assert [Path(x).relative_to(sphinx).as_posix() for x in other.links] == list(record.links), rel


def test_loaded_documents_that_are_not_text_are_skipped_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    png = (tmp_path / "logo.png").as_posix()
    blob = (tmp_path / "data.bin").as_posix()
    documents = [
        (png, "\x89PNG\r\n\x1a\n\x00\x00\rIHDR", {"file_path": png}),
        (blob, "\x01\x02\x03\x04\x05\x06 binary \x07\x08", {"file_path": blob}),
        ("a.txt", "Plain words.", {"file_path": (tmp_path / "a.txt").as_posix()}),
        ("pic.jpg", "", {"file_path": (tmp_path / "pic.jpg").as_posix()}),  # (an image document without text)
    ]
    with caplog.at_level(logging.WARNING, logger="graphfuse.indexing"):
        records = records_from_loaded(documents, path_key="file_path")
    assert [r.id for r in records] == ["a.txt"]
    warnings = [r.getMessage() for r in caplog.records if r.name == "graphfuse.indexing"]
    assert len(warnings) == 1
    assert "3 loaded document(s) that are not text" in warnings[0]
    assert all(name in warnings[0] for name in (png, blob, "pic.jpg"))
    skipped: list[tuple[str, str]] = []
    records_from_loaded(documents, path_key="file_path", on_skip=lambda i, why: skipped.append((i, why)))
    assert [i for i, _ in skipped] == [png, blob, "pic.jpg"]


def test_index_names_the_file_types_it_skipped(tmp_path: Path, sphinx: Path) -> None:
    result = runner.invoke(app, ["index", str(sphinx), "--store", str(tmp_path / "s"), "--embedder", "hashing"])
    assert result.exit_code == 0, result.output
    assert "indexed 6 documents" in result.output
    assert "skipped 1 file (1 .py) of types graphfuse index does not read" in result.output


def test_index_of_nothing_it_reads_fails_and_says_why(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "d", {"a.png": "x", "b.png": "y", "conf.py": "z = 1\n", "notes.docx": "w"})
    store = tmp_path / "s"
    result = runner.invoke(app, ["index", str(folder), "--store", str(store), "--embedder", "hashing"])
    assert result.exit_code == 1
    assert "no document to index" in result.output
    assert "its 4 files (2 .png, 1 .docx, 1 .py) are of types graphfuse index does not read" in result.output
    assert not store.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(app, ["index", str(empty), "--store", str(store), "--embedder", "hashing"])
    assert result.exit_code == 1
    assert "no .txt, .md, .rst and .jsonl file with text" in result.output


def test_records_are_source_records(sphinx: Path) -> None:
    assert all(isinstance(r, SourceRecord) for r in read_sources([sphinx]))


def test_docutils_lookups_are_restored_after_a_page(tmp_path: Path) -> None:
    from docutils.parsers.rst import directives, roles

    before = (directives.directive, roles.role)
    page = tmp_path / "a.rst"
    page.write_text("A\n=\n\n.. unknown-thing:: x\n\n:unknown:`y` and :doc:`b`\n", encoding="utf-8")
    [record] = read_sources([page])
    assert record.text == "# A\n\nx\n\ny and b\n"
    assert (directives.directive, roles.role) == before


def test_directives_read_by_what_they_hold(tmp_path: Path) -> None:
    page = tmp_path / "a.rst"
    page.write_text(
        "A\n=\n\n.. only:: html\n\n   Shown text.\n\n.. tabs::\n\n   .. code-tab:: python\n\n      # c\n      x = 1\n\n"
        ".. py:function:: connect(url, timeout=5)\n\n   Opens a connection.\n\n"
        ".. glossary::\n\n   WSGI\n      A protocol.\n",
        encoding="utf-8",
    )
    [record] = read_sources([page])
    assert record.text == (
        "# A\n\nShown text.\n\n```python\n# c\nx = 1\n```\n\n`connect(url, timeout=5)`\n\nOpens a connection.\n\n"
        "WSGI: A protocol.\n"
    )


def test_a_jsonl_file_named_on_its_own_streams(tmp_path: Path) -> None:
    lines = tmp_path / "big.jsonl"
    lines.write_text('{"id": "a", "text": "fine"}\n{"id": "b"}\n', encoding="utf-8")
    records = read_sources([lines])
    assert next(records).id == "a"  # (before the bad line is read)
    with pytest.raises(InvalidInput, match=r"big\.jsonl:2"):
        next(records)


def test_a_page_docutils_cannot_read_is_skipped_and_named(tmp_path: Path) -> None:
    folder = _folder(
        tmp_path / "d",
        {"deep.rst": "- " * 300 + "deep\n", "long.rst": "T\n=\n\n" + "x" * 20000 + "\n", "ok.rst": "Fine.\n"},
    )
    skipped: list[tuple[str, str]] = []
    records = list(read_sources([folder], on_skip=lambda p, why: skipped.append((Path(p).name, why))))
    assert [r.id for r in records] == ["ok.rst"]
    assert skipped == [
        ("deep.rst", "reStructuredText nested too deeply for docutils to read"),
        ("long.rst", "a line longer than docutils reads (10,000 characters)"),
    ]
    with pytest.raises(InvalidInput, match=r"long\.rst: a line longer than docutils reads"):
        list(read_sources([folder / "long.rst"]))
    loaded = [(str(p), p.read_text(encoding="utf-8"), {"file_path": str(p)}) for p in sorted(folder.iterdir())]
    why: list[str] = []
    out = records_from_loaded(loaded, path_key="file_path", on_skip=lambda i, w: why.append(w))
    assert [Path(r.id).name for r in out] == ["ok.rst"]
    assert len(why) == 2


def test_links_reach_markdown_pages_and_loaded_build_output_is_no_page(tmp_path: Path) -> None:
    folder = _folder(
        tmp_path / "d",
        {
            "conf.py": "project = 'x'\n",
            "index.rst": "Home\n====\n\n.. toctree::\n\n   guide\n\nSee :doc:`guide`.\n",
            "guide.md": "# Guide\n\nWritten in MyST.\n",
            "_build/text/index.txt": "Home\n****\n",
        },
    )
    records = {r.id: r for r in read_sources([folder])}
    assert records["index.rst"].links == ("guide.md",)
    assert records["index.rst"].text == "# Home\n\n- guide\n\nSee guide.\n"  # (shown by its file name)
    files = [p for p in sorted(folder.rglob("*")) if p.is_file()]
    skipped: list[tuple[str, str]] = []
    loaded = records_from_loaded(
        [(p.relative_to(folder).as_posix(), p.read_text(encoding="utf-8"), {"file_path": str(p)}) for p in files],
        path_key="file_path",
        on_skip=lambda i, why: skipped.append((i, why)),
    )
    assert sorted(r.id for r in loaded) == ["guide.md", "index.rst"]
    assert sorted(skipped) == [
        ("_build/text/index.txt", "in a Sphinx folder's _build, not a page"),
        ("conf.py", "Sphinx's configuration, not a page"),
    ]
    assert {r.id: r.links for r in loaded}["index.rst"] == ("guide.md",)


def test_a_loaded_document_of_another_type_is_not_titled_by_its_file(tmp_path: Path) -> None:
    pdf = (tmp_path / "report.pdf").as_posix()
    [record] = records_from_loaded([(pdf, "Results\n=======\n\nNumbers.", {"file_path": pdf})], path_key="file_path")
    assert record.title is None  # (a PDF reader's page: neither its lines nor its file name)


def test_text_files_that_mimetypes_calls_media_are_kept(tmp_path: Path) -> None:
    ts, svg = (tmp_path / "app.ts").as_posix(), (tmp_path / "logo.svg").as_posix()
    records = records_from_loaded(
        [(ts, "export const x = 1;", {"file_path": ts}), (svg, "<svg xmlns='...'></svg>", {"file_path": svg})],
        path_key="file_path",
        on_skip=lambda i, why: None,
    )
    assert [r.id for r in records] == [ts]  # (TypeScript is text; an SVG is a picture)

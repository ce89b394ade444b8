"""Prose rules for the whole tree: state the rule, and keep module docstrings short.

A reader has the code and the docs, not the project's tracker nor the documents it was specified
from, so code, tests, benchmarks and docs say what holds and why instead of citing a numbered
issue or source document. A module docstring is a summary line, a paragraph and a pointer to its
docs page: guides, tables and measurements live in ``docs/`` (measurements in
``docs/benchmarks.md`` and the results files), where the docs tests run them.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Where the project's own prose lives. CHANGELOG.md is the release history and keeps its references.
TREES = ("src", "plugins", "integrations", "tests", "benchmarks", "docs", "examples")
SKIP_PARTS = {".venv", "node_modules", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", "site"}
SUFFIXES = {".py", ".md", ".toml", ".yml", ".yaml"}

# "issue 12", "issues 10", "issue #3", "defect 5", "document 003", "doc 002": a number the reader cannot look up.
CITATION = re.compile(r"\b(?:issues?\s+#?\d+|defects?\s+\d+|(?:documents?|docs?)\s+0\d\d\b)", re.IGNORECASE)
# A summary line, a paragraph of about eight lines, a pointer to the docs.
MAX_MODULE_DOCSTRING_LINES = 12


def _files(trees: tuple[str, ...], suffixes: set[str]) -> list[Path]:
    found = [ROOT / name for name in ("README.md", "CONTRIBUTING.md", "Makefile", "mkdocs.yml", "pyproject.toml")]
    for tree in trees:
        found.extend(
            path
            for path in sorted((ROOT / tree).rglob("*"))
            if path.suffix in suffixes and path.is_file() and not SKIP_PARTS.intersection(path.relative_to(ROOT).parts)
        )
    return [path for path in found if path.is_file() and (path.suffix in suffixes or path.name == "Makefile")]


def _citations(text: str) -> list[tuple[int, str]]:
    return [(text.count("\n", 0, m.start()) + 1, m.group(0)) for m in CITATION.finditer(text)]


def test_the_citation_pattern_finds_numbers_readers_cannot_look_up() -> None:
    text = "x\n# see issue 12\nas Issue #3 says; defect 5 of document 003 and doc 002\n"
    assert _citations(text) == [(2, "issue 12"), (3, "Issue #3"), (3, "defect 5"), (3, "document 003"), (3, "doc 002")]
    # Rules, counts and links are not citations.
    assert _citations("2 issues found; 003 documents; docs/benchmarks.md; github.com/o/r/issues/7; 10 docs") == []


def test_code_tests_and_docs_state_the_rule_instead_of_citing_issues_or_documents() -> None:
    files = [path for path in _files(TREES, SUFFIXES) if path != Path(__file__).resolve()]  # this file holds examples
    assert len(files) > 100, "the tree was not found"
    cited = [
        f"{path.relative_to(ROOT)}:{line}: {found!r}"
        for path in files
        for line, found in _citations(path.read_text(encoding="utf-8", errors="replace"))
    ]
    assert cited == [], "say what holds instead of citing a number readers do not have:\n" + "\n".join(cited)


def _module_docstring(source: str) -> str | None:
    return ast.get_docstring(ast.parse(source), clean=False)


@pytest.mark.parametrize(
    ("docstring", "fits"),
    [("Summary.\n\nA paragraph\nof two lines.\n", True), ("Summary.\n" + "line\n" * MAX_MODULE_DOCSTRING_LINES, False)],
)
def test_the_docstring_limit_counts_lines(docstring: str, fits: bool) -> None:
    text = _module_docstring(f'"""{docstring}"""\n')
    assert text is not None
    assert (len(text.strip().splitlines()) <= MAX_MODULE_DOCSTRING_LINES) is fits


@pytest.mark.slow
def test_module_docstrings_are_a_paragraph_and_a_pointer() -> None:
    sources = _files(("src", "plugins", "integrations"), {".py"})
    libraries = [path for path in sources if "src" in path.relative_to(ROOT).parts]
    assert len(libraries) > 100, "the library sources were not found"
    long = []
    for path in libraries:
        text = _module_docstring(path.read_text(encoding="utf-8"))
        lines = len(text.strip().splitlines()) if text else 0
        if lines > MAX_MODULE_DOCSTRING_LINES:
            long.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert long == [], (
        f"module docstrings over {MAX_MODULE_DOCSTRING_LINES} lines (move guides, tables and figures to docs/):\n"
        + "\n".join(long)
    )

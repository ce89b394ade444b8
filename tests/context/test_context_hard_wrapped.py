"""Contexts read sentences, not lines: a hard-wrapped corpus through every context format, over a real store.

The corpus is written here: Markdown pages and reStructuredText-like ``.txt`` pages whose
paragraphs are wrapped at 48 columns, with headings, underlined titles, lists, code blocks,
directives and tables around them. It is indexed by ``graphfuse index`` into a store, and
``graphfuse context`` assembles every format for several questions. No sentence may be cut
where its paragraph was wrapped, and no markup may become an entity's description.
"""

from __future__ import annotations

import itertools
import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from graphfuse.cli import app

runner = CliRunner()
WIDTH = 48

# Each page: its paragraphs, each a list of sentences (words rarely shared between sentences, so a
# pair of words names one place in the corpus).
PROSE: dict[str, list[list[str]]] = {
    "routing": [
        [
            "The Harbor proxy forwards each incoming request to the upstream service owning its path prefix.",
            "Proxies may rewrite request headers before they reach Lantern, keeping tracing identifiers intact.",
        ],
        ["Retries are handled by Harbor itself, with a budget of three attempts and jittered exponential backoff."],
    ],
    "lantern": [
        ["The Lantern service stores session tokens in an encrypted vault and rotates signing keys every ninety days."],
        ["Lantern answers token lookups from Harbor within milliseconds since verified tokens stay in memory."],
    ],
    "web-security": [
        ["Web security here relies on strict transport policies, signed cookies and no inline scripts."],
        ["Cookies marked secure are never sent over plain connections by modern browsers, whatever the page asks."],
    ],
    "nginx": [
        ["Nginx terminates TLS connections for Harbor and forwards decrypted traffic across the private network."],
        ["Certificates are renewed by a nightly job that reloads Nginx gracefully once the new chain validates."],
    ],
    "billing": [
        ["The Ledger billing engine invoices tenants monthly, prorating upgrades to the exact minute of the change."],
        ["Refunds issued by Ledger settle within five business days and appear as negative line items on invoices."],
    ],
}
# The sentence that must describe each page in the graph context (its first sentence of prose).
SUBJECTS = {name: paragraphs[0][0] for name, paragraphs in PROSE.items()}


def _wrap(sentences: list[str], indent: str = "") -> str:
    return textwrap.fill(" ".join(sentences), WIDTH, initial_indent=indent, subsequent_indent=indent)


def _pages() -> dict[str, str]:
    p = {name: [_wrap(para) for para in paragraphs] for name, paragraphs in PROSE.items()}
    return {
        # Markdown: an ATX title, a wrapped list item, a fence.
        "routing.md": (
            f"# Routing\n\n{p['routing'][0]}\n\n"
            "- Timeouts default to thirty seconds for every upstream\n  and can be tuned per route.\n"
            "- Health checks run every five seconds.\n\n"
            f"```nginx\nserver {{\n    listen 80;\n}}\n```\n\n{p['routing'][1]}\n"
        ),
        # Markdown: a setext title, front matter before it, a table.
        "lantern.md": (
            "---\nowner: identity team\n---\n\nLantern\n=======\n\n"
            f"{p['lantern'][0]}\n\n| key | rotation |\n|-----|----------|\n| signing | 90 days |\n\n{p['lantern'][1]}\n"
        ),
        # reStructuredText in a .txt: an over- and underlined title, a note.
        "web-security.txt": (
            f"============\nWeb security\n============\n\n{p['web-security'][0]}\n\n"
            f".. note::\n\n{_wrap(PROSE['web-security'][1], '   ')}\n"
        ),
        # reStructuredText in a .txt: a code block before any prose, a grid table.
        "nginx.txt": (
            ".. code-block:: nginx\n\n   server {\n       listen 443 ssl;\n   }\n\n"
            f"{p['nginx'][0]}\n\n+------+-----+\n| port | use |\n+======+=====+\n| 443  | TLS |\n+------+-----+\n\n"
            f"{p['nginx'][1]}\n"
        ),
        # reStructuredText in a .txt: a section title, a literal block after "::", a toctree.
        "billing.txt": (
            f"Billing\n-------\n\n{p['billing'][0]} Example::\n\n    ledger invoice --tenant acme\n\n"
            f"{p['billing'][1]}\n\n.. toctree::\n   :maxdepth: 1\n\n   refunds\n   taxes\n"
        ),
    }


QUESTIONS = [
    "How does the Harbor proxy retry requests, and where are session tokens kept?",
    "Which service terminates TLS and how are certificates renewed?",
    "How are cookies protected and what does web security forbid?",
    "When do Ledger refunds settle and how are upgrades prorated?",
]
FORMATS = ["passages", "evidence", "graph"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hard-wrapped")
    docs = root / "docs"
    docs.mkdir()
    for name, text in _pages().items():
        (docs / name).write_text(text, encoding="utf-8")
    store = root / "store"
    result = runner.invoke(app, ["index", str(docs), "--store", str(store), "--embedder", "hashing"])
    assert result.exit_code == 0, result.output
    assert "indexed 5 documents" in result.output
    return store


def _context(store: Path, question: str, fmt: str, budget: int = 400) -> dict[str, Any]:
    args = ["context", question, "--store", str(store), "--format", fmt, "--budget", str(budget), "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.output))


def _wrap_points() -> list[tuple[str, str]]:
    """``(the two words before, the two words after)`` each place a paragraph was wrapped inside a
    sentence, where each pair occurs once in the corpus."""
    corpus = " ".join(s for paragraphs in PROSE.values() for para in paragraphs for s in para)
    points = []
    for paragraphs in PROSE.values():
        for para in paragraphs:
            lines = textwrap.wrap(" ".join(para), WIDTH)
            for line, after in itertools.pairwise(lines):
                if line.endswith((".", "!", "?")):
                    continue  # (wrapped where a sentence ends: no sentence cut there)
                left, right = " ".join(line.split()[-2:]), " ".join(after.split()[:2])
                if corpus.count(left) == 1 and corpus.count(right) == 1:
                    points.append((left, right))
    return points


def test_the_corpus_is_wrapped_inside_sentences() -> None:
    assert len(_wrap_points()) >= 15
    assert all("\n" in _wrap(para) for paragraphs in PROSE.values() for para in paragraphs)


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_context_cuts_a_sentence_where_its_paragraph_was_wrapped(store: Path, fmt: str) -> None:
    points = _wrap_points()
    seen = 0
    for question in QUESTIONS:
        text = _context(store, question, fmt)["text"]
        for left, right in points:
            # Where a sentence's words before its wrap appear, the words after it follow on the same
            # line (or a cap clipped the sentence: an ellipsis); where the words after it appear, the
            # words before it precede them: no line, no sentence starts or ends at the wrap.
            for m in re.finditer(re.escape(left), text):
                seen += 1
                assert text[m.end() :].startswith((f" {right}", "\u2026")), (fmt, text[m.start() : m.end() + 40])
            for m in re.finditer(re.escape(right), text):
                seen += 1
                assert text[: m.start()].endswith(f"{left} "), (fmt, text[max(0, m.start() - 40) : m.end()])
    assert seen >= 5, f"{fmt}: too few wrapped sentences reached the contexts to check"


def test_entity_descriptions_are_prose_never_markup(store: Path) -> None:
    described: dict[str, str] = {}
    for question in QUESTIONS:
        text = _context(store, question, "graph", budget=800)["text"]
        for line in text.splitlines():
            m = re.match(r"- \[\d+\] (?P<name>[^:]+?)(?: \[\w+\])?: (?P<description>.*)$", line)
            if m is not None:
                described[m["name"]] = m["description"]
            relation = re.match(r"- .* -\[\w+\]-> .* \(\d\.\d\d\)(?: \| (?P<context>.*))?$", line)
            if relation is not None and relation["context"]:
                assert not re.search(r"::|```|^[=\-~^+|]|\.\. ", relation["context"]), line
    # (Titles as graphfuse index reads them: the page's own heading, else its file name made readable.)
    names = {"Routing": "routing", "Lantern": "lantern", "Web security": "web-security", "nginx": "nginx"}
    names["Billing"] = "billing"
    assert set(described) >= set(names), described
    for name, page in names.items():
        assert described[name] == SUBJECTS[page], (name, described[name])


def test_passages_keep_code_tables_and_lists_line_by_line(store: Path) -> None:
    text = _context(store, QUESTIONS[1], "passages", budget=1500)["text"]
    assert "   server {\n       listen 443 ssl;\n   }" in text
    assert "| port | use |\n+======+=====+\n| 443  | TLS |" in text
    routing = _context(store, QUESTIONS[0], "passages", budget=1500)["text"]
    assert "```nginx\nserver {\n    listen 80;\n}\n```" in routing
    assert "- Timeouts default to thirty seconds for every upstream and can be tuned per route.\n- Health" in routing

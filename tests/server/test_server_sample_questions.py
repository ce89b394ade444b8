"""The dashboard's sample questions come from page titles and headings, never from bare file names."""

from __future__ import annotations

from graphfuse import Document
from graphfuse.server import Scope
from graphfuse.server._samples import headings, store_questions
from graphfuse.stores import InMemoryGraphStore

RST = """\
==========
Public API
==========

Intro text.

Using the client
----------------

.. code-block:: python

   # not a heading
   x = 1
"""

MD = """\
Some words before any heading.

```
# a comment in a code block
```

## Reverse proxies

Text.
"""


def test_headings_of_markdown_and_rst_skip_code() -> None:
    assert headings(RST) == ["Public API", "Using the client"]
    assert headings(MD) == ["Reverse proxies"]
    assert headings("Title\n=====\n\nSection *two*\n-------------\n") == ["Title", "Section two"]
    assert headings("no heading\nat all") == []


async def test_questions_from_titles_and_headings_not_file_names() -> None:
    graph = InMemoryGraphStore()
    await graph.store_documents(
        [
            # The reader fell back on the file name: the page's own heading names it.
            Document("api.rst", RST, {"title": "api", "source": "docs/api.rst"}),
            Document("proxies.md", MD, {"title": "proxies", "source": "docs/proxies.md"}),
            # A readable file-name title ("Deploying: nginx") is still a file name.
            Document("deploying/nginx.md", "# Serving behind nginx\n\nText.", {"title": "Deploying: nginx"}),
            Document("guide.md", "# Guide\n\n## Install\n", {"title": "User guide", "source": "guide.md"}),
        ]
    )
    questions = await store_questions(graph, Scope(None))
    assert "What should I know about Public API?" in questions
    assert "What should I know about Reverse proxies?" in questions
    assert "What should I know about Serving behind nginx?" in questions
    assert "What should I know about User guide?" in questions
    assert "What does Public API say about Using the client?" in questions  # few pages: sections too
    assert not any(q.endswith(("about api?", "about proxies?", "about Deploying: nginx?")) for q in questions)


async def test_untitled_pages_without_headings_use_their_first_words() -> None:
    graph = InMemoryGraphStore()
    await graph.store_documents([Document("n1", "Meeting notes about the quarterly budget review", {})])
    assert await store_questions(graph, Scope(None)) == [
        "What does the page starting “Meeting notes about the quarterly budget review…” explain?"
    ]

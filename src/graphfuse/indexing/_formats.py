"""File types the readers tell by their names (no parser imported: reading a folder of markdown
does not load docutils)."""

from __future__ import annotations

__all__ = ["RST_SUFFIXES", "SPHINX_MACHINERY"]

RST_SUFFIXES = (".rst", ".rest")
"""reStructuredText pages."""

SPHINX_MACHINERY = frozenset({"_build", "_static", "_templates"})
"""Folders of a Sphinx source folder (the one holding ``conf.py``) that hold no pages: build
output, static files and HTML templates."""

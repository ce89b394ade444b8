"""``graphfuse index``'s bar moves per document: ``reading`` while records are read, then ``indexing``."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, ClassVar

import pytest
from rich.console import Console
from rich.progress import Progress

from graphfuse.cli import _index
from graphfuse.indexing import SourceRecord
from graphfuse.stores import aopen_store


class _Recording(Progress):
    steps: ClassVar[list[tuple[str, int]]] = []

    def update(self, task_id: Any, **fields: Any) -> None:
        super().update(task_id, **fields)
        task = self._tasks[task_id]
        _Recording.steps.append((task.description, int(task.completed)))


async def test_the_bar_reads_then_indexes_per_document(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_index, "Progress", _Recording)
    _Recording.steps = []
    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    records = [SourceRecord(f"d{i}", f"Text number {i} about things.", title=f"Page {i}") for i in range(5)]
    async with await aopen_store(tmp_path / "store", create=True, embedder="hashing") as store:
        report = await _index.index_records(store, records, console)
    assert report.documents == 5
    steps = _Recording.steps
    assert [n for d, n in steps if d == "reading"] == [1, 2, 3, 4, 5]
    indexing = [n for d, n in steps if d == "indexing"]
    assert indexing[0] == 0  # the writes begin
    assert indexing[1] == 1  # the first batch is one document
    assert indexing[-1] == 5
    assert steps.index(("reading", 5)) < steps.index(("indexing", 0))

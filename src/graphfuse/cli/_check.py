"""``graphfuse check``: integrity of a store directory, with ``--repair``."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from ..stores import DEFAULT_STORE
from ._errors import reports_errors

__all__ = ["register"]


@reports_errors
def check(
    store: Annotated[str, typer.Option("--store", help="Store directory.")] = DEFAULT_STORE,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    repair: Annotated[bool, typer.Option("--repair", help="Fix what can be fixed and say what was done.")] = False,
) -> None:
    """Check a store: its files (missing, empty, unreadable, damaged), damaged rows (vectors
    of the wrong size, holding NaN or infinity, or not matching their checksum, named with
    their documents), counts, pending documents, dangling relations, documents without
    vectors, stray vectors; then open it as the other commands do and report their refusal.
    Stale manifest counts and the corpus index are notes. With --repair: re-create empty
    files, delete damaged and stray vectors (the next index embeds them again) and dangling
    relations, rewrite the counts.

    Exit code 1 when the store is inconsistent or damaged (after repairs, with --repair).
    """
    from ..stores import check_store

    report = check_store(store, repair=repair)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2, sort_keys=True))
    else:
        typer.echo(f"{store}: {report.documents} documents, {report.vectors} vectors, {report.relations} relations")
        problems = {
            "pending documents (an index run did not finish)": report.pending,
            "dangling relations": report.dangling_relations,
            "documents without vectors": report.documents_without_vectors,
            "vectors without documents": report.vectors_without_documents,
            "damaged rows": report.damaged_rows,
        }
        for what, n in problems.items():
            if n:
                typer.echo(f"  {n} {what}")
        for line in report.integrity:
            typer.echo(f"  integrity: {line}")
        for line in report.damaged:
            typer.echo(f"  damaged: {line}")
        if report.damaged_rows > len(report.damaged):
            typer.echo(f"  damaged: ... and {report.damaged_rows - len(report.damaged)} more rows (see --json counts)")
        for line in report.notes:
            typer.echo(f"  note: {line}")
        for line in report.repairs:
            typer.echo(f"  repaired: {line}")
        for line in report.unrepaired:
            typer.echo(f"  not repaired: {line}")
        typer.echo("ok" if report.ok else "inconsistent")
    if not report.ok:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("check")(check)

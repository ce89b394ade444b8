"""``graphfuse check``: integrity of a store directory, with ``--repair``."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from .._sync import run_sync
from ..stores import DEFAULT_STORE
from ._errors import reports_errors

__all__ = ["register"]


@reports_errors
def check(
    store: Annotated[str, typer.Option("--store", help="Store directory.")] = DEFAULT_STORE,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    repair: Annotated[bool, typer.Option("--repair", help="Fix what can be fixed and say what was done.")] = False,
) -> None:
    """Check a store: SQLite integrity, counts, pending documents, dangling relations,
    documents without vectors, vectors without documents, manifest vs actual counts.

    Exit code 1 when the store is inconsistent (after repairs, with --repair).
    """
    from ..stores import check_store

    report = run_sync(check_store(store, repair=repair))
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2, sort_keys=True))
    else:
        typer.echo(f"{store}: {report.documents} documents, {report.vectors} vectors, {report.relations} relations")
        problems = {
            "pending documents (an index run did not finish)": report.pending,
            "dangling relations": report.dangling_relations,
            "documents without vectors": report.documents_without_vectors,
            "vectors without documents": report.vectors_without_documents,
        }
        for what, n in problems.items():
            if n:
                typer.echo(f"  {n} {what}")
        for key, (recorded, actual) in report.manifest.items():
            typer.echo(f"  manifest says {recorded} {key}, the store holds {actual}")
        for line in report.integrity:
            typer.echo(f"  integrity: {line}")
        for line in report.repairs:
            typer.echo(f"  repaired: {line}")
        for line in report.unrepaired:
            typer.echo(f"  not repaired: {line}")
        typer.echo("ok" if report.ok else "inconsistent")
    if not report.ok:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("check")(check)

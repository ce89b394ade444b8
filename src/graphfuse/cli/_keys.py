"""``graphfuse keys``: add, list and revoke the API keys of ``graphfuse serve``."""

from __future__ import annotations

from typing import Annotated

import typer

from .._keys import KeyFile
from ._errors import err_console, reports_errors

__all__ = ["register"]

keys_app = typer.Typer(help="API keys for `graphfuse serve`: each key is bound to one tenant.", no_args_is_help=True)

KeysOption = Annotated[str, typer.Option("--keys", help="Key file (JSON; holds only hashes of the keys).")]


@reports_errors
def add(
    keys: KeysOption,
    tenant: Annotated[str, typer.Option("--tenant", help="Tenant the key acts for.")],
) -> None:
    """Create a key for TENANT; the key is printed once and only its hash is stored."""
    record, key = KeyFile(keys).add(tenant)
    typer.echo(key)
    err_console.print(
        f"key {record.key_id} for tenant {record.tenant!r} added to {keys}; it is shown only now: keep it",
        markup=False,
    )


@reports_errors
def revoke(
    key_id: Annotated[str, typer.Argument(help="The key's id (from `graphfuse keys list`) or the key itself.")],
    keys: KeysOption,
) -> None:
    """Remove a key; a running server refuses it from its next request on."""
    record = KeyFile(keys).revoke(key_id)
    typer.echo(f"revoked key {record.key_id} of tenant {record.tenant!r}")


@reports_errors
def list_keys(keys: KeysOption) -> None:
    """List key ids, tenants and creation times (never the keys)."""
    for r in KeyFile(keys).records():
        typer.echo(f"{r.key_id}  {r.tenant}  {r.created_at}")


keys_app.command("add")(add)
keys_app.command("revoke")(revoke)
keys_app.command("list")(list_keys)


def register(app: typer.Typer) -> None:
    app.add_typer(keys_app, name="keys")

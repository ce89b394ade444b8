"""The ``graphfuse`` console script: the CLI, or a clear message when ``graphfuse[cli]`` is missing."""

from __future__ import annotations

import sys

__all__ = ["main"]

_CLI_DEPENDENCIES = {"typer", "rich", "click"}


def main() -> None:
    """Run the command line; without typer/rich, say how to install them and exit with status 2."""
    try:
        from .cli import main as cli_main
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in _CLI_DEPENDENCIES:
            raise
        sys.stderr.write(
            f"error: the graphfuse command line needs the 'cli' extra ({exc.name} is not installed): "
            "pip install 'graphfuse[cli]'\n"
        )
        raise SystemExit(2) from None
    cli_main()

"""Which modules a fresh interpreter imports: for tests that keep plugin loading cheap."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence

__all__ = ["modules_imported_by"]


def modules_imported_by(statements: str, modules: Sequence[str], *, timeout: float = 120) -> dict[str, bool]:
    """Run ``statements`` in a new interpreter (this one's executable) and report, for each of
    ``modules``, whether it ended up in ``sys.modules``.

    ``AssertionError`` (with the child's stderr) when the statements fail, so a test reads::

        assert modules_imported_by("import my_plugin._plugin", ["my_sdk"]) == {"my_sdk": False}
    """
    probe = f"{statements}\nimport json, sys\nprint(json.dumps({{m: m in sys.modules for m in {list(modules)!r}}}))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise AssertionError(f"the statements failed in a fresh interpreter:\n{done.stderr}")
    loaded: dict[str, bool] = json.loads(done.stdout.splitlines()[-1])
    return loaded

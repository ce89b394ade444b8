"""``python -m graphfuse.cli``: the same as the ``graphfuse`` command."""

from . import main

main()

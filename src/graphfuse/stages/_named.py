"""What the built-in stages share: a validated name (the key of per-call options) and signal."""

from __future__ import annotations

from ..validation import check_name

__all__ = ["NamedStage"]


class NamedStage:
    """Base of the built-in stages: the read-only ``name`` and, for a stage that writes one, ``_signal``.

    A subclass calls ``self._set_names(name, signal)`` in its ``__init__``: both are checked
    (non-empty identifier-like strings; :class:`~graphfuse.InvalidInput` naming the argument)
    and kept in the slots ``_name`` and ``_signal``. It still implements ``run`` (and
    ``check_options`` for per-call options) itself, as the :class:`~graphfuse.Stage` protocol asks.
    """

    __slots__ = ("_name", "_signal")

    _name: str
    _signal: str

    def _set_names(self, name: str, signal: str | None = None) -> None:
        self._name = check_name(name, "name")
        if signal is not None:
            self._signal = check_name(signal, "signal")

    @property
    def name(self) -> str:
        """The stage name (key of its per-call options)."""
        return self._name

"""Seams for host integrations: run stages outside a pipeline, ask a stage what it needs, score signals.

A host package (LlamaIndex, LangChain, your own framework) uses these to run the core's stages over
its own objects with the same checks, logs, metrics and errors as a :class:`~graphfuse.Pipeline`;
most hosts are written on :mod:`graphfuse.records`, which is built from them. Applications need
none of it. See ``docs/write-an-integration.md``.
"""

from __future__ import annotations

from ._capabilities import SignalInput, SignalScorer, SignalStage, as_signal_stage
from ._pipeline import StageRunContext, run_signal_stage, run_stage, run_stages
from ._sync import run_inline
from ._traits import DeclaresTraits, StageTraits, stage_traits

__all__ = [
    "DeclaresTraits",
    "SignalInput",
    "SignalScorer",
    "SignalStage",
    "StageRunContext",
    "StageTraits",
    "as_signal_stage",
    "run_inline",
    "run_signal_stage",
    "run_stage",
    "run_stages",
    "stage_traits",
]

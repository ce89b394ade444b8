"""Time-aware retrieval: read the time a question names and favour documents created then.

:func:`parse_time` turns explicit expressions ("on 2026-04-30", "in March", "the 8th", "last
week", "before May 5") into half-open UTC windows with a confidence, and recognises ordering
questions ("Did A happen before B?"). :class:`TimeAware` is the stage (name ``time``) that
boosts (or, on request, keeps only) candidates whose ``created_at`` falls in those windows
and retrieves both events of an ordering question; :class:`Timeline` is the sorted index of
creation times it looks windows up in.
"""

from ._expressions import TimeQuery, TimeWindow, parse_time
from ._stage import TimeAware
from ._timeline import Timeline

__all__ = ["TimeAware", "TimeQuery", "TimeWindow", "Timeline", "parse_time"]

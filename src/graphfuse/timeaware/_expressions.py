"""Explicit time expressions in a question, turned into half-open UTC windows."""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from .._core._errors import InvalidInput

__all__ = ["TimeQuery", "TimeWindow", "parse_time"]


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """A half-open UTC window ``[start, end)`` read from ``text``; ``None`` leaves a side open.

    ``confidence`` (0-1) says how sure the reading is: an explicit calendar date is 1.0, a
    month or a relative expression less, a bare day of the month ("the 8th") least.
    """

    start: datetime | None
    end: datetime | None
    confidence: float
    text: str

    def contains(self, moment: datetime) -> bool:
        """Whether ``moment`` (UTC) falls in ``[start, end)``."""
        return (self.start is None or moment >= self.start) and (self.end is None or moment < self.end)


@dataclass(frozen=True, slots=True)
class TimeQuery:
    """What :func:`parse_time` read: windows, and for an ordering question its two events.

    ``order`` is ``"before"`` or ``"after"`` when the question asks whether one event came
    before or after another ("Did A happen before B?"); ``events`` are then the two clauses.
    """

    windows: tuple[TimeWindow, ...] = ()
    order: str | None = None
    events: tuple[str, ...] = ()


_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip

# Tried in order; a later pattern only matches text an earlier one did not take.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE))
    for kind, pattern in (
        ("iso", r"\b(?P<year>(?:19|20)\d\d)-(?P<month>[01]?\d)-(?P<day>[0-3]?\d)\b"),
        ("iso", r"\b(?P<year>(?:19|20)\d\d)/(?P<month>[01]?\d)/(?P<day>[0-3]?\d)\b"),
        ("compact", r"(?<![\d])(?P<year>(?:19|20)\d\d)(?P<month>[01]\d)(?P<day>[0-3]\d)(?![\d])"),
        ("month_day", rf"\b{_MONTH}\s+{_DAY}\b(?:,?\s+{_YEAR}\b)?"),
        ("day_month", rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\b(?:,?\s+{_YEAR}\b)?"),
        ("month_year", rf"\b{_MONTH}\s+(?:of\s+)?{_YEAR}\b"),
        ("month", rf"\b(?:in|during|of|since|until|before|after|by|early|late|mid)\s+(?:-\s*)?{_MONTH}\b"),
        ("year", rf"\b(?:in|during|of|since|until|before|after|by)\s+{_YEAR}\b"),
        ("ordinal_day", r"\b(?:the|on)\s+(?P<day>[0-3]?\d)(?:st|nd|rd|th)\b(?!\s+(?:of\s+)?[A-Za-z]+\s+(?:19|20))"),
        ("relative_day", r"\b(?P<word>today|tonight|yesterday|tomorrow|day before yesterday|day after tomorrow)\b"),
        (
            "ago",
            r"\b(?P<n>\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+"
            r"(?P<unit>day|week|month|year)s?\s+ago\b",
        ),
        ("this_next_last", r"\b(?P<which>this|next|last|past|previous|coming)\s+(?P<unit>week|month|year|weekend)\b"),
        (
            "weekday",
            r"\b(?P<which>this|next|last|on)?\s*(?P<weekday>monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
        ),
    )
)
# What a pattern cannot match without: a digit, a month name, or one of some words (a cheap
# pre-check that keeps a question without time words well under a tenth of a millisecond).
_NEEDS: dict[str, str | frozenset[str]] = {
    "iso": "digits",
    "compact": "digits",
    "month_day": "months",
    "day_month": "months",
    "month_year": "months",
    "month": "months",
    "year": "digits",
    "ordinal_day": "digits",
    "relative_day": frozenset({"today", "tonight", "yesterday", "tomorrow"}),
    "ago": frozenset({"ago"}),
    "this_next_last": frozenset({"week", "month", "year", "weekend"}),
    "weekday": frozenset(_WEEKDAYS),
}
_LETTERS = re.compile(r"[a-z]+")
_DIGIT = re.compile(r"\d")
_BOUND = re.compile(r"\b(before|after|since|until|till|by|prior to|earlier than|later than)\s+(?:the\s+)?$", re.I)
_ORDER = re.compile(r"\b(before|after|prior to|earlier than|later than)\b", re.I)
_BETWEEN = re.compile(r"\bbetween\s+$", re.I)


def _utc(year: int, month: int, day: int) -> datetime | None:
    try:
        return datetime(year, month, day, tzinfo=timezone.utc)
    except ValueError:
        return None


def _add_months(moment: datetime, months: int) -> datetime:
    index = moment.year * 12 + moment.month - 1 + months
    return moment.replace(year=index // 12, month=index % 12 + 1, day=1)


def _day_window(start: datetime | None, confidence: float, text: str) -> TimeWindow | None:
    return None if start is None else TimeWindow(start, start + timedelta(days=1), confidence, text)


def _month_window(year: int, month: int, confidence: float, text: str) -> TimeWindow:
    start = datetime(year, month, 1, tzinfo=timezone.utc)
    return TimeWindow(start, _add_months(start, 1), confidence, text)


def _year_of(month: int, day: int, reference: datetime | None) -> int | None:
    # Without a year, the most recent such date not after the reference (questions look back).
    if reference is None:
        return None
    year = reference.year
    if (month, day) > (reference.month, reference.day):
        year -= 1
    return year


def _ambiguous(month: str) -> bool:
    # Month names that are also common lower-case words count only when capitalised.
    return month.lower() in ("may", "mar", "march", "jan", "jun", "dec", "sept", "aug") and not month[0].isupper()


def _window(kind: str, m: re.Match[str], reference: datetime | None) -> TimeWindow | None:
    text = m.group(0).strip()
    groups = m.groupdict()
    today = reference.replace(hour=0, minute=0, second=0, microsecond=0) if reference is not None else None
    if kind in ("iso", "compact"):
        return _day_window(_utc(int(groups["year"]), int(groups["month"]), int(groups["day"])), 1.0, text)
    if "month" in groups and groups["month"] and _ambiguous(groups["month"]):
        return None  # "in may", "by mar...": a verb or a word, not a month
    if kind in ("month_day", "day_month"):
        month, day = _MONTHS[groups["month"].lower()], int(groups["day"])
        if not 1 <= day <= 31:
            return None
        year = int(groups["year"]) if groups.get("year") else _year_of(month, day, reference)
        if year is None:
            return None
        return _day_window(_utc(year, month, day), 1.0 if groups.get("year") else 0.9, text)
    if kind == "month_year":
        return _month_window(int(groups["year"]), _MONTHS[groups["month"].lower()], 0.9, text)
    if kind == "month":
        month = _MONTHS[groups["month"].lower()]
        year = _year_of(month, 1, reference)
        return None if year is None else _month_window(year, month, 0.8, text)
    if kind == "year":
        start = datetime(int(groups["year"]), 1, 1, tzinfo=timezone.utc)
        return TimeWindow(start, start.replace(year=start.year + 1), 0.7, text)
    if today is None:
        return None
    if kind == "ordinal_day":
        day = int(groups["day"])
        month_start = today.replace(day=1)
        if day > today.day:
            month_start = _add_months(month_start, -1)
        return _day_window(_utc(month_start.year, month_start.month, day), 0.6, text)
    if kind == "relative_day":
        offset = {
            "today": 0, "tonight": 0, "yesterday": -1, "tomorrow": 1,
            "day before yesterday": -2, "day after tomorrow": 2,
        }[" ".join(groups["word"].lower().split())]  # fmt: skip
        return _day_window(today + timedelta(days=offset), 0.9, text)
    if kind == "ago":
        raw = groups["n"].lower()
        n = int(raw) if raw.isdigit() else _NUMBER_WORDS[raw]
        unit = groups["unit"].lower()
        if unit == "day":
            return _day_window(today - timedelta(days=n), 0.8, text)
        if unit == "week":
            start = today - timedelta(days=7 * n + today.weekday())
            return TimeWindow(start, start + timedelta(days=7), 0.6, text)
        if unit == "month":
            start = _add_months(today.replace(day=1), -n)
            return TimeWindow(start, _add_months(start, 1), 0.6, text)
        start = today.replace(year=today.year - n, month=1, day=1)
        return TimeWindow(start, start.replace(year=start.year + 1), 0.6, text)
    if kind == "this_next_last":
        which, unit = groups["which"].lower(), groups["unit"].lower()
        step = {"this": 0, "next": 1, "coming": 1}.get(which, -1)
        if unit in ("week", "weekend"):
            start = today - timedelta(days=today.weekday()) + timedelta(days=7 * step)
            if unit == "weekend":
                start += timedelta(days=5)
                return TimeWindow(start, start + timedelta(days=2), 0.7, text)
            return TimeWindow(start, start + timedelta(days=7), 0.7, text)
        if unit == "month":
            start = _add_months(today.replace(day=1), step)
            return TimeWindow(start, _add_months(start, 1), 0.7, text)
        start = today.replace(year=today.year + step, month=1, day=1)
        return TimeWindow(start, start.replace(year=start.year + 1), 0.7, text)
    if kind == "weekday":
        target = _WEEKDAYS[groups["weekday"].lower()]
        which = (groups.get("which") or "").lower()
        delta = target - today.weekday()
        if which == "next" and delta <= 0:
            delta += 7  # the first one after today
        elif which == "last" and delta >= 0:
            delta -= 7  # the last one before today
        elif which in ("", "on") and delta > 0:
            delta -= 7  # the most recent one, today included
        return _day_window(today + timedelta(days=delta), 0.5, text)
    return None


def _bounded(window: TimeWindow, bound: str) -> TimeWindow:
    # "before X": everything up to X's start; "after X": from X's end; "since X": from X's start.
    bound = " ".join(bound.lower().split())
    if bound in ("before", "prior to", "earlier than"):
        return TimeWindow(None, window.start, window.confidence * 0.9, f"{bound} {window.text}")
    if bound in ("after", "later than"):
        return TimeWindow(window.end, None, window.confidence * 0.9, f"{bound} {window.text}")
    if bound == "since":
        return TimeWindow(window.start, None, window.confidence * 0.9, f"{bound} {window.text}")
    return TimeWindow(None, window.end, window.confidence * 0.9, f"{bound} {window.text}")  # until, by


def parse_time(text: str, reference: datetime | None = None) -> TimeQuery:
    """Read the explicit time expressions in ``text`` (a question) as UTC windows.

    Understood: calendar dates (``2026-04-30``, ``2026/04/30``, ``20260430``, "April 30[, 2026]",
    "30th of April"), months ("in March", "March 2026"), years ("in 2025"), "before/after/since/
    until X" (half-open), "between X and Y", and, against ``reference`` (the time the question
    is asked, UTC; naive means UTC), "the 8th", "yesterday", "tomorrow", "3 days ago", "last
    week", "next month", "this weekend", "on Friday". Without a reference only expressions that
    name their year are read. A question that asks whether one event came before or after
    another ("Did A happen before B?", where B is not a time) is an ordering question: its
    ``order`` and its two ``events`` are set. Windows are in the order of the text.
    """
    if not isinstance(text, str):
        raise InvalidInput(f"text must be a string, got {type(text).__name__}")
    if reference is not None:
        if not isinstance(reference, datetime):
            raise InvalidInput(f"reference must be a datetime, got {reference!r}")
        reference = (
            reference.replace(tzinfo=timezone.utc) if reference.tzinfo is None else reference.astimezone(timezone.utc)
        )
    taken: list[tuple[int, int, TimeWindow]] = []
    words = set(_LETTERS.findall(text.lower()))
    digits = _DIGIT.search(text) is not None
    months = not words.isdisjoint(_MONTHS)
    for kind, pattern in _PATTERNS:
        need = _NEEDS[kind]
        if (need == "digits" and not digits) or (need == "months" and not months):
            continue
        if isinstance(need, frozenset) and words.isdisjoint(need):
            continue
        for m in pattern.finditer(text):
            start, end = m.span()
            if any(start < e and s < end for s, e, _ in taken):
                continue
            window = _window(kind, m, reference)
            if window is not None:
                taken.append((start, end, window))
    taken.sort(key=lambda t: t[0])
    windows: list[TimeWindow] = []
    i = 0
    while i < len(taken):
        start, end, window = taken[i]
        before = text[:start]
        between = _BETWEEN.search(before)
        if between and i + 1 < len(taken) and re.fullmatch(r"\s+and\s+", text[end : taken[i + 1][0]], re.I):
            other = taken[i + 1][2]
            windows.append(
                TimeWindow(
                    window.start, other.end, min(window.confidence, other.confidence), text[start : taken[i + 1][1]]
                )
            )
            i += 2
            continue
        bound = _BOUND.search(before)
        windows.append(_bounded(window, bound.group(1)) if bound else window)
        i += 1
    order: str | None = None
    events: tuple[str, ...] = ()
    for m in _ORDER.finditer(text):
        after_keyword = m.end()
        if any(s <= after_keyword + 5 and s >= after_keyword for s, _, _ in taken):
            continue  # "before March 5": a window, not an ordering question
        first, second = text[: m.start()].strip(" ,?"), text[m.end() :].strip(" ,?")
        if len(first.split()) >= 2 and len(second.split()) >= 2:
            word = m.group(1).lower()
            order = "before" if word in ("before", "prior to", "earlier than") else "after"
            events = (first, second)
            break
    return TimeQuery(tuple(windows), order, events)

"""Simulated time. Every tool call advances the env's clock by the tool's cost; wall time never enters."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

__all__ = ["Clock", "parse_time", "format_time", "shift", "minutes_between", "hhmm", "floor_to", "ceil_to", "local_time"]


def parse_time(text: str) -> datetime | None:
    """An ISO-8601 timestamp (``2024-08-15T08:00``), or None when ``text`` is not one."""
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def local_time(text: Any) -> datetime | None:
    """A naive ISO timestamp (``2024-08-15T08:00``), or None: zoned times are refused, since a world runs
    on one local clock and comparing a zoned time with it would raise."""
    moment = parse_time(text) if isinstance(text, str) else None
    return moment if moment is not None and moment.tzinfo is None else None


def format_time(moment: datetime) -> str:
    """The project's one timestamp format, minute precision: ``2024-08-15T08:00``."""
    if moment.tzinfo is None and moment.year >= 1000:  # the same text as strftime's, at a third of its cost
        return moment.isoformat(timespec="minutes")
    return moment.strftime("%Y-%m-%dT%H:%M")


def shift(moment: str, minutes: int = 0, **delta) -> str:
    """``moment`` (ISO) moved by ``minutes`` and any other ``timedelta`` fields: ``shift(t, 30)``,
    ``shift(t, hours=-2)``."""
    return format_time(datetime.fromisoformat(moment) + timedelta(minutes=int(minutes), **delta))


def minutes_between(a: str, b: str) -> int:
    """Whole minutes from ``a`` to ``b`` (ISO; negative when ``b`` is earlier)."""
    return int((datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds() // 60)


def hhmm(moment: str) -> str:
    """The clock time of an ISO timestamp, as a user would write it: ``08:05``."""
    return moment[11:16]


def floor_to(moment: str, step: int = 5) -> str:
    """``moment`` rounded down to a multiple of ``step`` minutes past the hour (times users quote are round)."""
    return shift(moment, -(int(moment[14:16]) % step))


def ceil_to(moment: str, step: int = 5) -> str:
    """``moment`` rounded up to a multiple of ``step`` minutes past the hour."""
    return shift(moment, -int(moment[14:16]) % step)


class Clock:
    """A minute-resolution simulated clock owned by one env."""

    def __init__(self, start: str | datetime):
        self.start = parse_time(start) if isinstance(start, str) else start
        if self.start is None:
            raise ValueError(f"clock start {start!r} is not an ISO timestamp")
        self.minutes = 0
        self._iso, self._iso_at = "", -1

    @property
    def now(self) -> datetime:
        return self.start + timedelta(minutes=self.minutes)

    def iso(self) -> str:
        if self._iso_at != self.minutes:  # formatting dominates a cheap step; most calls repeat it
            self._iso, self._iso_at = format_time(self.now), self.minutes
        return self._iso

    def advance(self, minutes: int) -> None:
        self.minutes += max(0, int(minutes))

"""The base class of every domain world: state containers plus tool methods."""

from __future__ import annotations

from typing import Any, ClassVar

from sttgym.clock import Clock

__all__ = ["World"]


class World:
    """A domain's live state and the tools that read and change it.

    State is one JSON-like dict of containers (``{"vehicles": {id: {...}}, ...}``); a world
    reads its containers as attributes (``self.vehicles``), so tool code reads like the
    domain. Tools are methods marked with :func:`sttgym.tools.tool`; they must validate
    before they change anything and return ``ok(...)``/``fail(...)``, never raise.

    Subclasses set ``domain`` (the name used in env IDs) and ``description`` (one line
    shown to agents in the system prompt).
    """

    domain: ClassVar[str] = ""
    description: ClassVar[str] = ""

    def __init__(self, state: dict, clock: Clock):
        self.state = state
        self.clock = clock

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup fails: expose state containers as attributes.
        state = self.__dict__.get("state")
        if state is not None and name in state:
            return state[name]
        raise AttributeError(f"{type(self).__name__} has no attribute or state container {name!r}")

    @property
    def now(self) -> str:
        """The current simulated time, ISO format."""
        return self.clock.iso()

"""A world driven the way the env drives it, for the domain tests' hand-made worlds."""

from __future__ import annotations

from typing import Callable

from sttgym.checklist import EpisodeLog
from sttgym.clock import Clock
from sttgym.tools import collect_tools


class WorldHarness:
    """A world plus its clock, calling tools the way the env does (the clock advances by each tool's cost).

    A domain's test subclasses it with ``world_class``, ``start`` and ``default_state`` (its hand-made world).
    """

    world_class: type
    start: str
    default_state: Callable[[], dict]

    def __init__(self, state: dict | None = None):
        self.clock = Clock(self.start)
        self.world = self.world_class(state or type(self).default_state(), self.clock)
        self.tools = collect_tools(self.world)

    def __call__(self, name: str, **arguments) -> dict:
        result = self.tools[name].func(**arguments)
        self.clock.advance(self.tools[name].cost)
        return result

    def holds(self, name: str, **args) -> bool:
        return self.world.holds({"name": name, "args": args}, log=EpisodeLog())


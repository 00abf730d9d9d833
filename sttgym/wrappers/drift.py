"""Mapping drift: at each boundary, some identifiers start executing other tools, by one cyclic permutation."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from sttgym.actions import ToolCall, parse_action
from sttgym.wrappers.base import ToolWrapper

__all__ = ["MappingDrift", "moved_count"]


def moved_count(fraction: float, identifiers: int) -> int:
    """Identifiers one drift moves: ``round(fraction * identifiers)``, a lone one raised to a pair."""
    count = round(fraction * identifiers)
    return min(identifiers, max(count, 2)) if count else 0


def is_boundary(event: dict) -> bool:
    """A task starting (ScrambleTool) or a trigger firing (arena worlds) is where drift strikes."""
    return event.get("type") == "task_start" or "trigger" in event


class MappingDrift(ToolWrapper):
    """Re-assigns ``fraction`` of the tool identifiers at every boundary (ScrambleToolBench §2.4, §4.2).

    The identifiers are the names the wrapped env lists (aliases under :class:`Obfuscate`),
    meta-commands excepted. At each boundary (a ``task_start`` event, or a trigger firing in
    an arena world), ``round(fraction * n)`` identifiers are drawn and shifted along one
    cycle ``c0 -> c1 -> ... -> c0``: the tool reached at ``c_i`` is reached at ``c_{i+1}``
    from the next step on, so every chosen tool gets a new identifier and the mapping stays
    a bijection. A count of 1 is raised to 2 (a one-element cycle would move nothing).

    Each drift adds ``{"type": "drift", "moved": count}`` to ``info["events"]``; the final
    ``info["mappings"]`` holds identifier -> tool at the start of each segment, composed
    with the wrapped env's own mappings.

    Args:
        fraction: share of identifiers moved per boundary, in [0, 1].
    """

    def __init__(self, env: gym.Env, fraction: float = 0.25):
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(f"fraction must be in [0, 1], got {fraction}")
        super().__init__(env, fraction=fraction)
        self.fraction = fraction

    def on_reset(self, observation: Any, info: dict) -> tuple[Any, dict]:
        self.ids = [t["function"]["name"] for t in info["tools"] if t["function"]["name"] not in self.meta_commands]
        self.route = {ident: ident for ident in self.ids}  # what the agent calls -> what the wrapped env runs
        self.routes = [dict(self.route)]
        return observation, info

    @property
    def moved(self) -> int:
        """How many identifiers one drift moves."""
        return moved_count(self.fraction, len(self.ids))

    def inward(self, action: Any) -> Any:
        call = parse_action(action)
        if isinstance(call, ToolCall) and call.name in self.route:
            return {"name": self.route[call.name], "arguments": call.arguments}
        return action

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        self.require_reset()
        observation, reward, terminated, truncated, info = self.env.step(self.inward(action))
        if terminated or truncated:
            return observation, reward, terminated, truncated, {**info, "mappings": self._composed(info)}
        if self.moved and any(is_boundary(e) for e in info.get("events", [])):
            self._drift()
            info = {**info, "events": [*info.get("events", []), {"type": "drift", "moved": self.moved}]}
        return observation, reward, terminated, truncated, info

    def _drift(self) -> None:
        cycle = [self.ids[int(i)] for i in self.rng.choice(len(self.ids), self.moved, replace=False)]
        route = dict(self.route)
        for i, ident in enumerate(cycle):
            route[cycle[(i + 1) % len(cycle)]] = self.route[ident]
        self.route = route
        self.routes.append(dict(route))

    def _composed(self, info: dict) -> list[dict[str, str]]:
        """identifier -> tool per segment; a wrapped layer that never changes reports a single mapping."""
        inner = info.get("mappings") or [{ident: ident for ident in self.ids}]
        return [{ident: inner[min(i, len(inner) - 1)].get(target, target) for ident, target in route.items()}
                for i, route in enumerate(self.routes)]

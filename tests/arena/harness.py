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


def assert_told_only_when_asked(env, seeds, commit: str, consult: str) -> None:
    """Play the task's oracle at each of ``seeds``: the query must carry the user's wish to be consulted
    (``consult``), the oracle must score 1.0, and the profile's one withheld fact must show in nothing but the
    user's reply to a question naming it, asked before the oracle's last ``commit`` call (not in the query, the
    initial state or any other tool result)."""
    import json

    from sttgym.task import resolve
    from sttgym.user import words

    for seed in seeds:
        env.reset(seed=seed)
        task, saved, shown = env.unwrapped.task, {}, []
        (fact,) = task.profile.withheld
        assert consult in task.query and fact.text not in task.query and fact.text not in json.dumps(task.initial_state)
        for c in task.oracle:
            observation, *_ = env.step({"name": c.name, "arguments": resolve(c.arguments, saved)})
            saved[c.save_as or ""] = json.loads(observation)
            shown.append((c, observation))
        *_, info = env.step({"content": "Task Completed"})
        assert info["score"] == 1.0
        told = [i for i, (_, text) in enumerate(shown) if fact.text in text]
        assert len(told) == 1, told
        question = shown[told[0]][0]
        assert question.name == "chat_with_user" and fact.hits(words(question.arguments["message"]))
        assert told[0] < max(i for i, (c, _) in enumerate(shown) if c.name == commit)

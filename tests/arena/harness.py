"""A world driven the way the env drives it, for the domain tests' hand-made worlds."""

from __future__ import annotations

from typing import Callable, Iterable, Iterator

import gymnasium as gym

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



def assert_alternatives_score_one(env_id: str, seeds=range(2), key: Callable | None = None,
                                  noticed: bool = False) -> int:
    """Each of the task's listed alternative solutions, played in the env, scores 1.0; with ``key`` (a plan's
    choice: its courier, its trucks), each chooses differently from the oracle; with ``noticed``, each meets the
    first trigger's change. Returns how many were played."""
    import gymnasium as gym

    from sttgym.agents import PlanAgent
    from sttgym.manifests import task_of
    from sttgym.rollout import rollout

    played = 0
    for seed in seeds:
        task = task_of(env_id, seed)
        for plan in task.alternatives:
            assert key is None or key(plan) != key(task.oracle), (env_id, seed)
            env = gym.make(env_id)
            assert rollout(env, PlanAgent(plan), seed=seed).reward == 1.0, (env_id, seed, plan)
            assert not noticed or env.unwrapped.log.noticed(task.triggers[0].name), (env_id, seed)
            played += 1
    return played


def second_changes(env_id: str, name: str, shown_by: str, seeds: Iterable[int] = range(3),
                   meets: Callable | None = None) -> Iterator[tuple]:
    """The hard level's second change at each seed of ``env_id``: its task's last trigger is ``name``, shown by the
    read ``shown_by``, and every solution meets it as ``meets`` asks (by default last, after the story's change:
    :func:`assert_second_change_follows_the_story`). Yields ``(env, seed, task, trigger)`` for the domain's own
    checks."""
    env = gym.make(env_id)
    for seed in seeds:
        env.reset(seed=seed)
        task = env.unwrapped.task
        change = task.triggers[-1]
        assert change.name == name and change.observable.tool == shown_by, (env_id, seed, change.name)
        (meets or assert_second_change_follows_the_story)(env, seed, name)
        yield env, seed, task, change


def assert_second_change_follows_the_story(env, seed: int, name: str) -> None:
    """Each solution of the task ``env`` builds at ``seed`` (the oracle and its alternatives) scores 1.0 and meets
    the trigger ``name`` last, after the story's own change: a second change that the recovery itself sets off."""
    from sttgym.agents import PlanAgent
    from sttgym.rollout import rollout

    task = env.unwrapped.task
    for plan in [task.oracle, *task.alternatives]:
        traj = rollout(env, PlanAgent(plan), seed=seed)
        log = traj.info["trigger_log"]
        assert traj.reward == 1.0 and log[-1]["trigger"] == name, (seed, traj.reward, log)
        assert log[-1]["call_index"] > next(e for e in log if e["trigger"] == task.triggers[0].name)["call_index"]


def assert_second_change_comes_with_the_story(env, seed: int, name: str) -> None:
    """Each solution of the task ``env`` builds at ``seed`` scores 1.0 and meets the trigger ``name`` in the same call
    as the story's own change (the medium level's timing)."""
    from sttgym.agents import PlanAgent
    from sttgym.rollout import rollout

    task = env.unwrapped.task
    timing = {t.name: t.timing for t in task.triggers}
    for plan in [task.oracle, *task.alternatives]:
        traj = rollout(env, PlanAgent(plan), seed=seed)
        # the call each fired during: an event's call_index is the first call to see it, so one fired after its
        # call was made is seen from the next
        during = {e["trigger"]: e["call_index"] - (timing[e["trigger"]] == "after")
                  for e in reversed(traj.info["trigger_log"])}
        assert traj.reward == 1.0 and during[name] == during[task.triggers[0].name], (seed, traj.reward, during)


def second_changes_with_the_story(env_id: str, name: str, shown_by: str, seeds: Iterable[int] = range(3)) -> Iterator:
    """The medium level's second change at each seed of ``env_id``, as :func:`second_changes` yields the hard
    level's, each solution meeting it with the story's change (:func:`assert_second_change_comes_with_the_story`)."""
    return second_changes(env_id, name, shown_by, seeds, meets=assert_second_change_comes_with_the_story)


LEVELS = ("easy", "medium", "hard", "impossible")


def by_level(story: str, seed: int) -> Iterator[tuple[str, gym.Env, object]]:
    """Each level of ``story`` (``"STTArena/Freight-T1"``): the level, its env reset at ``seed``, and its task; for
    the tests that a request and its user read alike at every level."""
    for level in LEVELS:
        env = gym.make(f"{story}-{level}")
        env.reset(seed=seed)
        yield level, env, env.unwrapped.task

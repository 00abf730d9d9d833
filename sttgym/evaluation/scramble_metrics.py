"""ScrambleToolBench's metrics (Tables 2-5) from trajectories, and its analytic references from an env.

:func:`scramble_metrics` reads only what a :class:`~sttgym.rollout.Trajectory` keeps: each
step's action and events, and the final info of the curriculum env (``tasks``,
``attempts``, ``mappings``, ``schemas``, ``ended_early``). Steps are split into task
attempts at ``task_start`` events; a step with a ``timeout`` event ran nothing.

:func:`scramble_references` computes the reference costs of §4.2 from an env's own
parameters (its tools, the functions a task needs, the drift wrapper's count).
"""

from __future__ import annotations

import json
import statistics
from math import comb, erfc, sqrt
from typing import Any

import gymnasium as gym

from sttgym.rollout import Trajectory
from sttgym.wrappers.drift import MappingDrift, moved_count
from sttgym.wrappers.obfuscation import MISMATCH

__all__ = ["scramble_metrics", "scramble_references", "analytic_references"]

FOLLOW_WINDOW = 3  # calls within which following the chain counts (§4.2.4, Table 5)


def scramble_metrics(trajectories: list[Trajectory]) -> dict[str, Any]:
    """The behavioural metrics of a set of episodes of one condition.

    - ``completion_rate``: share of episodes with every task solved; ``tasks_solved``: mean solved per episode.
    - ``action_efficiency``: mean total actions of the successful episodes (None without any).
    - ``immediate_retry_rate``: share of timeouts whose call is repeated as the very next action;
      ``persistent_retry_rate``: share repeated at any later point of the episode.
    - ``budget_exhaustion`` / ``early_exit``: shares of the failed episodes ending by a spent
      budget or by ``end_episode``.
    - ``stale_calls_total`` / ``stale_calls_per_task``: calls, in a task after a drift, to an
      identifier the drift moved, shaped with the argument keys of the function that left it
      (and not those of the one that came), after the first such call (which reveals the move).
      Functions sharing one key set cannot be told apart, so this is a lower bound.
    - ``chain_opportunities`` / ``chain_follow_rate`` / ``chain_random_rate``: on a first call,
      in a task, to a moved identifier the agent had used before, whether it calls the
      identifier the answering function came from (unless already called in this task: the
      cycle is closed) within ``FOLLOW_WINDOW`` calls; against a uniform pick among the
      identifiers it had already used (Table 5).
    - ``chain_p_value``: two-sided p-value of the follows against the random picks (each
      opportunity a Bernoulli trial with its own chance; normal approximation), Table 5's test.
    - ``task1_actions``, ``recovery_overhead``: mean actions of the first task, and mean
      actions beyond the solving reference (functions + submission) of the later tasks,
      over episodes without an early exit, budget-failed attempts included (Table 4);
      ``per_position`` lists both per curriculum position, and ``adjusted`` the actions with
      application-level failures made after the function's schema was known charged
      nothing (Appendix D's counterfactual); ``position_slope``: the least-squares slope of
      actions over positions 2..5 (does the agent get cheaper as the episode goes on?).
    - ``task1_coverage``: functions given a correctly shaped call during the first task,
      per episode (28 is full operational discovery; an application error counts, as in §4.2).
    - ``exact_repeats``: calls, per episode, identical (identifier and arguments) to an
      earlier call of the same task attempt that ran.
    - ``calls_outside_drift``: calls, per episode, in the tasks after a drift, to identifiers
      that drift did not move (memory should make these rarer: they are re-discovery).
    """
    episodes = [_Episode(t) for t in trajectories]
    done = [e for e in episodes if e.tasks]
    complete = [e for e in done if all(t["solved"] for t in e.tasks)]
    failed = [e for e in done if e not in complete]
    retries = [r for e in episodes for r in e.retries()]
    stale = [e.stale_calls() for e in episodes]
    later_tasks = sum(max(len(e.attempts) - 1, 0) for e in episodes)
    chains = [c for e in episodes for c in e.chain_opportunities()]
    kept = [e for e in done if not e.info.get("ended_early")]
    positions = max((len(e.tasks) for e in kept), default=0)
    actions = [_mean([e.tasks[i]["actions"] for e in kept if i < len(e.tasks)]) for i in range(positions)]
    overheads = [_mean([e.tasks[i]["actions"] - e.tasks[i].get("functions", 4) - 1 for e in kept if i < len(e.tasks)])
                 for i in range(positions)]
    adjusted = [_mean([e.tasks[i]["actions"] - e.free_failures(i) for e in kept if i < len(e.tasks)])
                for i in range(positions)]
    return {
        "episodes": len(episodes),
        "completion_rate": len(complete) / len(done) if done else 0.0,
        "tasks_solved": _mean([sum(t["solved"] for t in e.tasks) for e in done]) or 0.0,
        "action_efficiency": _mean([sum(t["actions"] for t in e.tasks) for e in complete]),
        "timeouts": len(retries),
        "immediate_retry_rate": _mean([immediate for immediate, _ in retries]),
        "persistent_retry_rate": _mean([persistent for _, persistent in retries]),
        "budget_exhaustion": _mean([any(t["outcome"] == "budget" for t in e.tasks) and not e.info.get("ended_early")
                                    for e in failed]),
        "early_exit": _mean([bool(e.info.get("ended_early")) for e in failed]),
        "stale_calls_total": sum(stale),
        "stale_calls_per_task": sum(stale) / later_tasks if later_tasks else None,
        "chain_opportunities": len(chains),
        "chain_follow_rate": _mean([followed for followed, _ in chains]),
        "chain_random_rate": _mean([chance for _, chance in chains]),
        "chain_p_value": _follow_p_value(chains),
        "task1_actions": actions[0] if actions else None,
        "recovery_overhead": _mean(overheads[1:]) if len(overheads) > 1 else None,
        "position_slope": _slope(actions[1:]),
        "per_position": {"actions": actions, "overhead": overheads, "adjusted": adjusted},
        "task1_coverage": _mean([e.coverage(0) for e in done]),
        "exact_repeats": _mean([e.exact_repeats() for e in episodes]),
        "calls_outside_drift": _mean([e.outside_drift() for e in episodes]),
    }


def _follow_p_value(chains: list[tuple[bool, float]]) -> float | None:
    """Two-sided p-value that the follows arose from the random picks' chances (normal approximation)."""
    variance = sum(chance * (1 - chance) for _, chance in chains)
    if not variance:
        return None
    z = (sum(followed for followed, _ in chains) - sum(chance for _, chance in chains)) / sqrt(variance)
    return erfc(abs(z) / sqrt(2))


def _slope(values: list[float | None]) -> float | None:
    """Least-squares slope of ``values`` over their positions (None with fewer than two)."""
    points = [(i, v) for i, v in enumerate(values) if v is not None]
    if len(points) < 2:
        return None
    mx, my = statistics.fmean(i for i, _ in points), statistics.fmean(v for _, v in points)
    return sum((i - mx) * (v - my) for i, v in points) / sum((i - mx) ** 2 for i, _ in points)


def analytic_references(without_arguments: int, with_arguments: int, per_task: int, moved: int) -> dict[str, float]:
    """§4.2's reference costs for a terminal of that many functions and a drift moving ``moved`` identifiers.

    - full discovery: one call per function without arguments, two (schema probe, shaped
      call) per function with arguments; the first task adds its submission.
    - Eq. 2: a drift hits a task with probability ``1 - C(n - m, r) / C(n, r)``, and tracing
      the one cycle of length ``m`` costs ``m - 1`` extra calls.
    - blind search: a uniform scan of the other ``n - 1`` identifiers finds the moved
      function after ``n / 2`` calls on average; cycle tracing is cheaper when ``m - 1 < n / 2``.
    """
    n = without_arguments + with_arguments
    hit = 1 - comb(n - moved, per_task) / comb(n, per_task) if moved else 0.0
    return {"functions": n, "full_discovery": without_arguments + 2 * with_arguments,
            "task1_reference": without_arguments + 2 * with_arguments + 1, "solve_reference": per_task + 1,
            "drift_hit_probability": hit, "expected_recovery": hit * max(moved - 1, 0),
            "cycle_recovery": max(moved - 1, 0), "blind_search_recovery": n / 2}


def scramble_references(env: gym.Env) -> dict[str, float]:
    """:func:`analytic_references` for ``env``: its base tools (meta-commands aside), its tasks' size, its drift."""
    base = env.unwrapped
    meta = set(getattr(base, "meta_commands", ()))
    tools = [t for t in base.action_space.tools if t["name"] not in meta]
    with_arguments = sum(bool(t["parameters"]["properties"]) for t in tools)
    layer, moved = env, 0
    while isinstance(layer, gym.Wrapper):
        if isinstance(layer, MappingDrift):
            moved = moved_count(layer.fraction, len(tools))
        layer = layer.env
    return analytic_references(len(tools) - with_arguments, with_arguments, getattr(base, "functions_per_task", 4),
                               moved)


def _mean(values: list) -> float | None:
    return statistics.fmean(values) if values else None


class _Episode:
    """One trajectory, split into task attempts, with what each identifier ran in each attempt."""

    def __init__(self, trajectory: Trajectory):
        self.info = trajectory.info or {}
        self.tasks = self.info.get("tasks") or []
        self.mappings = self.info.get("mappings") or []
        self.keys = {f: set(params) for f, params in (self.info.get("schemas") or {}).items()}
        self.attempts: list[list[dict]] = [[]]
        for step in trajectory.steps:
            self.attempts[-1].append(step)
            if any(e.get("type") == "task_start" for e in step.get("events", [])):
                self.attempts.append([])
        if not self.attempts[-1] and len(self.attempts) > 1:
            self.attempts.pop()

    def retries(self) -> list[tuple[bool, bool]]:
        """(retried at once, retried at all) for every timed-out call."""
        steps = [s for attempt in self.attempts for s in attempt]
        out = []
        for i, step in enumerate(steps):
            if any(e.get("type") == "timeout" for e in step.get("events", [])):
                later = [s["action"] for s in steps[i + 1:]]
                out.append((bool(later) and later[0] == step["action"], step["action"] in later))
        return out

    def _calls(self, attempt: list[dict]) -> list[dict]:
        """The calls that ran (timeouts aside) to identifiers of the mapping."""
        return [s["action"] for s in self._ran(attempt)]

    def _moved(self, a: int) -> dict[str, tuple[str, str]]:
        """identifier -> (function before, function after) for the identifiers the boundary before attempt ``a`` moved."""
        if a == 0 or a >= len(self.mappings):
            return {}
        before, after = self.mappings[a - 1], self.mappings[a]
        return {i: (before[i], after[i]) for i in after if before.get(i) != after[i]}

    def _function(self, a: int, identifier: str) -> str | None:
        return self.mappings[min(a, len(self.mappings) - 1)].get(identifier) if self.mappings else None

    def _ran(self, attempt: list[dict]) -> list[dict]:
        """The steps of ``attempt`` whose call ran (timeouts aside) on an identifier of the mapping."""
        names = self.mappings[0] if self.mappings else {}
        return [s for s in attempt if isinstance(s.get("action"), dict) and s["action"].get("name") in names
                and not any(e.get("type") == "timeout" for e in s.get("events", []))]

    def _shaped(self, a: int, call: dict) -> bool:
        """Whether ``call`` had the argument keys of the function its identifier ran."""
        keys = self.keys.get(self._function(a, call["name"]))
        return keys is not None and isinstance(call.get("arguments"), dict) and set(call["arguments"]) == keys

    def coverage(self, a: int) -> int:
        return len({self._function(a, s["action"]["name"]) for s in self._ran(self.attempts[a])
                    if self._shaped(a, s["action"])}) if a < len(self.attempts) else 0

    def exact_repeats(self) -> int:
        count = 0
        for attempt in self.attempts:
            seen: set[str] = set()
            for step in self._ran(attempt):
                key = json.dumps(step["action"], sort_keys=True, default=str)
                count += key in seen
                seen.add(key)
        return count

    def outside_drift(self) -> int:
        return sum(1 for a, attempt in enumerate(self.attempts) if self._moved(a)
                   for step in self._ran(attempt) if step["action"]["name"] not in self._moved(a))

    def free_failures(self, position: int) -> int:
        """Application-level failures in the attempts at curriculum ``position`` made after the function's schema
        was known (its mismatch or a shaped call seen earlier in the episode): Appendix D charges them nothing."""
        failure = self._failure_token()
        known: set[str] = set()
        free = 0
        for a, attempt in enumerate(self.attempts):
            for step in self._ran(attempt):
                function, result = self._function(a, step["action"]["name"]), _result(step.get("observation"))
                mismatch = _mismatched(result)
                failed = result.get("success") is False if "success" in result else failure in result.values()
                if failed and not mismatch and function in known and self._position(a) == position:
                    free += 1
                if mismatch or self._shaped(a, step["action"]):
                    known.add(function)
        return free

    def _position(self, a: int) -> int:
        """Curriculum position of attempt ``a`` (a skipped task's later attempt belongs to its position)."""
        attempts = self.info.get("attempts") or []
        return attempts[a].get("task", a) if a < len(attempts) and isinstance(attempts[a], dict) else a

    def _failure_token(self) -> str | None:
        """The obfuscated failure status: the token beside a schema-mismatch message (None in plaintext)."""
        for attempt in self.attempts:
            for step in attempt:
                result = _result(step.get("observation"))
                if _mismatched(result) and "success" not in result:
                    return next((v for v in result.values() if isinstance(v, str) and not v.startswith(MISMATCH)), None)
        return None

    def stale_calls(self) -> int:
        count = 0
        for a, attempt in enumerate(self.attempts):
            moved, seen = self._moved(a), set()
            for call in self._calls(attempt):
                arguments = call.get("arguments")
                name, keys = call["name"], set(arguments) if isinstance(arguments, dict) else set()
                if name in moved:
                    old, new = moved[name]
                    if name in seen and keys == self.keys.get(old) and keys != self.keys.get(new):
                        count += 1
                    seen.add(name)
        return count

    def chain_opportunities(self) -> list[tuple[bool, float]]:
        """(followed the chain, chance that a uniform pick among used identifiers would) per opportunity."""
        out, used = [], set()
        for a, attempt in enumerate(self.attempts):
            moved, first = self._moved(a), set()
            calls = [c["name"] for c in self._calls(attempt)]
            where_before = {f: i for i, f in self.mappings[a - 1].items()} if moved else {}
            for k, name in enumerate(calls):
                chain = where_before.get(moved[name][1]) if name in moved else None
                if name not in first and name in used and chain not in first | {name, None}:
                    others = len(used - {name})
                    chance = 1 - (1 - 1 / others) ** FOLLOW_WINDOW if others else 0.0
                    out.append((chain in calls[k + 1:k + 1 + FOLLOW_WINDOW], chance))
                first.add(name)
                used.add(name)
        return out


def _result(observation: Any) -> dict:
    """The result at the head of an observation (notices after it ignored); {} when there is none."""
    if not isinstance(observation, str):
        return {}
    try:
        result, _ = json.JSONDecoder().raw_decode(observation)
    except json.JSONDecodeError:
        return {}
    return result if isinstance(result, dict) else {}


def _mismatched(result: dict) -> bool:
    return any(isinstance(v, str) and v.startswith(MISMATCH) for v in result.values())

"""STT-Arena domains as a verifiers taskset (verifiers 0.4, ``verifiers.v1``), for ``vf-eval sttgym-arena``.

verifiers 0.4 resolves ``vf-eval <id>`` to an installed package named after the id that exports
a ``Taskset`` subclass (and optionally a ``Harness``) through ``__all__``; ``sttgym_arena`` is that
package and re-exports this module. One task is one arena instance (env id, seed): its prompt is
the instance's request, its system prompt the one the evaluation's LLM agent gets.

The tools run in one MCP server for the whole run (``ArenaToolset``, a taskset-scoped server
verifiers starts once as ``python -m sttgym.adapters.verifiers``), so a rollout pays no tool process
start-up (importing verifiers alone takes seconds). ``ArenaTask.setup`` writes the task into the
rollout's state; the server reads it with every request and plays that rollout's own gym env,
reset to the task's seed: each call is one ``env.step``, so triggers fire, time passes and turns
count as in ``gym.make``. It lists the world's own names, descriptions and JSON schemas and hands
every call to the env as sent, so a wrong call gets the env's error text. Every call it plays is
recorded in the rollout's state.

The rollout stops when the env has played its turn cap (``ArenaTask.turn_cap``). The reward
(``ArenaTask.checklist``) replays those calls on a fresh env with the same seed and
ends the episode with the model's last reply: the env is deterministic given its seed and
actions, so this is the score the episode has in gym, impossible tasks judged on the reply.
``ArenaTask.breakdown`` reports, beside it and outside the reward, Pass@1 and each check.

    vf-eval sttgym-arena -n 10 --env.taskset.domains '["ColdChain"]' --model ... # or in Python:
    env = load_environment(domains=["ColdChain"], levels=["easy"], training_seeds=8)
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Iterator

import gymnasium as gym
import verifiers.v1 as vf
from mcp.types import CallToolResult, ListToolsResult, TextContent, Tool
from pydantic import Field
from verifiers.v1.harnesses.null import NullHarness

from sttgym.core import tool_env
from sttgym.env import MAX_TURNS
from sttgym.evaluation.summary import passed
from sttgym.manifests import MANIFEST, TRAINING_SEED_START, arena_manifest
from sttgym.registry import arena_ids, parse_arena_id, registered_arena_id

# verifiers finds a taskset's Taskset and default Harness among the classes __all__ names: one of each.
__all__ = ["ArenaChatHarness", "ArenaTaskset", "load_environment"]

ENDED = "The conversation has ended."


class ArenaData(vf.TaskData):
    """One arena instance and how its env is built."""

    env_id: str
    seed: int
    user: bool = True
    max_turns: int = MAX_TURNS


class ArenaState(vf.State):
    """What the shared tool server needs to play a rollout (its task and its id), and what it played."""

    task: ArenaData | None = None
    rollout: str = ""
    actions: list[dict] = Field(default_factory=list)


def make_env(data: ArenaData) -> tuple[gym.Env, str, dict]:
    """The instance's env, reset: the env, its first observation (the request) and reset info."""
    env = gym.make(registered_arena_id(data.env_id), user="rule" if data.user else "none", max_turns=data.max_turns)
    observation, info = env.reset(seed=data.seed)
    return env, observation, info


def play(env: gym.Env, action: dict) -> tuple[str, dict | None]:
    """One action on ``env``: the observation, and the episode's end info (``score``, ``checklist``) if it ended."""
    if tool_env(env).done:
        return ENDED, None
    observation, _, terminated, truncated, info = env.step(action)
    return observation, info if terminated or truncated else None


def replay(data: ArenaData, actions: list[dict]) -> tuple[gym.Env, dict | None]:
    """A fresh env of the instance with ``actions`` played, and the end info if they ended the episode."""
    env, _, _ = make_env(data)
    end = None
    for action in actions:
        end = play(env, action)[1] or end
    return env, end


class ArenaToolset(vf.Toolset[vf.SharedToolsetConfig, ArenaState]):
    """Every rollout's env behind one MCP server, each listing and playing the tools its gym env has.

    The tools differ from task to task, so the server answers ``tools/list`` and ``tools/call``
    itself, in an MCP middleware, from the rollout's env rather than from a fixed registry."""

    TOOL_PREFIX = None
    HELD = 64
    """Rollouts whose env stays built between calls; another's is rebuilt by replaying its calls."""

    def __init__(self, config: vf.SharedToolsetConfig) -> None:
        super().__init__(config)
        self.envs: OrderedDict[str, gym.Env] = OrderedDict()

    def register(self, mcp: Any) -> None:
        mcp.middleware.append(self.intercept)

    async def intercept(self, ctx: Any, call_next: Any) -> Any:
        if ctx.method not in ("tools/list", "tools/call"):
            return await call_next(ctx)
        # _with_state pulls the calling rollout's state before and pushes it back after
        return await self._with_state(lambda: self.respond(self.state, ctx.method, ctx.params or {}))()

    def respond(self, state: ArenaState, method: str, params: dict) -> ListToolsResult | CallToolResult:
        """The answer to a ``tools/list`` or ``tools/call`` request of the rollout whose state is ``state``."""
        env = self.env(state)
        if method == "tools/list":  # in the order, and with the schemas, the gym env lists
            return ListToolsResult(tools=[Tool(name=t["function"]["name"], description=t["function"]["description"],
                                               input_schema=t["function"]["parameters"])
                                          for t in tool_env(env).tool_listing()])
        action = {"name": params["name"], "arguments": params.get("arguments") or {}}
        state.actions.append(action)
        return CallToolResult(content=[TextContent(type="text", text=play(env, action)[0])])

    def env(self, state: ArenaState) -> gym.Env:
        """The rollout's env with its calls so far played, kept from its last call when it still is."""
        if state.task is None:
            raise ValueError("this rollout's state names no arena task (ArenaTask.setup writes it)")
        env = self.envs.pop(state.rollout, None)
        if env is None or tool_env(env).turn != len(state.actions):
            env = replay(state.task, state.actions)[0]
        self.envs[state.rollout] = env
        while len(self.envs) > self.HELD:
            self.envs.popitem(last=False)[1].close()
        return env


class ArenaTask(vf.Task[ArenaData, ArenaState]):
    async def setup(self, trace: vf.Trace, runtime: Any) -> None:
        trace.state.task, trace.state.rollout = self.data, trace.id

    @vf.stop
    async def turn_cap(self, trace: vf.Trace) -> bool:
        """The env has played its last turn: nothing the model does next changes the episode."""
        return len(trace.state.actions) >= self.data.max_turns

    def outcome(self, trace: vf.Trace) -> dict:
        """The episode's end info: the calls the rollout played, on a fresh env, ended by the model's last reply."""
        return replay(self.data, [*trace.state.actions, {"content": trace.last_reply}])[1]

    @vf.reward(weight=1.0)
    async def checklist(self, trace: vf.Trace) -> float:
        """The env's reward for the episode the rollout played."""
        return float(self.outcome(trace)["score"])

    @vf.metric
    async def breakdown(self, trace: vf.Trace) -> dict[str, float]:
        """Pass@1 (``pass``), under the task's level and domain too, and whether each check passed (``check/<name>``).

        A rollout records only its own level, domain and checks, so a mean over the rollouts that carry a
        name is that group's figure (traces.jsonl, the platform's aggregate; vf-eval's live dashboard counts
        a missing name as 0)."""
        end = self.outcome(trace)
        domain, _, level = parse_arena_id(self.data.env_id)
        solved = passed({"reward": end["score"]})
        return {"pass": solved, f"pass/{level}": solved, f"pass/{domain}": solved,
                **{f"check/{check['name']}": float(check["passed"]) for check in end["checklist"]}}


class ArenaConfig(vf.TasksetConfig):
    domains: list[str] = Field(default_factory=list)
    """Arena domains to play (all registered ones when empty)."""
    conflicts: list[str] = Field(default_factory=list)
    """Conflict codes to keep (T1, S2, ...; all when empty)."""
    levels: list[str] = Field(default_factory=list)
    """Difficulty levels to keep (easy, medium, hard; all when empty)."""
    manifest: str = MANIFEST
    """The frozen benchmark manifest whose (env id, seed) pairs are the tasks."""
    training_seeds: int = 0
    """When positive: that many training seeds per env id, from TRAINING_SEED_START, instead of the manifest."""
    user: bool = True
    """Whether the rule-based user simulator answers chat_with_user (without it the tool is absent)."""
    max_turns: int = MAX_TURNS
    """The env's turn cap: the episode ends (truncated) after this many calls."""


class ArenaTaskset(vf.Taskset[ArenaTask, ArenaConfig]):
    @classmethod
    def toolsets(cls, config: ArenaConfig) -> list[vf.Toolset]:
        return [ArenaToolset(vf.SharedToolsetConfig())]

    def instances(self) -> list[tuple[str, int]]:
        """The (env id, seed) pairs the config selects, in manifest order."""
        config = self.config
        if config.training_seeds > 0:
            ids = [i for d in config.domains for i in arena_ids(d)] if config.domains else arena_ids()
            pairs = [(i, TRAINING_SEED_START + k) for i in ids for k in range(config.training_seeds)]
        else:
            pairs = arena_manifest(config.domains, config.manifest)
        chosen = [(env_id, seed) for env_id, seed in pairs
                  if (not config.conflicts or parse_arena_id(env_id)[1] in config.conflicts)
                  and (not config.levels or parse_arena_id(env_id)[2] in config.levels)]
        if not chosen:
            raise ValueError(f"no arena instance has domain in {config.domains or 'any'}, conflict in "
                             f"{config.conflicts or 'any'} and level in {config.levels or 'any'}")
        return chosen

    def load(self) -> Iterator[ArenaTask]:
        from sttgym.adapters.trl import system_prompt

        for env_id, seed in self.instances():
            data = ArenaData(env_id=env_id, seed=seed, user=self.config.user, max_turns=self.config.max_turns)
            env, request, info = make_env(data)
            prompts = {"prompt": request, "system_prompt": system_prompt(env, request, info, seed)}
            env.close()
            yield ArenaTask(data.model_copy(update={"id": f"{env_id}@{seed}", **prompts}), self.config.task)


class ArenaChatHarness(NullHarness):
    """verifiers' tool-calling chat loop, the default for this taskset (its default, ``bash``, adds a shell)."""


def load_environment(**kwargs: Any) -> vf.Env:
    """The verifiers env of the arena tasks ``kwargs`` select (the fields of :class:`ArenaConfig`)."""
    config = vf.resolve_env_config({"taskset": {"id": "sttgym-arena", **kwargs}})
    return vf.load_environment(config)


if __name__ == "__main__":
    ArenaToolset.run()

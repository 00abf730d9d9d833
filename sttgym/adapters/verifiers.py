"""STT-Arena domains as a verifiers taskset (verifiers 0.4, ``verifiers.v1``), for ``vf-eval sttgym-arena``.

verifiers 0.4 resolves ``vf-eval <id>`` to an installed package named after the id that exports
a ``Taskset`` subclass (and optionally a ``Harness``) through ``__all__``; ``sttgym_arena`` is that
package and re-exports this module. One task is one arena instance (env id, seed): its prompt is
the instance's request, its system prompt the one the evaluation's LLM agent gets.

The tools run in a per-rollout MCP server (``ArenaToolset``, started by verifiers as
``python -m sttgym.adapters.verifiers``) that holds one gym env, reset to the task's seed: each
call is one ``env.step``, so triggers fire, time passes and turns count as in ``gym.make``. The
server advertises the world's own names, descriptions and JSON schemas, and hands every call
to the env unvalidated, so a wrong call gets the env's error text (MCP drops arguments the schema
does not name before the env sees them). Every call it plays is recorded in the rollout's state.

The rollout stops when the env has played its turn cap (``ArenaTask.turn_cap``). The reward
(``ArenaTask.checklist``) replays those calls on a fresh env with the same seed and
ends the episode with the model's last reply: the env is deterministic given its seed and
actions, so this is the score the episode has in gym, impossible tasks judged on the reply.

    vf-eval sttgym-arena -n 10 --env.taskset.domains '["ColdChain"]' --model ... # or in Python:
    env = load_environment(domains=["ColdChain"], levels=["easy"], training_seeds=8)
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any, Iterator

import gymnasium as gym
import verifiers.v1 as vf
from pydantic import Field
from pydantic.json_schema import PydanticJsonSchemaWarning
from verifiers.v1.harnesses.null import NullHarness

from sttgym.core import tool_env
from sttgym.env import MAX_TURNS
from sttgym.manifests import MANIFEST, TRAINING_SEED_START, arena_manifest
from sttgym.registry import arena_ids, parse_arena_id, registered_arena_id

# verifiers finds a taskset's Taskset and default Harness among the classes __all__ names: one of each.
__all__ = ["ArenaChatHarness", "ArenaTaskset", "load_environment"]

ENDED = "The conversation has ended."


class ArenaState(vf.State):
    """What a rollout's tool server played, read back by the reward."""

    actions: list[dict] = Field(default_factory=list)


class ArenaData(vf.TaskData):
    """One arena instance and how its env is built."""

    env_id: str
    seed: int
    user: bool = True
    max_turns: int = MAX_TURNS


def make_env(data: ArenaData) -> tuple[gym.Env, str, dict]:
    """The instance's env, reset: the env, its first observation (the request) and reset info."""
    env = gym.make(registered_arena_id(data.env_id), user="rule" if data.user else "none", max_turns=data.max_turns)
    observation, info = env.reset(seed=data.seed)
    return env, observation, info


def play(env: gym.Env, action: dict) -> tuple[str, float | None]:
    """One action on ``env``: the observation, and the reward if the episode ended with it."""
    if tool_env(env).done:
        return ENDED, None
    observation, reward, terminated, truncated, _ = env.step(action)
    return observation, float(reward) if terminated or truncated else None


_ABSENT = object()  # an argument the model left out: the env, not MCP, tells it what is missing


class ArenaToolset(vf.Toolset[vf.ToolsetConfig, ArenaState]):
    """The rollout's env behind MCP: one tool per tool the env accepts, under the world's own names."""

    TOOL_PREFIX = None

    async def setup_task(self, task: ArenaData) -> None:
        self.env, _, info = make_env(task)
        self.listing = [tool["function"] for tool in info["tools"]]

    def register(self, mcp: Any) -> None:
        for tool in self.listing:  # in the order, and with the schemas, the gym env lists
            name = tool["name"]
            with warnings.catch_warnings():  # the _ABSENT default has no JSON form; the schema is replaced below
                warnings.simplefilter("ignore", PydanticJsonSchemaWarning)
                mcp.add_tool(self._with_state(self._forwarding(name, tool["parameters"])), name=name,
                             description=tool["description"])
            # MCP derives a schema from the signature; the model must see the world's own.
            mcp._tool_manager.get_tool(name).parameters = tool["parameters"]

    def _forwarding(self, name: str, parameters: dict) -> Any:
        def call(**arguments: Any) -> str:
            action = {"name": name, "arguments": {k: v for k, v in arguments.items() if v is not _ABSENT}}
            self.state.actions.append(action)
            return play(self.env, action)[0]

        call.__name__ = name
        call.__signature__ = inspect.Signature([
            inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY, default=_ABSENT, annotation=Any)
            for p in parameters.get("properties", {})])
        return call


class ArenaTask(vf.Task[ArenaData, ArenaState]):
    @classmethod
    def toolsets(cls, config: vf.TaskConfig) -> list[vf.Toolset]:
        return [ArenaToolset(vf.ToolsetConfig())]

    @vf.stop
    async def turn_cap(self, trace: vf.Trace) -> bool:
        """The env has played its last turn: nothing the model does next changes the episode."""
        return len(trace.state.actions) >= self.data.max_turns

    @vf.reward(weight=1.0)
    async def checklist(self, trace: vf.Trace) -> float:
        """The env's reward for the calls the rollout played, ended by the model's last reply."""
        env, _, _ = make_env(self.data)
        for action in trace.state.actions:
            _, reward = play(env, action)
            if reward is not None:
                return reward
        _, reward = play(env, {"content": trace.last_reply})
        return 0.0 if reward is None else reward


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

"""The observation-only adversaries of the probe panel do what their descriptions say (their scores are held to
the panel's ceilings by sttgym validate and tests/core/test_registered_envs.py)."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import sttgym
from sttgym.agents.adversaries import RereadEveryWrite


@pytest.mark.parametrize("env_id", ["STTArena/Hotel-S2-medium", "STTArena/Freight-T2-hard",
                                    "STTArena/ColdChain-S1-easy"])
def test_reread_every_write_reads_what_each_write_touched(env_id):
    env = gym.make(env_id)
    traj = sttgym.rollout(env, RereadEveryWrite(), seed=0)
    tools = env.unwrapped.tools
    calls = [s["action"] for s in traj.steps if "name" in s["action"]]
    results = [json.loads(s["observation"].split("\n")[0]) for s in traj.steps if "name" in s["action"]]
    writes = [i for i, c in enumerate(calls) if tools[c["name"]].mutates]
    assert writes, "the request's writes were tried"
    for i in writes:
        if not results[i].get("success"):
            continue
        touched = {v for v in calls[i]["arguments"].values() if isinstance(v, str)}
        rest = calls[i + 1:]
        # the next calls re-read an entity the write named (before any other write) or there was none to read
        reads = [c for c in rest[:next((k for k, c in enumerate(rest) if tools[c["name"]].mutates), len(rest))]]
        assert any(set(map(str, c["arguments"].values())) & touched for c in reads) or not rest, (i, calls[i])
    assert not tools[calls[-1]["name"]].mutates  # it ends on a read of what it wrote to


def test_reread_every_write_retries_a_failed_write_without_the_entity_its_error_names():
    """Airline T3: the promotion the request names has lapsed; the confirm that used it fails naming it, and the
    retry leaves it out."""
    env = gym.make("STTArena/Airline-T3-easy")
    traj = sttgym.rollout(env, RereadEveryWrite(), seed=0)
    steps = [(s["action"], json.loads(s["observation"].split("\n")[0])) for s in traj.steps if "name" in s["action"]]
    confirms = [(a, r) for a, r in steps if a["name"] == "confirm_booking"]
    (first, failed), (second, _) = confirms[:2]
    named = {v for v in first["arguments"].values() if v in failed["error"]}
    assert not failed["success"] and named and not named & set(second["arguments"].values())

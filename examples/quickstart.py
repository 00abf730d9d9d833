"""Make an STT-Arena env, call a few tools, end the episode, and read the reward breakdown.

    python examples/quickstart.py
"""

import re

import gymnasium as gym

import sttgym
from sttgym.agents import NominalAgent, OracleAgent

env = gym.make("STTArena/ColdChain-T2-medium", render_mode="ansi")
query, info = env.reset(seed=3)
print("USER:", query)
print("task:", info["task"])
print("tools:", ", ".join(t["function"]["name"] for t in info["tools"]))

# An agent reads the ids it needs from the request.
hub = re.search(r"HUB-[A-Z]+", query).group()
clinic = re.search(r"CLINIC-[A-Z]+", query).group()
for call in ({"name": "get_goods_inventory_at_site", "arguments": {"site_id": hub}},
             {"name": "list_operational_hours", "arguments": {"site_id": clinic}},
             {"name": "list_operational_hours", "arguments": {"site": clinic}}):  # a wrong argument name
    obs, reward, terminated, truncated, info = env.step(call)
    print(f"\n{call['name']} -> {obs[:300]}")
    print("simulated time:", info["clock"])

# A plain reply ends the episode; the reward is the fraction of checks that hold.
obs, reward, terminated, truncated, info = env.step({"content": "Task Completed"})
print(f"\nreward after giving up: {reward:.2f}")
for check in info["checklist"]:
    print(f"  [{'x' if check['passed'] else ' '}] {check['name']}: {check['description']}")

# The reference agents show what the task asks for.
for agent in (NominalAgent(), OracleAgent()):
    traj = sttgym.rollout(env, agent, seed=3)
    fired = [e["trigger"] for e in traj.info["trigger_log"]]
    print(f"\n{type(agent).__name__}: reward {traj.reward:.2f} in {traj.tool_calls} calls; triggers fired: {fired}")

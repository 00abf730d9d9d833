"""The operator's prior knowledge of the ScrambleTool terminal, for :class:`~sttgym.agents.CycleTracingAgent`.

It is what a sysadmin brings to an unfamiliar, obfuscated terminal: what each of the 28
functions does and takes, how each answers a nonsense probe, and how each kind of task is
done. The probe answers are read off a scratch machine (seed 0), never an episode's
machine, and nothing here knows an episode's mapping, aliases, tokens or output keys (answers
are recognised by their shape: each field's type, in order).
"""

from __future__ import annotations

import re
from functools import cache

import numpy as np

from sttgym.agents.cycle_tracing import Playbook, Procedure, probe_arguments, signature
from sttgym.clock import Clock
from sttgym.tools import collect_tools

from sttgym.envs.scramble.machine import Machine
from sttgym.envs.scramble.templates import parse_goal
from sttgym.envs.scramble.terminal import FUNCTIONS, Terminal

__all__ = ["playbook"]

_ANNOUNCED = re.compile(r"Task \d+ of \d+(?: \([^)]*\))?: (.+)")


def _goal(text: str) -> str | None:
    found = _ANNOUNCED.search(text)
    return found.group(1).strip() if found else None


def _plan(goal: str) -> Procedure | None:
    found = parse_goal(goal)
    return found[0].procedure(found[1]) if found else None


@cache
def playbook() -> Playbook:
    """The terminal's playbook (built once, from a scratch machine)."""
    machine = Machine(np.random.default_rng(0))
    machine.populate()
    tools = collect_tools(Terminal(machine.state, Clock("2025-03-14T09:00")))
    functions = {name: {p: s["type"] for p, s in tools[name].parameters["properties"].items()} for name in FUNCTIONS}
    signatures, echoed = {}, {}
    for name, params in functions.items():
        probes = probe_arguments(list(params.values()))
        result = tools[name].func(**dict(zip(params, probes)))
        answer = result.get("data", result.get("error"))
        known = (tuple(sorted(params.values())), signature(result["success"], answer))
        if known in signatures:
            raise RuntimeError(f"{name} and {signatures[known]} answer a probe alike: the playbook cannot tell them apart")
        signatures[known] = name
        twins = [p for p in params if list(params.values()).count(params[p]) > 1]
        quoted = [p for p, probe in zip(params, probes) if p in twins and str(probe) in str(answer)]
        if quoted:
            echoed[name] = quoted[0]
    return Playbook(functions, signatures, echoed, goal=_goal, plan=_plan)

"""A scripted operator for the plaintext terminal: runs a template's procedure through ``call``."""

from __future__ import annotations

from typing import Any, Callable

from sttgym.envs.scramble.templates import parse_goal


def run_procedure(goal: str, call: Callable[[str, dict], dict]) -> tuple[str, list[str]]:
    """The answer a goal's procedure reaches through ``call(name, arguments) -> result``, and the functions called."""
    template, given = parse_goal(goal)
    procedure, called = template.procedure(given), []
    request: Any = next(procedure)
    try:
        while True:
            name, arguments = request
            called.append(name)
            result = call(name, arguments)
            assert result["success"], (name, arguments, result)
            request = procedure.send(result["data"])
    except StopIteration as stop:
        return stop.value, called


def env_caller(env) -> Callable[[str, dict], dict]:
    """``call`` for :func:`run_procedure` that steps a plaintext env and returns the step's result."""
    return lambda name, arguments: env.step({"name": name, "arguments": arguments})[4]["result"]


def layer(env, kind):
    """The wrapper of type ``kind`` in ``env``'s stack (tests peek at its secrets; agents may not)."""
    while not isinstance(env, kind):
        env = env.env
    return env

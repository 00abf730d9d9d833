"""ScrambleTool: a simulated terminal with obfuscated tools and a five-task curriculum.

Registers the paper's six conditions, each the plaintext curriculum env under a stack of
:mod:`sttgym.wrappers` recorded in its spec:

- ``ScrambleTool/Unscrambled``: the plaintext control;
- ``ScrambleTool/Base``: obfuscated names, parameters, outputs and status;
- ``ScrambleTool/Drift``: Base + 7 of the 28 identifiers moved by one cycle at each task boundary;
- ``ScrambleTool/Failure``: Base + each valid call times out with probability ``FAILURE_P``;
- ``ScrambleTool/Window``: Base + a 10-action execution window after each task's trigger;
- ``ScrambleTool/All``: Base + drift + failures + windows.

It also registers the terminal's playbook for the cycle-tracing reference agent.
"""

import gymnasium as gym

from sttgym.agents.cycle_tracing import register_playbook
from sttgym.wrappers import MappingDrift, Obfuscate, StochasticFailure, TemporalWindow

from sttgym.envs.scramble.playbook import playbook

ENTRY_POINT = "sttgym.envs.scramble.env:ScrambleEnv"
DRIFT_FRACTION = 0.25  # 7 of 28 identifiers, as in the paper
FAILURE_P = 0.1  # see docs/scramble.md: frequent enough to hit most tasks, rare enough to cost little
WINDOW_K = 10

_OBFUSCATE = Obfuscate.wrapper_spec()
_DRIFT = MappingDrift.wrapper_spec(fraction=DRIFT_FRACTION)
_FAILURE = StochasticFailure.wrapper_spec(p=FAILURE_P)
_WINDOW = TemporalWindow.wrapper_spec(k=WINDOW_K)

CONDITIONS = {
    "Unscrambled": (),
    "Base": (_OBFUSCATE,),
    "Drift": (_OBFUSCATE, _DRIFT),
    "Failure": (_OBFUSCATE, _FAILURE),
    "Window": (_OBFUSCATE, _WINDOW),
    "All": (_OBFUSCATE, _DRIFT, _FAILURE, _WINDOW),
}

for _condition, _wrappers in CONDITIONS.items():
    if f"ScrambleTool/{_condition}" not in gym.registry:
        gym.register(f"ScrambleTool/{_condition}", entry_point=ENTRY_POINT, additional_wrappers=_wrappers)

register_playbook("ScrambleTool", playbook())

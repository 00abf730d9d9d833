"""ScrambleTool: a simulated terminal with obfuscated tools and a five-task curriculum.

Registers the paper's six conditions, each the plaintext curriculum env under a stack of
:mod:`sttgym.wrappers` recorded in its spec:

- ``ScrambleTool/Unscrambled``: the plaintext control;
- ``ScrambleTool/Base``: obfuscated names, parameters, outputs and status;
- ``ScrambleTool/Drift``: Base + 7 of the 28 identifiers moved by one cycle at each task boundary;
- ``ScrambleTool/Failure``: Base + each valid call times out with probability ``FAILURE_P``;
- ``ScrambleTool/Window``: Base + a 10-action execution window after each task's trigger;
- ``ScrambleTool/All``: Base + drift + failures + windows.
"""

import gymnasium as gym

from sttgym.wrappers import Obfuscate

ENTRY_POINT = "sttgym.envs.scramble.env:ScrambleEnv"

CONDITIONS = {"Unscrambled": (), "Base": (Obfuscate.wrapper_spec(),)}

for _condition, _wrappers in CONDITIONS.items():
    if f"ScrambleTool/{_condition}" not in gym.registry:
        gym.register(f"ScrambleTool/{_condition}", entry_point=ENTRY_POINT, additional_wrappers=_wrappers)

"""ScrambleTool: a simulated terminal with obfuscated tools and a five-task curriculum.

Registers the paper's six conditions, each the plaintext curriculum env under a stack of
:mod:`sttgym.wrappers` (:func:`make_condition`):

- ``ScrambleTool/Unscrambled``: the plaintext control;
- ``ScrambleTool/Base``: obfuscated names, parameters, outputs and status;
- ``ScrambleTool/Drift``: Base + 7 of the 28 identifiers moved by one cycle at each task boundary;
- ``ScrambleTool/Failure``: Base + each valid call times out with probability ``FAILURE_P``;
- ``ScrambleTool/Window``: Base + a 10-action execution window after each task's trigger;
- ``ScrambleTool/All``: Base + drift + failures + windows.
"""

import gymnasium as gym

from sttgym.vector import make_vector_env
from sttgym.wrappers import MappingDrift, Obfuscate, StochasticFailure, TemporalWindow

DRIFT_FRACTION = 0.25  # 7 of 28 identifiers, as in the paper
FAILURE_P = 0.1  # see docs/scramble.md: frequent enough to hit most tasks, rare enough to cost little
WINDOW_K = 10

_OBFUSCATE = (Obfuscate, {})
_DRIFT = (MappingDrift, {"fraction": DRIFT_FRACTION})
_FAILURE = (StochasticFailure, {"p": FAILURE_P})
_WINDOW = (TemporalWindow, {"k": WINDOW_K})

CONDITIONS = {
    "Unscrambled": (),
    "Base": (_OBFUSCATE,),
    "Drift": (_OBFUSCATE, _DRIFT),
    "Failure": (_OBFUSCATE, _FAILURE),
    "Window": (_OBFUSCATE, _WINDOW),
    "All": (_OBFUSCATE, _DRIFT, _FAILURE, _WINDOW),
}


def make_condition(condition: str, **kwargs) -> gym.Env:
    """The terminal under one condition's wrapper stack (the registered entry point of ``ScrambleTool/<condition>``).

    The stack is built here rather than by gymnasium's ``additional_wrappers``, which would
    rule out the vector entry point that makes ``gym.make_vec`` asynchronous and divergence-safe.
    """
    from sttgym.envs.scramble.env import ScrambleEnv

    env: gym.Env = ScrambleEnv(**kwargs)
    for wrapper, options in CONDITIONS[condition]:
        env = wrapper(env, **options)
    return env


def condition_vector_env(num_envs: int = 1, vectorization: str = "async", *, condition: str,
                         **kwargs) -> gym.vector.VectorEnv:
    """The vector entry point of ``ScrambleTool/<condition>`` (``gym.make_vec``)."""
    return make_vector_env(f"ScrambleTool/{condition}", num_envs, vectorization, **kwargs)


# Entry points are named by string and the condition is a keyword, so every spec serialises (env.spec.to_json()).
for _condition in CONDITIONS:
    _id = f"ScrambleTool/{_condition}"
    if _id not in gym.registry:
        gym.register(_id, entry_point=f"{__name__}:make_condition", kwargs={"condition": _condition},
                     vector_entry_point=f"{__name__}:condition_vector_env")

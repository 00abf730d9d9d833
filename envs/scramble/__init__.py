"""ScrambleTool: a simulated terminal with obfuscated tools and a five-task curriculum.

Registers the paper's six conditions, each the plaintext curriculum env under a stack of
:mod:`sttgym.wrappers` (:func:`make_condition`):

- ``ScrambleTool/Unscrambled``: the plaintext control;
- ``ScrambleTool/Base``: obfuscated names, parameters, output keys (nested ones included) and status;
- ``ScrambleTool/Drift``: Base + 7 of the 28 identifiers moved by one cycle at each task boundary;
- ``ScrambleTool/Failure``: Base + each valid call times out with probability ``FAILURE_P``;
- ``ScrambleTool/Window``: Base + a 10-action execution window after each task's trigger;
- ``ScrambleTool/All``: Base + drift + failures + windows.
"""

import gymnasium as gym

from sttgym.vector import make_vector_env
from sttgym.wrappers import MappingDrift, Obfuscate, StochasticFailure, TemporalWindow

# The condition settings; the ones the paper leaves illegible are marked, and each is a keyword of gym.make.
DRIFT_FRACTION = 0.25  # 7 of 28 identifiers, as in the paper
FAILURE_P = 0.1  # illegible in the paper; see docs/scramble.md: frequent enough to hit most tasks, rare enough to cost little
WINDOW_K = 10  # as in the paper
NESTED_KEYS = True  # illegible: the paper obfuscates "output fields" without saying how deep; all of them here
VERBATIM = ("fetch_web_content",)  # a web page's JSON body is content relayed as is, like a file's text; goals name its fields

SETTINGS = {"drift_fraction": DRIFT_FRACTION, "failure_p": FAILURE_P, "window_k": WINDOW_K,
            "nested_keys": NESTED_KEYS, "verbatim": VERBATIM}

_OBFUSCATE = (Obfuscate, lambda s: {"nested": s["nested_keys"], "verbatim": s["verbatim"]})
_DRIFT = (MappingDrift, lambda s: {"fraction": s["drift_fraction"]})
_FAILURE = (StochasticFailure, lambda s: {"p": s["failure_p"]})
_WINDOW = (TemporalWindow, lambda s: {"k": s["window_k"]})

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

    Keywords named in :data:`SETTINGS` override a condition setting, e.g.
    ``gym.make("ScrambleTool/All", failure_p=0.2, window_k=5)``; the rest go to
    :class:`~sttgym.envs.scramble.env.ScrambleEnv` (``tasks``, ``budget``, ``templates``).
    The stack is built here rather than by gymnasium's ``additional_wrappers``, which would
    rule out the vector entry point that makes ``gym.make_vec`` asynchronous and divergence-safe.
    """
    from sttgym.envs.scramble.env import ScrambleEnv

    settings = {name: kwargs.pop(name, default) for name, default in SETTINGS.items()}
    env: gym.Env = ScrambleEnv(**kwargs)
    for wrapper, options in CONDITIONS[condition]:
        env = wrapper(env, **options(settings))
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

"""ScrambleTool: a simulated terminal with obfuscated tools and a five-task curriculum.

Registers ``ScrambleTool/Unscrambled`` (the plaintext control).
"""

import gymnasium as gym

ENTRY_POINT = "sttgym.envs.scramble.env:ScrambleEnv"

if "ScrambleTool/Unscrambled" not in gym.registry:
    gym.register("ScrambleTool/Unscrambled", entry_point=ENTRY_POINT)

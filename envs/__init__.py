"""The sttgym environment library: STT-Arena domains and the ScrambleTool terminal."""

from sttgym.envs import arena, scramble  # noqa: F401

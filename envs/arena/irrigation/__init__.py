"""The Irrigation domain of STT-Arena: a farm's pumps, pipe network, valves, runs, water quota and crews."""

from sttgym.envs.arena.irrigation.scenarios import SCENARIOS
from sttgym.envs.arena.irrigation.world import IrrigationWorld
from sttgym.registry import register_domain

register_domain(IrrigationWorld, SCENARIOS)

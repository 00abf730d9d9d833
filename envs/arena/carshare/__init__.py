"""The CarShare domain of STT-Arena: a car-sharing operator's console for cars, members, trips and zones."""

from sttgym.envs.arena.carshare.scenarios import SCENARIOS
from sttgym.envs.arena.carshare.world import CarShareWorld
from sttgym.registry import register_domain

register_domain(CarShareWorld, SCENARIOS)

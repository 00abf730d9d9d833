"""The CarRental domain of STT-Arena: a rental operator's fleet, depots, reservations and pricing."""

from sttgym.envs.arena.carrental.scenarios import SCENARIOS
from sttgym.envs.arena.carrental.world import CarRentalWorld
from sttgym.registry import register_domain

register_domain(CarRentalWorld, SCENARIOS)

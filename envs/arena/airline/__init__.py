"""The Airline domain of STT-Arena: an airline reservation desk working one traveller's itinerary."""

from sttgym.envs.arena.airline.scenarios import SCENARIOS
from sttgym.envs.arena.airline.world import AirlineWorld
from sttgym.registry import register_domain

register_domain(AirlineWorld, SCENARIOS)

"""The Hotel domain of STT-Arena: a hotel group's reservations desk for a guest or a small event party."""

from sttgym.envs.arena.hotel.scenarios import SCENARIOS
from sttgym.envs.arena.hotel.world import HotelWorld
from sttgym.registry import register_domain

register_domain(HotelWorld, SCENARIOS)

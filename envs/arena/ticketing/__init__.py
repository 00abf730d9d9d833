"""The Ticketing domain of STT-Arena: an event-ticketing platform's console selling seats for a show."""

from sttgym.envs.arena.ticketing.scenarios import SCENARIOS
from sttgym.envs.arena.ticketing.world import TicketingWorld
from sttgym.registry import register_domain

register_domain(TicketingWorld, SCENARIOS)

"""The Freight domain of STT-Arena: a cross-border forwarder's crossings, customs, slots, trucks and movements."""

from sttgym.envs.arena.freight.scenarios import SCENARIOS
from sttgym.envs.arena.freight.world import FreightWorld
from sttgym.registry import register_domain

register_domain(FreightWorld, SCENARIOS)

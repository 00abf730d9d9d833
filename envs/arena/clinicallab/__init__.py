"""The ClinicalLab domain of STT-Arena: specimen pickups, courier relays and lab intake under stability limits."""

from sttgym.envs.arena.clinicallab.scenarios import SCENARIOS
from sttgym.envs.arena.clinicallab.world import ClinicalLabWorld
from sttgym.registry import register_domain

register_domain(ClinicalLabWorld, SCENARIOS)

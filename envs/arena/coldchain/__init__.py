"""ColdChain: the STT-Arena cold-chain logistics domain (hubs, depots, refrigerated vehicles, clinics)."""

from sttgym.envs.arena.coldchain.scenarios import SCENARIOS
from sttgym.envs.arena.coldchain.world import ColdChainWorld
from sttgym.registry import register_domain

register_domain(ColdChainWorld, SCENARIOS)

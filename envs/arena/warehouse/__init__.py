"""The Warehouse domain of STT-Arena: a distribution network's stock, orders, docks, trucks and dispatches."""

from sttgym.envs.arena.warehouse.scenarios import SCENARIOS
from sttgym.envs.arena.warehouse.world import WarehouseWorld
from sttgym.registry import register_domain

register_domain(WarehouseWorld, SCENARIOS)

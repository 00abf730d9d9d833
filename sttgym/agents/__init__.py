"""Agents that act in sttgym environments."""

from sttgym.agents.base import Agent
from sttgym.agents.reference import NominalAgent, NoopAgent, OracleAgent, PlanAgent, RandomAgent
from sttgym.agents.llm import LLMAgent, MemoryAgent
from sttgym.agents.cycle_tracing import CycleTracingAgent

__all__ = ["Agent", "PlanAgent", "OracleAgent", "NominalAgent", "NoopAgent", "RandomAgent", "LLMAgent", "MemoryAgent",
           "CycleTracingAgent"]

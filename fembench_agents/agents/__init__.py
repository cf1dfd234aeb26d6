"""Solver agents: the prompt-driven scaffolds, the OpenHands coding agent, and
the registry that turns an agent spec into one (`make_agent`)."""

from fembench_agents.agents.registry import make_agent, register_agent

__all__ = ["make_agent", "register_agent"]

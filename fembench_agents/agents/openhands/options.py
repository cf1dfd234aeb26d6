"""Options of the OpenHands agent, parsed from the agent spec
`openhands[:key=value,...]` (e.g. `openhands:attempts=3,iterations=20`)."""

from __future__ import annotations

from pydantic import Field

from fembench_agents.agents.options import AgentOptions


class OpenHandsOptions(AgentOptions):
    """`max_iterations` caps agent steps per attempt (one step = one model call
    and the tool calls it asks for); `max_cost_usd` and `max_seconds` cap the
    whole episode. `attempts` > 1 makes a feedback loop: the evaluator's
    feedback on a failed final file is sent as a new message in the same
    conversation. `command_seconds` is how long one terminal command may run
    without output before the agent gets control back.
    Spec: `attempts=3,iterations=10,cost=0.5,seconds=600`."""

    AGENT = "openhands agent"
    ALIASES = {
        "iterations": "max_iterations",
        "cost": "max_cost_usd",
        "seconds": "max_seconds",
        "command_seconds": "command_seconds",
    }
    attempts: int = Field(default=1, ge=1)
    max_iterations: int = Field(default=30, ge=1)
    max_cost_usd: float | None = Field(default=None, gt=0)
    max_seconds: float = Field(default=900.0, gt=0)
    command_seconds: int = Field(default=30, ge=1)

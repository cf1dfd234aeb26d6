"""Options of the mini-swe-agent solver, parsed from the agent spec
`mini-swe-agent[:key=value,...]` (e.g. `mini-swe-agent:attempts=3,steps=20`)."""

from __future__ import annotations

from pydantic import Field

from fembench_agents.agents.options import AgentOptions

SUBMIT_COMMAND = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"  # the command that ends an attempt


class MiniSweOptions(AgentOptions):
    """`max_steps` caps the agent's steps per attempt (one step: one model
    call and the one command it asks for); `max_cost_usd` and `max_seconds`
    cap the whole episode. `attempts` > 1 sends the evaluator's feedback on a
    failed final file as a new message of the same conversation.
    `command_seconds` is how long one command may run before it is killed.
    Spec: `attempts=3,steps=10,cost=0.5,seconds=600`."""

    AGENT = "mini-swe-agent"
    ALIASES = {"steps": "max_steps", "cost": "max_cost_usd", "seconds": "max_seconds"}
    attempts: int = Field(default=1, ge=1)
    max_steps: int = Field(default=30, ge=1)
    max_cost_usd: float | None = Field(default=None, gt=0)
    max_seconds: float = Field(default=900.0, gt=0)
    command_seconds: int = Field(default=30, ge=1)

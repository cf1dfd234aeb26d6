"""The contracts agents, sessions and models plug into. Small on purpose: the
problem an agent solves, the evaluator as agents see it (a session), a feedback
builder, a model client, a solver agent. A task kind's own contract is
`fembench_agents.kinds.contract`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from fembench_agents.messages import CallContext, Message, ModelParams, ModelResponse
from fembench_agents.vocabulary import Track

__all__ = ["Feedback", "FeedbackBuilder", "ModelClient", "Problem", "SolveSession", "SolverAgent", "Track"]

if TYPE_CHECKING:
    from fembench_agents.scoring.outcomes import OutcomeBase


class Problem(Protocol):
    """One thing a solver is asked to write: a function task, a PDE case, or a
    problem of a kind registered elsewhere. Only what every layer may ask."""

    @property
    def task_id(self) -> str: ...

    @property
    def main_name(self) -> str:
        """The function every attempt defines."""
        ...

    @property
    def content_hash(self) -> str:
        """Changes whenever anything the verdict depends on changes (a resume refuses drift)."""
        ...

    @property
    def hidden_dir(self) -> Path:
        """Where the problem's evaluator-only data lives: hidden from every sandboxed job."""
        ...

    @property
    def leak(self) -> str | None:
        """How the problem gives its answer away, if it does: then only its own id selects it."""
        ...


class Feedback(BaseModel):
    """What a repairing agent (or a GEPA reflection step) sees about an attempt."""

    model_config = ConfigDict(frozen=True)
    score: float
    text: str


@runtime_checkable
class ModelClient(Protocol):
    model: str

    async def complete(
        self, messages: list[Message], context: CallContext, params: ModelParams | None = None
    ) -> ModelResponse: ...


class FeedbackBuilder(Protocol):
    def __call__(self, outcome: OutcomeBase) -> Feedback: ...


class SolverAgent(Protocol):
    """Produces attempts at one task; every attempt is scored by the scorer and
    recorded by the session before the next one is asked for."""

    name: str

    async def solve(self, task: Problem, session: SolveSession) -> None: ...


class SolveSession(Protocol):
    """What an agent works with for one (task, repeat): a model, the scorer,
    the feedback builder, the track, and `attempt` which records everything."""

    track: Track
    model: ModelClient
    feedback: FeedbackBuilder
    params: ModelParams

    async def call_model(
        self, messages: list[Message], *, attempt_index: int, attempt: str, sample: str | None = None
    ) -> ModelResponse:
        """A model call, recorded in the run log; raises ModelUnavailable on failure."""
        ...

    async def attempt(self, messages: list[Message]) -> tuple[OutcomeBase, Feedback]: ...

    async def submit(
        self, text: str, messages: list[Message], response: ModelResponse | None
    ) -> tuple[OutcomeBase, Feedback]: ...

    def last_reply(self) -> str: ...

    async def upper_bound(self, others: list[str], chosen_passed: bool) -> None:
        """After a choice among samples (best-of-N): judge the samples not chosen with the
        hidden verdict, for the report's oracle choice alone; the agent learns nothing of it."""
        ...

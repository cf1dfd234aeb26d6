"""best-of:N, test-time scaling: N independent samples of the single-shot
prompt, one handed in. The choice uses only what an agent may see: each
sample's run through the public check (scaffolds/workspace/check.py, in the
coding agents' confined terminal), and where samples return arrays (a PDE
case's fields on its grid), how far each is from the others; never a hidden
verdict, hidden input or reference output. Only the chosen sample is scored
as the episode's one attempt, whose record counts all N calls; then the
others are judged by the hidden verdict for the report's oracle choice (pass@N,
an upper bound), which the agent never sees."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from fembench_agents.agents.coding.episode import episode_hidden
from fembench_agents.agents.coding.public_check import PublicCheck, run_public_check
from fembench_agents.agents.prompts import PromptRenderer
from fembench_agents.agents.totals import CallTotals
from fembench_agents.contracts import Problem, SolveSession
from fembench_agents.kinds import kind_for
from fembench_agents.messages import Message


def rank(check: PublicCheck) -> int:
    """2: passed the public check; 1: ran but failed it; 0: did not get to run."""
    return 2 if check.passed else 1 if check.ran else 0


def distance(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> float:
    """Relative L2 distance of two samples' outputs over the entries both give as finite
    numbers, summed over their common fields; inf where they share nothing to compare."""
    total, compared = 0.0, False
    for name in sorted(set(a) & set(b)):
        x, y = a[name], b[name]
        if x.shape != y.shape:
            return float("inf")
        both = np.isfinite(x) & np.isfinite(y)
        if not both.any():
            continue
        scale = max(float(np.linalg.norm(y[both])), float(np.linalg.norm(x[both])), 1e-300)
        total += float(np.linalg.norm(x[both] - y[both])) / scale
        compared = True
    return total if compared else float("inf")


def choose(checks: Sequence[PublicCheck]) -> int:
    """The sample handed in: among those of the best rank, the one whose outputs lie
    nearest the others' (least summed distance: the samples' consensus) when two or
    more returned outputs, else the first."""
    best = max(rank(c) for c in checks)
    top = [i for i, c in enumerate(checks) if rank(c) == best]
    with_outputs = [i for i in top if checks[i].outputs is not None]
    if len(with_outputs) < 2:
        return top[0]

    def spread(i: int) -> float:
        mine = checks[i].outputs
        assert mine is not None
        return sum(distance(mine, checks[j].outputs or {}) for j in with_outputs if j != i)

    return min(with_outputs, key=lambda i: (spread(i), i))


@dataclass
class BestOfAgent:
    name: str
    samples: int
    scaffold: str = "single_shot"
    prompts: PromptRenderer = field(default_factory=PromptRenderer)

    def __post_init__(self) -> None:
        if self.samples < 2:
            raise ValueError(f"agent {self.name!r}: best-of needs at least 2 samples, got {self.samples}")

    @property
    def max_model_calls(self) -> int:
        """One call per sample."""
        return self.samples

    def first_messages(self, task: Problem, track: str) -> list[Message]:
        return [Message(role="user", content=self.prompts.task_prompt(task, track, self.scaffold))]

    async def solve(self, task: Problem, session: SolveSession) -> None:
        messages = [Message(role="user", content=self.prompts.task_prompt(task, session.track, self.scaffold))]
        episode = getattr(session, "episode", self.name)
        label = f"{self.name} repeat {getattr(session, 'repeat', 0)}"
        totals = CallTotals()
        replies: list[str] = []
        for k in range(self.samples):  # one at a time: the run's concurrency already fills the model
            response = await session.call_model(
                messages, attempt_index=0, attempt=f"{label} sample {k}", sample=f"{episode} sample {k}"
            )
            totals.add(response)
            replies.append(response.text)
        solver = kind_for(session.track).solver
        hidden = episode_hidden(task, session)
        checks = [
            await asyncio.to_thread(run_public_check, task, session.track, solver.reply_code(task, r), hidden)
            for r in replies
        ]
        chosen = choose(checks)
        outcome, _ = await session.submit(replies[chosen], messages, totals.as_response(replies[chosen], "stop"))
        await session.upper_bound([r for k, r in enumerate(replies) if k != chosen], outcome.passed)

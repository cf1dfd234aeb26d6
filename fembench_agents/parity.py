"""Harness parity: every agent, on every task kind, driven by an oracle model
that answers what the problem's reference would be (its kind's
`hidden.oracle_program`: a function task's reference implementation or tests,
a case's reference fields), in the form the agent expects: a fenced reply, or
a coding agent's file edit and finish or submit action (`oracle_turns`).

Every cell must be 100%: an oracle that fails names a harness fault, with the
stage and reason it failed at. This is what the published leaderboards cannot
show: that a system which knows the answer would pass there."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fembench_agents.agents import make_agent
from fembench_agents.agents.prompts import PromptRenderer
from fembench_agents.contracts import Problem, SolverAgent
from fembench_agents.kinds import kind_for
from fembench_agents.messages import Message
from fembench_agents.models import make_client, register_script, unregister_script
from fembench_agents.runs.run import RunConfig, execute_run
from fembench_agents.scoring.evaluator import Evaluator

# Every agent kind, each in a form that makes more than one call where it can.
AGENTS = (
    "single-shot",
    "feedback-loop:2",
    "template-guided",
    "fembench-paper",
    "plan-then-code",
    "debug-and-refine",
    "best-of:2",
    "openhands",
    "mini-swe-agent",
)
_NAMES = itertools.count()


@dataclass
class ParityCell:
    agent: str
    track: str
    passed: int = 0
    total: int = 0
    faults: list[str] = field(default_factory=list)  # "task_id: stage/reason" of each oracle that failed

    @property
    def share(self) -> float:
        return self.passed / self.total if self.total else 0.0


def oracle_turns(agent: SolverAgent, program: str, solution_file: str) -> list[str]:
    """The oracle's replies, turn by turn: a coding agent's own protocol, else one fenced
    reply (which every prompt agent takes at every call, a plan or a sample alike)."""
    turns = getattr(agent, "oracle_turns", None)
    return list(turns(program, solution_file)) if callable(turns) else [f"```python\n{program.rstrip()}\n```\n"]


def responder(turns: Sequence[str]) -> Any:
    """Reply by the conversation's turn: its count of assistant messages (the last turn
    repeats, for an agent asked again after a pass it cannot see)."""

    def reply(messages: list[Message]) -> str:
        return turns[min(sum(m.role == "assistant" for m in messages), len(turns) - 1)]

    return reply


async def parity_cell(
    agent_spec: str, track: str, problems: Sequence[Problem], evaluator: Evaluator, out: Path
) -> ParityCell:
    """One agent on one track's `problems`, each episode its own run under `out`."""
    cell = ParityCell(agent_spec, track)
    kind = kind_for(track)
    for problem in problems:
        agent = make_agent(agent_spec)
        program = kind.hidden.oracle_program(problem, track)
        solution_file = kind.solver.workspace(problem, PromptRenderer()).solution
        name = f"parity-oracle-{next(_NAMES)}"
        register_script(name, responder(oracle_turns(agent, program, solution_file)))
        try:
            client = make_client(f"scripted/{name}")
            config = RunConfig(model=client.model, agent=agent_spec, tasks=problem.task_id, track=track)
            run_dir = out / f"{_slug(agent_spec)}__{_slug(track)}__{_slug(problem.task_id)}"
            (episode,) = await execute_run(config, [problem], run_dir, client, evaluator, agent=agent)
        finally:
            unregister_script(name)
        cell.total += 1
        if episode.passed:
            cell.passed += 1
        else:
            where = "/".join(str(p) for p in (episode.failed_stage, episode.reason) if p) or "no verdict"
            cell.faults.append(f"{problem.task_id}: {where}" + (f" ({episode.error})" if episode.error else ""))
    return cell


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in text)


def sample(problems: Sequence[Problem], size: int) -> list[Problem]:
    """The first `size` problems by id: the same sample on every machine."""
    return sorted(problems, key=lambda p: p.task_id)[:size]

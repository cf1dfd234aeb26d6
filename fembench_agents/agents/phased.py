"""Scaffolds that think before they code, each phase with its own prompt
(scaffolds/plan_then_code/, scaffolds/debug_and_refine/):

- plan-then-code[:N]: a planning reply (method, discretisation or algorithm,
  steps, checks), then the program, which must follow it; N attempts, the
  later ones repairs as in the feedback loop, the plan kept in view.
- debug-and-refine[:D[:R]], in CodePDE's manner: reason about the problem,
  write the program, then repair it while it fails to run to an output of the
  required form (up to D debugging attempts), and improve it on the stage
  feedback once it runs (up to R refinement attempts).

The thinking reply is a recorded model call, not an attempt: only programs are
scored, and each attempt's messages hold the thinking they follow."""

from __future__ import annotations

from dataclasses import dataclass, field

from fembench_agents.agents.prompts import PromptRenderer, excerpt
from fembench_agents.contracts import Problem, SolveSession
from fembench_agents.kinds import kind_for
from fembench_agents.messages import Message
from fembench_agents.scoring.outcomes import OutcomeBase
from fembench_agents.vocabulary import EXECUTION_FAILURES


async def think(
    session: SolveSession, name: str, template: str, task_prompt: str, prompts: PromptRenderer
) -> list[Message]:
    """The thinking phase: its prompt and the model's reply, as the conversation the code follows."""
    ask = [Message(role="user", content=prompts.render(template, task=task_prompt.strip()).strip() + "\n")]
    phase = template.split("/")[-1].removesuffix(".j2")
    response = await session.call_model(
        ask,
        attempt_index=0,
        attempt=f"{name} repeat {getattr(session, 'repeat', 0)} {phase}",
        sample=f"{getattr(session, 'episode', name)} {phase}",
    )
    return [*ask, Message(role="assistant", content=response.text)]


def thinking_prompt(task: Problem, track: str, template: str, prompts: PromptRenderer) -> list[Message]:
    """What the thinking phase asks (`think`'s first message), for a dry run's estimate."""
    task_prompt = prompts.task_prompt(task, track)
    return [Message(role="user", content=prompts.render(template, task=task_prompt.strip()).strip() + "\n")]


def previous_program(task: Problem, session: SolveSession) -> tuple[str, bool]:
    reply = session.last_reply()
    code = kind_for(session.track).solver.reply_code(task, reply)
    return excerpt(code if code.strip() else reply)


@dataclass
class PlanThenCodeAgent:
    name: str
    max_attempts: int = 1
    prompts: PromptRenderer = field(default_factory=PromptRenderer)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"agent {self.name!r}: max_attempts must be >= 1, got {self.max_attempts}")

    @property
    def max_model_calls(self) -> int:
        """The plan, then one call per attempt."""
        return 1 + self.max_attempts

    def first_messages(self, task: Problem, track: str) -> list[Message]:
        return thinking_prompt(task, track, "plan_then_code/plan.j2", self.prompts)

    async def solve(self, task: Problem, session: SolveSession) -> None:
        task_prompt = self.prompts.task_prompt(task, session.track)
        plan = await think(session, self.name, "plan_then_code/plan.j2", task_prompt, self.prompts)
        code_prompt = self.prompts.render("plan_then_code/code.j2").strip() + "\n"
        messages = [*plan, Message(role="user", content=code_prompt)]
        for _ in range(self.max_attempts):
            outcome, feedback = await session.attempt(messages)
            if outcome.passed:
                return
            code, _ = previous_program(task, session)
            repaired = self.prompts.repair_prompt(code_prompt, feedback.text, code)
            messages = [*plan, Message(role="user", content=repaired)]


@dataclass
class DebugAndRefineAgent:
    name: str
    debug_attempts: int = 2
    refine_attempts: int = 1
    prompts: PromptRenderer = field(default_factory=PromptRenderer)

    def __post_init__(self) -> None:
        if self.debug_attempts < 0 or self.refine_attempts < 0:
            raise ValueError(
                f"agent {self.name!r}: debugging and refinement attempts must be >= 0, "
                f"got {self.debug_attempts} and {self.refine_attempts}"
            )

    @property
    def max_model_calls(self) -> int:
        """The reasoning, the program, then every debugging and refinement attempt."""
        return 2 + self.debug_attempts + self.refine_attempts

    def first_messages(self, task: Problem, track: str) -> list[Message]:
        return thinking_prompt(task, track, "debug_and_refine/reason.j2", self.prompts)

    def next_phase(self, outcome: OutcomeBase, debugged: int, refined: int) -> str | None:
        """debug while the program fails to run (and debugging attempts are left), refine
        once it runs; None when it passed or the phase it needs has no attempt left."""
        if outcome.passed:
            return None
        if outcome.reason in EXECUTION_FAILURES:
            return "debug" if debugged < self.debug_attempts else None
        return "refine" if refined < self.refine_attempts else None

    async def solve(self, task: Problem, session: SolveSession) -> None:
        task_prompt = self.prompts.task_prompt(task, session.track)
        reasoning = await think(session, self.name, "debug_and_refine/reason.j2", task_prompt, self.prompts)
        code_prompt = self.prompts.render("debug_and_refine/code.j2").strip() + "\n"
        messages = [*reasoning, Message(role="user", content=code_prompt)]
        used = {"debug": 0, "refine": 0}
        while True:
            outcome, feedback = await session.attempt(messages)
            phase = self.next_phase(outcome, used["debug"], used["refine"])
            if phase is None:
                return
            used[phase] += 1
            code, truncated = previous_program(task, session)
            prompt = self.prompts.render(
                f"debug_and_refine/{phase}.j2", feedback=feedback.text, previous_code=code, truncated=truncated
            )
            messages = [*reasoning, Message(role="user", content=prompt.strip() + "\n")]

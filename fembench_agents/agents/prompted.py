"""The prompt-driven solver agents (single-shot, feedback loop, template
guided, a system prompt from a file): each renders prompts and asks the
session for attempts; the session calls the model, scores and records every
attempt."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fembench_agents.agents.prompts import PromptRenderer
from fembench_agents.contracts import Problem, SolveSession
from fembench_agents.kinds import kind_for
from fembench_agents.messages import Message


@dataclass
class PromptAgent:
    """Renders the task prompt of a scaffold and makes up to `max_attempts`
    attempts; after a failed one, the feedback text and an excerpt of the
    previous code are prepended to the original prompt. Stops at the first pass."""

    name: str
    scaffold: str = "single_shot"
    max_attempts: int = 1
    system_prompt: str | None = None
    prompts: PromptRenderer = field(default_factory=PromptRenderer)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"agent {self.name!r}: max_attempts must be >= 1, got {self.max_attempts}")

    @property
    def max_model_calls(self) -> int:
        """The most model calls an episode makes: one per attempt."""
        return self.max_attempts

    def first_messages(self, task: Problem, track: str) -> list[Message]:
        messages = [Message(role="system", content=self.system_prompt)] if self.system_prompt else []
        return messages + [Message(role="user", content=self.prompts.task_prompt(task, track, self.scaffold))]

    async def solve(self, task: Problem, session: SolveSession) -> None:
        first = self.first_messages(task, session.track)
        messages = first
        for _ in range(self.max_attempts):
            outcome, feedback = await session.attempt(messages)
            if outcome.passed:
                return
            reply = session.last_reply()
            code = kind_for(session.track).solver.reply_code(task, reply)
            previous = code if code.strip() else reply
            repaired = self.prompts.repair_prompt(first[-1].content, feedback.text, previous)
            messages = first[:-1] + [Message(role="user", content=repaired)]


def attempts_from(spec: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"agent {spec!r}: the number of attempts must be an integer, got {text!r}") from None


SCAFFOLDS = ("single_shot", "template_guided", "fembench_paper")


@dataclass(frozen=True)
class PromptFile:
    system_prompt: str
    scaffold: str = "single_shot"


def read_prompt_file(file: Path) -> PromptFile:
    """A prompt file is plain text, or JSON with a `system_prompt` key (what
    `optimize` writes) and optionally the `scaffold` of the task prompts it
    was made for."""
    import json

    from fembench_agents.errors import read_text_file

    text = read_text_file(str(file), "system prompt file")
    if file.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{file}: not valid JSON: {exc}") from None
        if not isinstance(data, dict) or not isinstance(data.get("system_prompt"), str):
            raise ValueError(f"{file}: expected a JSON object with a string 'system_prompt'")
        scaffold = data.get("scaffold", "single_shot")
        if scaffold not in SCAFFOLDS:
            raise ValueError(f"{file}: unknown scaffold {scaffold!r}; expected one of {', '.join(SCAFFOLDS)}")
        return PromptFile(data["system_prompt"], scaffold)
    return PromptFile(text.strip())

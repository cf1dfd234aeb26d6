"""The OpenHands solver agent: a full coding agent behind the SolverAgent
contract. It works in a confined scratch workspace until it calls finish or a
cap stops it; its final solution file is the attempt, scored by the shared
evaluator through `session.submit` like every other agent's. With
`attempts` > 1 the evaluator's feedback on a failed file is sent as a new
message in the same conversation."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fembench_agents.agents.coding.bridge import EPISODE_CAPS, Bridge, Caps
from fembench_agents.agents.coding.episode import AttemptTrace, episode_hidden, in_thread
from fembench_agents.agents.coding.workspace import VIRTUAL_ROOT, create_workspace, planned_names
from fembench_agents.agents.openhands.options import OpenHandsOptions
from fembench_agents.agents.prompts import PromptRenderer
from fembench_agents.contracts import Problem, SolveSession
from fembench_agents.messages import Message
from fembench_agents.runs.recording import ModelUnavailable, diverged_replay

log = logging.getLogger(__name__)
STOP_GRACE_SECONDS = 60.0  # after the wall-clock cap, how long a turn may take to wind down

SYSTEM_PROMPT = """You are an expert in computational mechanics and scientific Python, working as a coding agent.
Your workspace is {root}. It holds {task} (the task), {solution} (your answer: edit it) and {check} (public checks).
Work in small steps: read the task, write {solution}, run `python {check}`, test your code on small examples of your own, fix what is wrong, then call finish.
Only the final content of {solution} is evaluated, on hidden inputs; passing {check} does not prove it correct.
Use only the allowed imports. Do not try to read anything outside {root}."""

FIRST_MESSAGE = """Solve the task below (also in {root}/{task}).
Write your answer into {root}/{solution}: it is evaluated when you call finish (ignore any instruction below to reply with a code block).

{prompt}"""

FEEDBACK_MESSAGE = """Your {solution} was evaluated and did not pass (attempt {done} of {total}).

Evaluator feedback:
{feedback}

Fix {root}/{solution}, check it, and call finish again."""


@dataclass
class EpisodeTrace:
    """What `run` reports besides the log: per attempt why the agent stopped,
    and the SDK's own token and cost count next to ours."""

    attempts: list[AttemptTrace] = field(default_factory=list)
    sdk_prompt_tokens: int = 0
    sdk_completion_tokens: int = 0
    sdk_cost_usd: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0
    workspace: str = ""

    @property
    def metrics_agree(self) -> bool:
        cost_ok = self.cost_usd is None or abs(self.cost_usd - self.sdk_cost_usd) <= 1e-9 + 1e-6 * self.cost_usd
        return (self.sdk_prompt_tokens, self.sdk_completion_tokens) == (
            self.prompt_tokens,
            self.completion_tokens,
        ) and cost_ok


@dataclass
class OpenHandsAgent:
    """`llm_factory` replaces the bridged LLM (tests pass an SDK TestLLM; its
    calls then bypass our client and are not recorded)."""

    options: OpenHandsOptions = field(default_factory=OpenHandsOptions)
    name: str = "openhands"
    prompts: PromptRenderer = field(default_factory=PromptRenderer)
    llm_factory: Callable[[Bridge], Any] | None = None
    extra_hidden: tuple[str, ...] = ()
    keep_workspace: bool = False  # tests inspect it; normally removed after the episode

    @property
    def max_model_calls(self) -> int:
        """The most model calls an episode makes: every step of every attempt is one."""
        return self.options.attempts * self.options.max_iterations

    def first_messages(self, task: Problem, track: str) -> list[Message]:
        """The system prompt and first message an episode opens with (later steps resend them, and more)."""
        names = planned_names(task, track, self.prompts)
        prompt = self.prompts.task_prompt(task, track).strip()
        return [
            Message(role="system", content=SYSTEM_PROMPT.format(**names)),
            Message(role="user", content=FIRST_MESSAGE.format(prompt=prompt, **names)),
        ]

    async def solve(self, task: Problem, session: SolveSession) -> None:
        await self.run(task, session)

    def oracle_turns(self, program: str, solution_file: str) -> list[str]:
        """What a model that knows `program` answers, turn by turn, in the SDK's text tool-call
        format: write the solution file, then finish (`parity`)."""
        path = f"{VIRTUAL_ROOT}/{solution_file}"
        write = f"<function=file_editor>\n<parameter=command>create</parameter>\n<parameter=path>{path}</parameter>\n"
        write += f"<parameter=file_text>{program}</parameter>\n</function>"
        return [write, "<function=finish>\n<parameter=message>done</parameter>\n</function>"]

    async def run(self, task: Problem, session: SolveSession) -> EpisodeTrace:
        from fembench_agents.agents.coding.terminal import check_launcher, write_launcher

        runtime = await in_thread(_import_runtime)
        started = time.monotonic()
        prompt = self.prompts.task_prompt(task, session.track)
        ws = create_workspace(task, session.track, prompt, prefix="fembench-openhands-", templates=self.prompts)
        names = ws.names()
        trace = EpisodeTrace(workspace=str(ws.dir))
        loop = asyncio.get_running_loop()
        bridge = Bridge(
            session=session,
            loop=loop,
            caps=Caps(deadline=started + self.options.max_seconds, max_cost_usd=self.options.max_cost_usd),
            label=f"{self.name} repeat {getattr(session, 'repeat', 0)}",
        )
        oh = None
        try:
            launcher = write_launcher(ws, episode_hidden(task, session, self.extra_hidden))
            await in_thread(lambda: check_launcher(launcher))
            system = SYSTEM_PROMPT.format(**names)
            oh = await in_thread(
                lambda: runtime.OpenHandsSession(ws, str(launcher), self.options, system, bridge, self.llm_factory)
            )
            sent: list[Message] = []
            text = FIRST_MESSAGE.format(prompt=prompt.strip(), **names)
            for index in range(self.options.attempts):
                sent.append(Message(role="user", content=text))
                bridge.start_attempt(index)
                result = await self._turn(oh, text, bridge)
                if result.model_error is not None:
                    if diverged_replay(result.model_exception):
                        raise result.model_exception  # a replay that diverges stops, as for every agent
                    raise ModelUnavailable(result.model_error, getattr(result.model_exception, "permanent", None))
                final = ws.final_text()
                response = bridge.attempt_totals.as_response(final, result.stop_reason)
                outcome, feedback = await session.submit(final, list(sent), response)
                totals = bridge.attempt_totals
                trace.attempts.append(
                    AttemptTrace(
                        result.stop_reason,
                        result.detail,
                        totals.calls,
                        totals.prompt_tokens,
                        totals.completion_tokens,
                        totals.cost_usd,
                        outcome.passed,
                    )
                )
                log.info(
                    "%s %s attempt %d: %s (%s), %d model calls",
                    self.name,
                    task.task_id,
                    index,
                    result.stop_reason,
                    "passed" if outcome.passed else "failed",
                    totals.calls,
                )
                if outcome.passed or result.stop_reason in EPISODE_CAPS:
                    break
                text = FEEDBACK_MESSAGE.format(
                    feedback=feedback.text.strip(), done=index + 1, total=self.options.attempts, **names
                )
        finally:
            if oh is not None:
                trace.sdk_prompt_tokens, trace.sdk_completion_tokens, trace.sdk_cost_usd = oh.sdk_usage()
                try:
                    await in_thread(oh.close, timeout=STOP_GRACE_SECONDS)
                except TimeoutError:
                    log.warning(
                        "%s %s: the conversation did not close within %.0f s; abandoned",
                        self.name,
                        task.task_id,
                        STOP_GRACE_SECONDS,
                    )
            totals = bridge.episode_totals
            trace.prompt_tokens, trace.completion_tokens, trace.cost_usd = (
                totals.prompt_tokens,
                totals.completion_tokens,
                totals.cost_usd,
            )
            if self.llm_factory is None and not trace.metrics_agree:
                log.warning(
                    "%s %s: the SDK counted %d/%d tokens and $%.6f; our records %d/%d and %s",
                    self.name,
                    task.task_id,
                    trace.sdk_prompt_tokens,
                    trace.sdk_completion_tokens,
                    trace.sdk_cost_usd,
                    trace.prompt_tokens,
                    trace.completion_tokens,
                    trace.cost_usd,
                )
            if not self.keep_workspace:
                ws.remove()
        return trace

    async def _turn(self, oh: Any, text: str, bridge: Bridge) -> Any:
        """One turn; past the wall-clock cap the conversation is paused and,
        failing that, abandoned (its terminal is killed on close)."""
        remaining = max(bridge.caps.remaining(), 0.0) + STOP_GRACE_SECONDS
        try:
            return await in_thread(lambda: oh.turn(text), timeout=remaining)
        except TimeoutError:
            oh.stop()
            from fembench_agents.agents.openhands.runtime import TurnResult

            return TurnResult("time_cap", "wall-clock cap reached while a tool was running")


def _import_runtime() -> Any:
    from fembench_agents.agents.openhands import runtime

    return runtime

"""The mini-swe-agent solver: mini-swe-agent's loop (one bash command per
step, in a confined shell) behind the SolverAgent contract. It works in a
scratch workspace holding only the visible task or case files until it
submits or a cap stops it; its final solution file is the attempt, scored by
the shared evaluator through `session.submit`. With `attempts` > 1 the
evaluator's feedback on a failed file is the next message of the same
conversation."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from fembench_agents.agents.coding.bridge import EPISODE_CAPS, Bridge, CapReached, Caps, ModelFailure
from fembench_agents.agents.coding.episode import AttemptTrace, episode_hidden, in_thread
from fembench_agents.agents.coding.workspace import create_workspace, planned_names
from fembench_agents.agents.mini_swe.options import SUBMIT_COMMAND, MiniSweOptions
from fembench_agents.agents.prompts import PromptRenderer
from fembench_agents.contracts import Problem, SolveSession
from fembench_agents.messages import Message
from fembench_agents.runs.recording import ModelUnavailable, diverged_replay

log = logging.getLogger(__name__)
STOP_GRACE_SECONDS = 60.0  # after the wall-clock cap, how long a running command may take to end

SYSTEM_PROMPT = """You are an expert in computational mechanics and scientific Python, working in a bash shell.
Your workspace is {root}: {task} (the task), {solution} (your answer: edit it) and {check} (public checks).
Every reply: a short THOUGHT, then exactly ONE bash command in a fenced block, like this:

THOUGHT: I read the task first.

```mswea_bash_command
cat {task}
```

Each command runs in a new shell in {root}; write files with `cat <<'EOF' > {solution}` or sed.
Work in small steps: write {solution}, run `python {check}`, test on small examples of your own, fix what is wrong.
Only the final content of {solution} is evaluated, on hidden inputs; passing {check} does not prove it correct.
When done, reply with the command `{submit}` alone: after it you cannot act any more.
Use only the allowed imports. Do not try to read anything outside {root}."""

FIRST_MESSAGE = """Solve the task below (also in {root}/{task}).
Write your answer into {root}/{solution}: it is evaluated when you submit (ignore any instruction below to reply with a code block).

{prompt}"""

FEEDBACK_MESSAGE = """Your {solution} was evaluated and did not pass (attempt {done} of {total}).

Evaluator feedback:
{feedback}

Fix {root}/{solution}, check it, and submit again."""


@dataclass
class EpisodeTrace:
    """What the episode did besides the log: per attempt why the agent
    stopped, and mini-swe-agent's own call count and cost next to ours."""

    attempts: list[AttemptTrace] = field(default_factory=list)
    agent_calls: int = 0
    agent_cost_usd: float = 0.0
    workspace: str = ""


@dataclass
class MiniSweAgent:
    options: MiniSweOptions = field(default_factory=MiniSweOptions)
    name: str = "mini-swe-agent"
    prompts: PromptRenderer = field(default_factory=PromptRenderer)
    extra_hidden: tuple[str, ...] = ()
    keep_workspace: bool = False  # tests inspect it; normally removed after the episode

    @property
    def max_model_calls(self) -> int:
        """The most model calls an episode makes: every step of every attempt is one."""
        return self.options.attempts * self.options.max_steps

    def first_messages(self, task: Problem, track: str) -> list[Message]:
        """The system prompt and first message an episode opens with (later steps resend them, and more)."""
        names = planned_names(task, track, self.prompts)
        prompt = self.prompts.task_prompt(task, track).strip()
        return [
            Message(role="system", content=SYSTEM_PROMPT.format(submit=SUBMIT_COMMAND, **names)),
            Message(role="user", content=FIRST_MESSAGE.format(prompt=prompt, **names)),
        ]

    async def solve(self, task: Problem, session: SolveSession) -> None:
        await self.run(task, session)

    def oracle_turns(self, program: str, solution_file: str) -> list[str]:
        """What a model that knows `program` answers, turn by turn, in mini-swe-agent's text
        format: one command writing the solution file, then the submit command (`parity`)."""
        end = "FEMBENCH_ORACLE_EOF"
        write = f"cat <<'{end}' > {solution_file}\n{program.rstrip()}\n{end}"
        fence = "```mswea_bash_command"
        return [
            f"THOUGHT: write the answer.\n\n{fence}\n{write}\n```",
            f"THOUGHT: done.\n\n{fence}\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```",
        ]

    async def run(self, task: Problem, session: SolveSession) -> EpisodeTrace:
        from fembench_agents.agents.coding.terminal import check_launcher, write_launcher

        runtime = await in_thread(_import_runtime)
        started = time.monotonic()
        prompt = self.prompts.task_prompt(task, session.track)
        ws = create_workspace(task, session.track, prompt, prefix="fembench-mini-swe-", templates=self.prompts)
        names = ws.names()
        trace = EpisodeTrace(workspace=str(ws.dir))
        bridge = Bridge(
            session=session,
            loop=asyncio.get_running_loop(),
            caps=Caps(deadline=started + self.options.max_seconds, max_cost_usd=self.options.max_cost_usd),
            label=f"{self.name} repeat {getattr(session, 'repeat', 0)}",
        )
        agent = None
        try:
            launcher = write_launcher(ws, episode_hidden(task, session, self.extra_hidden))
            await in_thread(lambda: check_launcher(launcher))
            env = runtime.ConfinedEnvironment(str(launcher), self.options.command_seconds)
            model = runtime.RecordedModel(bridge, session.model.model)
            system = SYSTEM_PROMPT.format(submit=SUBMIT_COMMAND, **names)
            agent = runtime.build_agent(model, env, system, self.options.max_steps)
            sent: list[Message] = []
            text = FIRST_MESSAGE.format(prompt=prompt.strip(), **names)
            for index in range(self.options.attempts):
                sent.append(Message(role="user", content=text))
                bridge.start_attempt(index)
                stop_reason, detail = await self._turn(agent, env, text, bridge)
                final = ws.final_text()
                response = bridge.attempt_totals.as_response(final, stop_reason)
                outcome, feedback = await session.submit(final, list(sent), response)
                totals = bridge.attempt_totals
                trace.attempts.append(
                    AttemptTrace(
                        stop_reason,
                        detail,
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
                    stop_reason,
                    "passed" if outcome.passed else "failed",
                    totals.calls,
                )
                if outcome.passed or stop_reason in EPISODE_CAPS:
                    break
                text = FEEDBACK_MESSAGE.format(
                    feedback=feedback.text.strip(), done=index + 1, total=self.options.attempts, **names
                )
        finally:
            if agent is not None:
                trace.agent_calls, trace.agent_cost_usd = bridge.episode_totals.calls, agent.cost
            if not self.keep_workspace:
                ws.remove()
        return trace

    async def _turn(self, agent: Any, env: Any, text: str, bridge: Bridge) -> tuple[str, str]:
        """One turn in the worker thread, as (stop reason, detail). A cap is an
        outcome; a model call failed for good ends the episode as an error."""
        remaining = max(bridge.caps.remaining(), 0.0) + STOP_GRACE_SECONDS
        try:
            result = await in_thread(lambda: agent.turn(text), timeout=remaining)
        except TimeoutError:
            env.stopped = True  # the worker ends at its next command or model call
            return "time_cap", "wall-clock cap reached while a command was running"
        except CapReached as exc:
            return exc.kind, str(exc)
        except ModelFailure as exc:
            if diverged_replay(exc.original):
                raise exc.original from None  # a replay that diverges stops, as for every agent
            raise ModelUnavailable(str(exc), getattr(exc.original, "permanent", None)) from exc
        except Exception as exc:  # noqa: BLE001 - the agent's own failure is an outcome; its file is scored
            return "agent_error", f"{type(exc).__name__}: {exc}"
        return result.stop_reason, result.detail


def _import_runtime() -> Any:
    from fembench_agents.agents.mini_swe import runtime

    return runtime

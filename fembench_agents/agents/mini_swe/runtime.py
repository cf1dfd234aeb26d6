"""mini-swe-agent's three parts wired to ours: a model whose every call goes
through the episode's `Bridge` (so it is recorded, priced and replayable like
any agent's call), an environment whose commands run in the confined shell
both coding agents use (`agents/coding/`), and the agent loop kept open across attempts.
The only module that imports minisweagent (the package's __init__ sets the
environment it needs first); it runs in the episode's worker thread."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from minisweagent.agents.default import DefaultAgent
from minisweagent.environments.local import LocalEnvironment
from minisweagent.exceptions import FormatError, InterruptAgentFlow
from minisweagent.models.utils.actions_text import format_observation_messages, parse_regex_actions

from fembench_agents.agents.coding.workspace import VIRTUAL_ROOT
from fembench_agents.agents.mini_swe.options import SUBMIT_COMMAND
from fembench_agents.messages import Message, ModelResponse

Transport = Callable[[list[Message]], ModelResponse]
ACTION_REGEX = r"```mswea_bash_command\s*\n(.*?)\n```"
MAX_OUTPUT_CHARS = 10_000
OBSERVATION = (
    "<returncode>{{output.returncode}}</returncode>\n"
    "{% if output.exception_info %}<exception>{{output.exception_info}}</exception>\n{% endif %}"
    "{% if output.output | length <= " + str(MAX_OUTPUT_CHARS) + " %}<output>\n{{output.output}}</output>"
    "{% else %}<output_head>\n{{output.output[:5000]}}</output_head>\n"
    "<elided_chars>{{output.output | length - 10000}} characters elided: print less</elided_chars>\n"
    "<output_tail>\n{{output.output[-5000:]}}</output_tail>{% endif %}"
)
FORMAT_ERROR = (
    "{% if finish_reason == 'length' %}Your reply was cut off at the output token limit before it held a "
    "complete command. Reply more briefly.{% else %}Format error: {{error}}{% endif %}\n"
    "Reply with a short THOUGHT and then exactly ONE command in a ```mswea_bash_command block. "
    "When " + "you are done, run `" + SUBMIT_COMMAND + "` alone."
)
# mini-swe-agent's exit statuses, as the attempt's stop reason
STOP_REASONS = {"Submitted": "finished", "LimitsExceeded": "step_cap", "RepeatedFormatError": "format_errors"}


class RecordedModel:
    """mini-swe-agent's Model protocol over our model client. Actions are
    prompted in text (one fenced command per reply), so a request is plain
    system/user/assistant messages, exactly our `Message`."""

    def __init__(self, transport: Transport, model_name: str) -> None:
        self.transport = transport
        self.config = {"model_name": model_name, "action_regex": ACTION_REGEX}

    def query(self, messages: list[dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
        request = [Message(role=m["role"], content=_text(m.get("content"))) for m in messages]
        response = self.transport(request)
        cost = 0.0 if response.cached else (response.cost_usd or 0.0)
        try:
            actions = parse_regex_actions(
                response.text,
                action_regex=ACTION_REGEX,
                format_error_template=FORMAT_ERROR,
                template_kwargs={"finish_reason": response.finish_reason or "stop"},
            )
        except FormatError as exc:
            exc.messages[0]["extra"]["cost"] = cost
            raise
        return {"role": "assistant", "content": response.text, "extra": {"actions": actions, "cost": cost}}

    def format_message(self, **kwargs: Any) -> dict[str, Any]:
        return dict(kwargs)

    def format_observation_messages(
        self, message: dict[str, Any], outputs: list[dict[str, Any]], template_vars: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        # Only the command's output goes into the template: the agent's own
        # variables (elapsed seconds, cost) would make requests unreplayable.
        return format_observation_messages(outputs, observation_template=OBSERVATION)

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        return dict(self.config)

    def serialize(self) -> dict[str, Any]:
        return {"info": {"config": {"model": dict(self.config), "model_type": "fembench RecordedModel"}}}


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return content or ""


class ConfinedEnvironment(LocalEnvironment):
    """Every command runs as `bash -c` in a fresh confined shell (the launcher
    of `coding.terminal`): the workspace at `VIRTUAL_ROOT`, nothing hidden
    in sight, no network. mini-swe-agent runs each command in a new subshell
    anyway, so nothing of its protocol changes."""

    def __init__(self, launcher: str, command_seconds: int) -> None:
        super().__init__(cwd=VIRTUAL_ROOT, timeout=command_seconds)
        self.launcher = launcher
        self.stopped = False  # set when the episode's clock ran out: no further command starts

    def execute(self, action: dict[str, Any], cwd: str = "", *, timeout: int | None = None) -> dict[str, Any]:
        if self.stopped:
            return {"output": "", "returncode": -1, "exception_info": "the episode's time is up"}
        seconds = timeout or self.config.timeout
        process = subprocess.Popen(
            [self.launcher, "-c", action.get("command", "")],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            errors="replace",
            start_new_session=True,
        )
        try:
            text, _ = process.communicate(timeout=seconds)
            output = {"output": text, "returncode": process.returncode, "exception_info": ""}
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # the namespace's PID 1 dies with it, and all it started
            text, _ = process.communicate()
            output = {"output": text, "returncode": -1, "exception_info": f"the command was killed after {seconds} s"}
        self._check_finished(output)
        return output

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        return {"cwd": VIRTUAL_ROOT}  # not the host's uname and environment, as LocalEnvironment's

    def serialize(self) -> dict[str, Any]:
        return {"info": {"config": {"environment": {"cwd": VIRTUAL_ROOT, "timeout": self.config.timeout}}}}


@dataclass
class TurnResult:
    stop_reason: str  # finished | step_cap | format_errors (then the caller's: cost_cap | time_cap | agent_error)
    detail: str = ""


class ConversingAgent(DefaultAgent):
    """mini-swe-agent's DefaultAgent (its step, query, limits and exits), with
    the conversation kept open: `turn(text)` sends a user message and steps
    until the agent exits; the evaluator's feedback is the next turn. The step
    limit counts per turn."""

    def turn(self, text: str) -> TurnResult:
        if not self.messages:
            self.add_messages(self.model.format_message(role="system", content=self.config.system_template))
        self.add_messages(self.model.format_message(role="user", content=text))
        self.n_calls, self.n_consecutive_format_errors = 0, 0
        while True:
            try:
                self.step()
                self.n_consecutive_format_errors = 0
            except FormatError as exc:
                self.cost += exc.messages[0].get("extra", {}).get("cost", 0.0)
                self.n_consecutive_format_errors += 1
                self.add_messages(*exc.messages)
                if 0 < self.config.max_consecutive_format_errors <= self.n_consecutive_format_errors:
                    extra = {"exit_status": "RepeatedFormatError", "submission": ""}
                    self.add_messages({"role": "exit", "content": "RepeatedFormatError", "extra": extra})
            except InterruptAgentFlow as exc:
                self.add_messages(*exc.messages)
            if self.messages[-1].get("role") == "exit":
                status = str(self.messages.pop().get("extra", {}).get("exit_status", ""))
                return TurnResult(STOP_REASONS.get(status, "agent_error"), status)


def build_agent(model: RecordedModel, env: ConfinedEnvironment, system_prompt: str, max_steps: int) -> ConversingAgent:
    # Cost and wall clock are capped by the bridge, for the whole episode.
    return ConversingAgent(
        model,
        env,
        system_template=system_prompt,
        instance_template="{{task}}",
        step_limit=max_steps,
        cost_limit=0.0,
        wall_time_limit_seconds=0,
    )

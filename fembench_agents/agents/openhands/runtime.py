"""Building and driving one OpenHands conversation. Besides `llm` and `tools`
the only module that imports OpenHands (the package's __init__ sets the
environment it needs first); everything here runs in the conversation's
worker thread, never on the event loop."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from openhands.sdk import LLM, Agent, Conversation
from openhands.sdk.conversation.state import ConversationExecutionStatus
from openhands.sdk.event.conversation_error import ConversationErrorEvent

from fembench_agents.agents.coding.bridge import Bridge, CapReached, ModelFailure
from fembench_agents.agents.coding.workspace import Workspace
from fembench_agents.agents.openhands.llm import BridgedLLM
from fembench_agents.agents.openhands.options import OpenHandsOptions
from fembench_agents.agents.openhands.tools import tool_specs
from fembench_agents.scoring.error_text import shortened

LLMFactory = Callable[[Bridge], LLM]

# The SDK logs every tool load and terminal start at INFO; keep the CLI quiet.
if logging.getLogger("openhands").level == logging.NOTSET:
    logging.getLogger("openhands").setLevel(logging.WARNING)


def bridged_llm(bridge: Bridge) -> LLM:
    # A neutral name: the SDK keys model quirks (responses API, prompt
    # examples, stop words) on it; the recorded model is session.model.model.
    return BridgedLLM.for_model(f"fembench/{bridge.session.model.model}", bridge)


@dataclass
class TurnResult:
    stop_reason: str  # finished | iteration_cap | cost_cap | time_cap | stuck | agent_error
    detail: str = ""
    model_error: str | None = None
    model_exception: BaseException | None = None


class OpenHandsSession:
    """One conversation in one workspace; `turn(text)` sends a user message and
    runs the agent until it stops."""

    def __init__(
        self,
        ws: Workspace,
        launcher: str,
        options: OpenHandsOptions,
        system_prompt: str,
        bridge: Bridge,
        llm_factory: LLMFactory | None = None,
    ) -> None:
        self.bridge = bridge
        self.llm = (llm_factory or bridged_llm)(bridge)
        agent = Agent(
            llm=self.llm,
            tools=tool_specs(str(ws.dir), launcher, options.command_seconds),
            include_default_tools=["FinishTool"],
            system_prompt=system_prompt,
        )
        self.conversation: Any = Conversation(
            agent=agent,
            workspace=str(ws.dir),
            persistence_dir=None,
            max_iteration_per_run=options.max_iterations,
            visualizer=None,
            delete_on_close=True,
        )

    def turn(self, text: str) -> TurnResult:
        conv = self.conversation
        seen = len(conv.state.events)
        conv.send_message(text)
        crash: BaseException | None = None
        try:
            conv.run()
        except Exception as exc:  # noqa: BLE001 - classified below; the file is scored either way
            crash = exc
        failure = self.bridge.failure
        if isinstance(failure, ModelFailure):
            return TurnResult("model_error", model_error=str(failure), model_exception=failure.original)
        if isinstance(failure, CapReached):
            return TurnResult(failure.kind, str(failure))
        status = conv.state.execution_status
        errors = [e for e in list(conv.state.events)[seen:] if isinstance(e, ConversationErrorEvent)]
        if any(e.code == "MaxIterationsReached" for e in errors):
            return TurnResult("iteration_cap", errors[-1].detail)
        if status == ConversationExecutionStatus.FINISHED:
            return TurnResult("finished")
        if status == ConversationExecutionStatus.STUCK:
            return TurnResult("stuck", "the agent repeated itself")
        detail = f"{type(crash).__name__}: {crash}" if crash else (errors[-1].detail if errors else str(status))
        return TurnResult("agent_error", shortened(detail, 2000))

    def sdk_usage(self) -> tuple[int, int, float]:
        """(prompt tokens, completion tokens, cost) as the SDK's own metrics count them."""
        m = self.llm.metrics
        usage = m.accumulated_token_usage
        return (
            (usage.prompt_tokens if usage else 0) or 0,
            (usage.completion_tokens if usage else 0) or 0,
            float(m.accumulated_cost or 0.0),
        )

    def stop(self) -> None:
        """Ask a running turn to stop (from another thread): pause between steps."""
        try:
            self.conversation.pause()
        except Exception:  # noqa: BLE001 - best effort; the terminal is killed on close
            pass

    def close(self) -> None:
        self.conversation.close()

"""The OpenHands LLM, routed through our ModelClient so every call the agent
makes is recorded like any other agent's (a ModelCallRecord with request,
response, tokens, cost, latency) and is replayable by request hash.

`BridgedLLM` keeps the SDK's whole request pipeline (message formatting,
tool prompting, response parsing, retries off, metrics) and replaces only
its transport: instead of calling litellm itself, it hands the formatted
messages to a `Bridge`. Tools are prompted in text (the SDK's non-native
function calling), so a request is plain system/user/assistant messages,
exactly our `Message`. Imports OpenHands."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from litellm.types.utils import Choices
from litellm.types.utils import Message as LiteLLMMessage
from litellm.types.utils import ModelResponse as LiteLLMResponse
from litellm.types.utils import Usage as LiteLLMUsage
from openhands.sdk import LLM
from openhands.sdk.llm.mixins.fn_call_converter import (
    convert_fncall_messages_to_non_fncall_messages,
)
from pydantic import PrivateAttr

from fembench_agents.messages import Message, ModelResponse

Transport = Callable[[list[Message]], ModelResponse]
COST_HEADER = "llm_provider-x-litellm-response-cost"


def flatten(formatted: list[dict[str, Any]]) -> list[Message]:
    """The SDK's chat messages (content a string or a list of parts) as ours.
    Consecutive messages of one role are kept apart, as sent."""
    out = []
    for m in formatted:
        role = m.get("role")
        if role not in ("system", "user", "assistant"):
            raise ValueError(f"unexpected {role!r} message: the agent must prompt its tools in text")
        content = m.get("content")
        if isinstance(content, list):
            text = "\n\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
        else:
            text = content or ""
        out.append(Message(role=role, content=text))
    return out


def to_litellm(response: ModelResponse, model: str, call_id: str) -> LiteLLMResponse:
    usage = None
    if response.usage.prompt_tokens is not None or response.usage.completion_tokens is not None:
        p, c = response.usage.prompt_tokens or 0, response.usage.completion_tokens or 0
        usage = LiteLLMUsage(prompt_tokens=p, completion_tokens=c, total_tokens=p + c)
    raw = LiteLLMResponse(
        id=call_id,
        created=0,
        model=model,
        object="chat.completion",
        choices=[
            Choices(
                index=0,
                finish_reason=response.finish_reason or "stop",
                message=LiteLLMMessage(role="assistant", content=response.text),
            )
        ],
    )
    if usage is not None:
        raw.usage = usage  # type: ignore[attr-defined]
    cost = 0.0 if response.cached else response.cost_usd
    raw._hidden_params = {"additional_headers": {COST_HEADER: cost if cost is not None else 0.0}}
    return raw


class BridgedLLM(LLM):
    """An SDK LLM whose transport is a `Transport` (set with `bind`)."""

    _transport: Transport | None = PrivateAttr(default=None)
    _ids: Any = PrivateAttr(default_factory=itertools.count)

    @classmethod
    def for_model(cls, model: str, transport: Transport) -> BridgedLLM:
        llm = cls(
            model=model,
            usage_id="fembench-agent",
            native_tool_calling=False,
            num_retries=0,
            disable_stop_word=True,
            caching_prompt=False,
            stream=False,
        )
        llm._transport = transport
        return llm

    def _transport_call(
        self, *, messages: list[dict[str, Any]], enable_streaming: bool = False, on_token: Any = None, **kwargs: Any
    ) -> LiteLLMResponse:
        assert self._transport is not None, "BridgedLLM used before a transport was bound"
        response = self._transport(flatten(messages))
        return to_litellm(response, self.model, f"fembench-{next(self._ids)}")

    def pre_request_prompt_mock(
        self,
        messages: list[dict[str, Any]],
        tools: list[Any],
        kwargs: dict[str, Any],
        include_security_params: bool = False,
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Tools prompted in text, without the SDK's long worked example (a
        web-server session that fits no FEM task and a small model's context)
        and without stop words (our client sends none)."""
        messages = convert_fncall_messages_to_non_fncall_messages(
            messages, tools, add_in_context_learning_example=False, include_security_params=include_security_params
        )
        kwargs = {k: v for k, v in kwargs.items() if k not in ("tool_choice", "stop")}
        return messages, kwargs

    def uses_responses_api(self) -> bool:
        return False  # the transport speaks chat completions

    async def _atransport_call(
        self, *, messages: list[dict[str, Any]], enable_streaming: bool = False, on_token: Any = None, **kwargs: Any
    ) -> LiteLLMResponse:
        raise NotImplementedError("the fembench agent runs conversations synchronously")

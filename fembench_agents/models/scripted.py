"""A scripted model for tests and offline smoke runs: a litellm custom provider
(`scripted/<name>`), so every call goes through the real `litellm.acompletion`.
A script answers from a list of replies or a callable (messages -> text, or an
awaitable of text), fills in token usage, and can fail its first k calls with
the litellm errors a real provider raises."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import openai

from fembench_agents.messages import Message
from fembench_agents.models._litellm import litellm
from fembench_agents.models.config import ClientOptions
from fembench_agents.models.factory import ClientSpec, ModelSource, register_model_source
from fembench_agents.models.names import SCRIPTED, is_scripted

PROVIDER = SCRIPTED
Responder = Callable[[list[Message]], str | Awaitable[str]]
Failure = Literal["rate_limit", "server_error", "timeout"]


@dataclass
class Script:
    """`calls` counts every request the provider received, failed ones included."""

    name: str
    replies: Sequence[str] | Responder
    fail_first: int = 0
    failure: Failure = "rate_limit"
    finish_reason: str = "stop"
    prices: tuple[float, float] | None = None  # (input, output) USD per token its calls cost; None: unpriced
    calls: int = 0
    seen: list[list[Message]] = field(default_factory=list)
    _served: int = 0

    @property
    def model(self) -> str:
        return f"{PROVIDER}/{self.name}"

    async def reply(self, messages: list[Message]) -> str:
        self.calls += 1
        self.seen.append(messages)
        if self.calls <= self.fail_first:
            raise _failure(self.failure, self.name, self.calls)
        if callable(self.replies):
            try:
                result = self.replies(messages)
                text = await result if inspect.isawaitable(result) else result
            except openai.APIError:  # litellm's errors (RateLimitError, ...) pass through as raised
                raise
            except Exception as exc:
                raise litellm.BadRequestError(
                    message=f"script {self.name!r} raised {type(exc).__name__}: {exc}",
                    model=self.name,
                    llm_provider=PROVIDER,
                ) from exc
            return str(text)
        if self._served >= len(self.replies):
            raise litellm.BadRequestError(
                message=f"script {self.name!r} has no reply left ({len(self.replies)} given, all used)",
                model=self.name,
                llm_provider=PROVIDER,
            )
        self._served += 1
        return self.replies[self._served - 1]


def _failure(kind: Failure, name: str, call: int) -> Exception:
    message = f"scripted {kind} on call {call}"
    if kind == "rate_limit":
        return litellm.RateLimitError(message=message, llm_provider=PROVIDER, model=name)
    if kind == "server_error":
        return litellm.InternalServerError(message=message, llm_provider=PROVIDER, model=name)
    return litellm.Timeout(message=message, model=name, llm_provider=PROVIDER)


def _echo(messages: list[Message]) -> str:
    return next((m.content for m in reversed(messages) if m.role == "user"), "")


class ScriptedProvider(litellm.CustomLLM):  # type: ignore[misc]
    def __init__(self) -> None:
        super().__init__()
        self.scripts: dict[str, Script] = {"echo": Script("echo", _echo)}

    async def acompletion(
        self,
        model: str,
        messages: list[dict[str, Any]],
        api_base: str,
        custom_prompt_dict: dict[str, Any],
        model_response: Any,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        script = self.scripts.get(model)
        if script is None:
            raise litellm.NotFoundError(
                message=f"no script named {model!r}; registered: {sorted(self.scripts)}",
                model=model,
                llm_provider=PROVIDER,
            )
        typed = [Message(role=m["role"], content=m["content"]) for m in messages]
        text = await script.reply(typed)
        prompt_tokens = litellm.token_counter(model="gpt-4o-mini", messages=messages)
        completion_tokens = litellm.token_counter(model="gpt-4o-mini", text=text, count_response_tokens=True)
        model_response.choices[0].message.content = text
        model_response.choices[0].finish_reason = script.finish_reason
        model_response.model = script.model
        model_response.usage = litellm.Usage(
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            total_tokens=prompt_tokens + completion_tokens,
        )
        return model_response


_PROVIDER = ScriptedProvider()


def ensure_registered() -> ScriptedProvider:
    """Put the provider into litellm.custom_provider_map and our model sources
    (once), keeping others there."""
    if not any(item.get("provider") == PROVIDER for item in litellm.custom_provider_map):
        litellm.custom_provider_map = [
            *litellm.custom_provider_map,
            {"provider": PROVIDER, "custom_handler": _PROVIDER},
        ]
    register_model_source(ModelSource(PROVIDER, is_scripted, _prepare_scripted, _script_prices))
    return _PROVIDER


def _prepare_scripted(spec: ClientSpec, server: object) -> ClientSpec:
    name = spec.name.removeprefix(f"{PROVIDER}/")
    script = get_script(name)
    if script is None:
        raise ValueError(f"no script named {name!r}: register it first with register_script({name!r}, ...)")
    options = spec.options or ClientOptions()
    if script.prices is not None and options.token_prices is None and options.price_as is None:
        return replace(spec, options=options.model_copy(update={"token_prices": script.prices}))
    return spec


def _script_prices(model: str) -> tuple[float, float] | None:
    script = get_script(model.removeprefix(f"{PROVIDER}/"))
    return script.prices if script is not None else None


def register_script(
    name: str,
    replies: Sequence[str] | Responder,
    *,
    fail_first: int = 0,
    failure: Failure = "rate_limit",
    finish_reason: str = "stop",
    prices: tuple[float, float] | None = None,
) -> Script:
    """Make `scripted/<name>` answer with `replies`; replaces a script of the same name.
    `prices`: (input, output) USD per token its calls are billed at, as a
    provider's would be (None: unpriced, as litellm has no price for it)."""
    if not name or "/" in name:
        raise ValueError(f"script name must be non-empty and contain no '/': {name!r}")
    if isinstance(replies, str):
        raise TypeError("replies must be a list of strings or a callable, not one string")
    script = Script(name, replies, fail_first=fail_first, failure=failure, finish_reason=finish_reason, prices=prices)
    ensure_registered().scripts[name] = script
    return script


def get_script(name: str) -> Script | None:
    return _PROVIDER.scripts.get(name)


def unregister_script(name: str) -> None:
    _PROVIDER.scripts.pop(name, None)

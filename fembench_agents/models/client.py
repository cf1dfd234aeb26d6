"""One async client for every provider litellm reaches: retries with backoff,
a concurrency limit, a per-call timeout, cost accounting, our response cache,
and one `on_call` report per call."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from fembench_agents.messages import (
    CallContext,
    Message,
    ModelParams,
    ModelRequest,
    ModelResponse,
    Usage,
)
from fembench_agents.models._litellm import litellm
from fembench_agents.models.cache import ResponseCache
from fembench_agents.models.config import ClientOptions
from fembench_agents.models.cost import call_cost
from fembench_agents.models.errors import ModelCallError, permanent_failure
from fembench_agents.models.keys import REDACTED, redact

OnCall = Callable[[ModelRequest, ModelResponse | None, str | None, CallContext], None]
"""Called once per call, after its last attempt: (request, response, None,
context) on success or cache hit, (request, None, error text, context) on a
final failure. The error text has secrets redacted."""

RETRYABLE: tuple[type[Exception], ...] = (
    litellm.RateLimitError,
    litellm.InternalServerError,
    litellm.ServiceUnavailableError,
    litellm.BadGatewayError,
    litellm.Timeout,
    litellm.APIConnectionError,
)


# Limits shared by every client of one concurrency group (a provider), per event loop.
_GROUP_LIMITS: dict[tuple[str, int], tuple[asyncio.AbstractEventLoop, asyncio.Semaphore]] = {}


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def with_system_prompt(messages: Sequence[Message], system_prompt: str | None) -> tuple[Message, ...]:
    """Prepend `system_prompt` unless the messages already open with a system message."""
    if system_prompt is None or (messages and messages[0].role == "system"):
        return tuple(messages)
    return (Message(role="system", content=system_prompt), *messages)


class LiteLLMClient:
    """`model` is the name recorded and hashed (`openai/gpt-4o-mini`,
    `local/smollm2`); `litellm_model` is what litellm is asked for when it
    differs (the local server's `openai/<alias>`). Keys come from the
    environment; an explicit `api_key` is only handed to litellm."""

    def __init__(
        self,
        model: str,
        params: ModelParams | None = None,
        *,
        options: ClientOptions | None = None,
        cache: ResponseCache | None = None,
        on_call: OnCall | None = None,
        system_prompt: str | None = None,
        litellm_model: str | None = None,
        api_key: str | None = None,
    ) -> None:
        self.model = model
        self.litellm_model = litellm_model or model
        self.params = params or ModelParams()
        self.options = options or ClientOptions()
        self.cache = cache
        self.on_call = on_call
        self.system_prompt = system_prompt
        self._api_key = api_key
        self._rng = self.options.retry.rng()
        self._semaphore: asyncio.Semaphore | None = None
        self._semaphore_loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"LiteLLMClient(model={self.model!r}, litellm_model={self.litellm_model!r})"

    async def complete(
        self, messages: Sequence[Message], context: CallContext, params: ModelParams | None = None
    ) -> ModelResponse:
        params = params or self.params
        if params.api_base is None and self.params.api_base is not None:
            params = params.model_copy(update={"api_base": self.params.api_base})
        request = ModelRequest(
            model=self.model,
            messages=with_system_prompt(messages, self.system_prompt),
            params=params,
            sample=context.sample,
        )
        request_hash = request.request_hash()
        if self.cache is None:
            return await self._call(request, request_hash, context)
        async with self.cache.lock(request_hash):
            started, stamp = time.perf_counter(), utc_now()
            hit = self.cache.get(request_hash)
            if hit is not None:
                # The same sample asked again (a resumed attempt, or a run repeated
                # into another directory): it keeps its recorded tokens and cost, so
                # a resumed run reports what the uninterrupted one would; `cached`
                # says nothing was spent this time.
                response = hit.model_copy(
                    update={
                        "cached": True,
                        "retries": 0,
                        "timestamp": stamp,
                        "latency_seconds": time.perf_counter() - started,
                        "request_hash": request_hash,
                    }
                )
                self._report(request, response, None, context)
                return response
            response = await self._call(request, request_hash, context)
            self.cache.put(request, response)
            return response

    async def _call(self, request: ModelRequest, request_hash: str, context: CallContext) -> ModelResponse:
        """Attempts until success, a non-retryable error, or retries run out."""
        started, stamp = time.perf_counter(), utc_now()
        policy = self.options.retry
        retries = 0
        while True:
            try:
                async with self._limit():
                    raw = await self._attempt(request)
                break
            except Exception as exc:
                permanent = permanent_failure(exc)
                if permanent is None and isinstance(exc, RETRYABLE) and retries < policy.max_retries:
                    await asyncio.sleep(policy.delay(retries, self._rng))
                    retries += 1
                    continue
                error = self._redact(f"{type(exc).__name__}: {exc}")
                self._report(request, None, error, context)
                raise ModelCallError(self.model, context, request_hash, retries, error, permanent) from None
        response = self._response(raw, request_hash, retries, time.perf_counter() - started, stamp)
        self._report(request, response, None, context)
        return response

    async def _attempt(self, request: ModelRequest) -> Any:
        params = request.params
        kwargs: dict[str, Any] = {
            "model": self.litellm_model,
            "messages": [m.model_dump() for m in request.messages],
            "timeout": params.timeout,
            "num_retries": 0,  # we retry; litellm and the provider SDK must not
            "drop_params": True,  # a parameter the provider does not take is dropped, not an error
        }
        for name in ("temperature", "max_tokens", "reasoning_effort", "seed", "api_base"):
            value = getattr(params, name)
            if value is not None:
                kwargs[name] = value
        if self._api_key is not None:
            kwargs["api_key"] = self._api_key
        try:
            async with asyncio.timeout(params.timeout):
                return await litellm.acompletion(**kwargs)
        except TimeoutError:
            raise litellm.Timeout(
                message=f"no answer within {params.timeout} s", model=self.litellm_model, llm_provider="fembench"
            ) from None

    def _response(self, raw: Any, request_hash: str, retries: int, latency: float, stamp: str) -> ModelResponse:
        choice = raw.choices[0]
        raw_usage = getattr(raw, "usage", None)
        usage = Usage(
            prompt_tokens=getattr(raw_usage, "prompt_tokens", None),
            completion_tokens=getattr(raw_usage, "completion_tokens", None),
        )
        return ModelResponse(
            text=choice.message.content or "",
            finish_reason=choice.finish_reason,
            usage=usage,
            cost_usd=call_cost(self.litellm_model, usage, self.options, raw_usage),
            latency_seconds=latency,
            cached=False,
            retries=retries,
            request_hash=request_hash,
            timestamp=stamp,
        )

    def _limit(self) -> asyncio.Semaphore:
        """The concurrency limit, one semaphore per event loop (and group)."""
        loop = asyncio.get_running_loop()
        group = self.options.concurrency_group
        if group is not None:
            key = (group, self.options.concurrency)
            shared = _GROUP_LIMITS.get(key)
            if shared is None or shared[0] is not loop:
                shared = (loop, asyncio.Semaphore(self.options.concurrency))
                _GROUP_LIMITS[key] = shared
            return shared[1]
        if self._semaphore is None or self._semaphore_loop is not loop:
            self._semaphore = asyncio.Semaphore(self.options.concurrency)
            self._semaphore_loop = loop
        return self._semaphore

    def _redact(self, text: str) -> str:
        return redact(text, [self._api_key])

    def _recorded(self, request: ModelRequest) -> ModelRequest:
        """The request as recorded: nothing secret, even inside an api_base URL."""
        base = request.params.api_base
        if base is None or self._redact(base) == base:
            return request
        return request.model_copy(update={"params": request.params.model_copy(update={"api_base": REDACTED})})

    def _report(
        self, request: ModelRequest, response: ModelResponse | None, error: str | None, context: CallContext
    ) -> None:
        if self.on_call is not None:
            self.on_call(self._recorded(request), response, error, context)

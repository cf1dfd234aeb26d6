"""`models check`: one tiny call per model, so that a user can test a key and
a server before a long run."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from fembench_agents.messages import CallContext, Message, ModelParams, Usage
from fembench_agents.models.config import ClientOptions, RetryPolicy
from fembench_agents.models.cost import prices_per_million
from fembench_agents.models.credentials import credential_problems, missing_key_advice, missing_keys
from fembench_agents.models.errors import LocalServerError, ModelCallError
from fembench_agents.models.factory import open_client

PROMPT = "Reply with the single word: ready"
CONTEXT = CallContext(task_id="models check", attempt="check")
# One call, no retries: the check reports what the first call met.
OPTIONS = ClientOptions(retry=RetryPolicy(max_retries=0))


@dataclass(frozen=True)
class ModelCheck:
    model: str
    called: bool
    error: str | None = None  # why it was not called, or how the call failed
    latency_seconds: float = 0.0
    usage: Usage = Usage()
    prices: tuple[float, float] | None = None  # USD per million (input, output) tokens

    @property
    def answered(self) -> bool:
        return self.called and self.error is None

    def line(self) -> str:
        if not self.called:
            return f"{self.model}: not called: {self.error}"
        if self.error is not None:
            return f"{self.model}: no answer: {self.error}"
        return (
            f"{self.model}: answered in {self.latency_seconds:.2f} s, {self.usage.prompt_tokens or 0} prompt + "
            f"{self.usage.completion_tokens or 0} completion tokens, {_price(self.prices)}"
        )


def _price(prices: tuple[float, float] | None) -> str:
    if prices is None:
        return "unpriced"
    if prices == (0.0, 0.0):
        return "free"
    return f"${prices[0]:.3g} / ${prices[1]:.3g} per million tokens (input / output)"


def check_model(model: str, api_base: str | None = None, timeout: float = 60.0, max_tokens: int = 16) -> ModelCheck:
    """Call `model` once with a tiny prompt. Never raises for a model that is
    misnamed, lacks a key, or fails to answer: the result says so."""
    if credential_problems([model], api_base):
        return ModelCheck(model, called=False, error=missing_key_advice(missing_keys(model)))
    params = ModelParams(temperature=0.0, max_tokens=max_tokens, timeout=timeout, api_base=api_base)
    try:
        with open_client(model, params, options=OPTIONS) as client:
            prices = prices_per_million(client.litellm_model, client.options)
            try:
                response = asyncio.run(client.complete([Message(role="user", content=PROMPT)], CONTEXT))
            except ModelCallError as exc:
                return ModelCheck(model, called=True, error=exc.last_error, prices=prices)
    except (ValueError, LocalServerError) as exc:
        return ModelCheck(model, called=False, error=str(exc))
    return ModelCheck(model, called=True, latency_seconds=response.latency_seconds, usage=response.usage, prices=prices)

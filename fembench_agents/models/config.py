"""Options of a model client, grouped: how to retry, how many calls at once,
how to price."""

from __future__ import annotations

import random

from pydantic import BaseModel, ConfigDict, Field


class RetryPolicy(BaseModel):
    """Exponential backoff on rate limits, server errors, timeouts and dropped
    connections. Delay before retry k (0-based) is
    min(max_delay, initial_delay * multiplier**k), scaled by a factor drawn
    uniformly from [0.5, 1] by an RNG seeded with `jitter_seed`; no jitter when
    `jitter_seed` is None."""

    model_config = ConfigDict(frozen=True)
    max_retries: int = Field(default=4, ge=0)
    initial_delay: float = Field(default=1.0, ge=0)
    multiplier: float = Field(default=2.0, ge=1)
    max_delay: float = Field(default=60.0, ge=0)
    jitter_seed: int | None = 0

    def rng(self) -> random.Random | None:
        return None if self.jitter_seed is None else random.Random(self.jitter_seed)

    def delay(self, retry: int, rng: random.Random | None) -> float:
        base = min(self.max_delay, self.initial_delay * self.multiplier**retry)
        return base if rng is None else base * rng.uniform(0.5, 1.0)


class ClientOptions(BaseModel):
    """`price_as` bills calls at the litellm price of another model (an
    OpenAI-compatible server hosting a known model); `token_prices` gives
    explicit (input, output) USD per token and wins over both. Without either,
    the model's own litellm price is used; an unpriced model costs None."""

    model_config = ConfigDict(frozen=True)
    # Calls in flight at once. Clients with the same `concurrency_group` (the
    # provider, for a run) share one limit; without a group each has its own.
    concurrency: int = Field(default=8, ge=1)
    concurrency_group: str | None = None
    retry: RetryPolicy = RetryPolicy()
    price_as: str | None = None
    token_prices: tuple[float, float] | None = None

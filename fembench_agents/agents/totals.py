"""An agent's model calls of one attempt added up: the attempt's record stands for
all of them (a coding agent's steps, best-of-N's samples), so its tokens, cost
and time count every call once."""

from __future__ import annotations

from dataclasses import dataclass

from fembench_agents.messages import ModelResponse, Usage
from fembench_agents.runs.log import now


@dataclass
class CallTotals:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0  # None once any call's price is unknown
    latency_seconds: float = 0.0
    first_timestamp: str | None = None
    last_hash: str = ""

    def add(self, response: ModelResponse) -> None:
        self.calls += 1
        self.prompt_tokens += response.usage.prompt_tokens or 0
        self.completion_tokens += response.usage.completion_tokens or 0
        cost = 0.0 if response.cached else response.cost_usd
        self.cost_usd = None if cost is None or self.cost_usd is None else self.cost_usd + cost
        self.latency_seconds += response.latency_seconds
        self.first_timestamp = self.first_timestamp or response.timestamp
        self.last_hash = response.request_hash

    def as_response(self, text: str, stop_reason: str) -> ModelResponse:
        """One response standing for all calls of an attempt: the attempt record
        and the episode summary count the agent's tokens, cost and time from it."""
        return ModelResponse(
            text=text,
            finish_reason=stop_reason,
            usage=Usage(prompt_tokens=self.prompt_tokens, completion_tokens=self.completion_tokens),
            cost_usd=self.cost_usd,
            latency_seconds=self.latency_seconds,
            request_hash=self.last_hash,
            timestamp=self.first_timestamp or now(),
        )

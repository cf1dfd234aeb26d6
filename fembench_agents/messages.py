"""Typed model requests and responses, shared by every model client."""

from __future__ import annotations

import hashlib
import json
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)
    role: Literal["system", "user", "assistant"]
    content: str


DEFAULT_TEMPERATURE: Final = 0.0
DEFAULT_MAX_TOKENS: Final = 2048


class ModelParams(BaseModel):
    """Sampling and transport options. `timeout` and `api_base` do not change
    the answer, so they are not part of the request hash."""

    model_config = ConfigDict(frozen=True)
    temperature: float | None = DEFAULT_TEMPERATURE
    max_tokens: int | None = DEFAULT_MAX_TOKENS
    reasoning_effort: Literal["low", "medium", "high"] | None = None
    seed: int | None = None
    timeout: float = Field(default=300.0, gt=0)
    api_base: str | None = None


class ModelRequest(BaseModel):
    """`sample` names which model sample the request is (an episode's
    attempt): two attempts that send identical messages are two samples, and the response cache must not answer one with the
    other. None for requests that are the same sample whoever sends them."""

    model_config = ConfigDict(frozen=True)
    model: str
    messages: tuple[Message, ...]
    params: ModelParams = ModelParams()
    sample: str | None = None

    def request_hash(self) -> str:
        """Stable across runs and machines: sha256 of canonical JSON. Without
        a sample, the hash recordings made before samples were named used."""
        body: dict[str, object] = {
            "model": self.model,
            "messages": [m.model_dump() for m in self.messages],
            "params": self.params.model_dump(exclude={"timeout", "api_base"}),
        }
        if self.sample is not None:
            body["sample"] = self.sample
        return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class Usage(BaseModel):
    model_config = ConfigDict(frozen=True)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    @property
    def total_tokens(self) -> int | None:
        if self.prompt_tokens is None and self.completion_tokens is None:
            return None
        return (self.prompt_tokens or 0) + (self.completion_tokens or 0)


class ModelResponse(BaseModel):
    model_config = ConfigDict(frozen=True)
    text: str
    finish_reason: str | None = None
    usage: Usage = Usage()
    cost_usd: float | None = None  # None when the price is unknown, never a made-up zero
    latency_seconds: float = 0.0
    cached: bool = False  # served by the response cache: the same sample, asked again
    replayed: bool = False  # served from a recorded run (`replay`): no model was asked
    retries: int = 0
    request_hash: str = ""
    timestamp: str | None = None  # UTC ISO time the call (or cache lookup) started


class CallContext(BaseModel):
    """Who is asking: names the task and attempt in records and errors."""

    model_config = ConfigDict(frozen=True)
    task_id: str = ""
    attempt: str = ""  # human-readable, e.g. "single-shot repeat 0 attempt 1"
    episode: str = ""  # runlog.episode_key(...) when called from a run
    attempt_index: int = 0
    sample: str | None = None  # becomes ModelRequest.sample

"""The agent's model calls, from the conversation's worker thread to the
episode's event loop: each call is checked against the caps and made through
`session.call_model`, the one recorded path every agent's calls take
(retried, cached, priced, hashed and logged as they happen)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from dataclasses import dataclass, field

from fembench_agents.agents.totals import CallTotals
from fembench_agents.contracts import SolveSession
from fembench_agents.messages import Message, ModelResponse
from fembench_agents.runs.episode_budget import EpisodeBudgetSpent
from fembench_agents.runs.recording import ModelUnavailable

# The stop reasons that end the episode, not only the attempt: no later attempt could call
# the model (the agent's cost and wall-clock caps, the run's matched episode budget).
EPISODE_CAPS = ("cost_cap", "time_cap", "episode_budget")


class CapReached(Exception):
    """A budget ran out before a model call: an outcome, not a failure."""

    def __init__(self, kind: str, detail: str) -> None:
        self.kind = kind  # one of EPISODE_CAPS
        super().__init__(detail)


class ModelFailure(Exception):
    """The model call failed for good (after the client's retries); `original`
    is what the client raised."""

    def __init__(self, error: str, original: BaseException) -> None:
        self.original = original
        super().__init__(error)


@dataclass
class Caps:
    deadline: float  # time.monotonic() value
    max_cost_usd: float | None = None

    def remaining(self) -> float:
        return self.deadline - time.monotonic()


@dataclass
class Bridge:
    """Callable from any thread but the loop's own: `bridge(messages)`."""

    session: SolveSession
    loop: asyncio.AbstractEventLoop
    caps: Caps
    label: str  # e.g. "openhands repeat 0"
    attempt_index: int = 0
    episode_totals: CallTotals = field(default_factory=CallTotals)
    attempt_totals: CallTotals = field(default_factory=CallTotals)
    failure: BaseException | None = None  # the first cap or model failure of the current turn
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start_attempt(self, index: int) -> None:
        self.attempt_index, self.attempt_totals, self.failure = index, CallTotals(), None

    def __call__(self, messages: list[Message]) -> ModelResponse:
        with self._lock:
            try:
                return self._call(messages)
            except BaseException as exc:
                self.failure = self.failure or exc
                raise

    def _call(self, messages: list[Message]) -> ModelResponse:
        spent = self.episode_totals.cost_usd
        if self.caps.max_cost_usd is not None and spent is not None and spent >= self.caps.max_cost_usd:
            raise CapReached("cost_cap", f"cost cap reached: ${spent:.4f} of ${self.caps.max_cost_usd:.4f}")
        remaining = self.caps.remaining()
        if remaining <= 0:
            raise CapReached("time_cap", "wall-clock cap reached")
        future = asyncio.run_coroutine_threadsafe(self._complete(messages), self.loop)
        try:
            return future.result(timeout=remaining)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise CapReached("time_cap", "wall-clock cap reached during a model call") from None

    async def _complete(self, messages: list[Message]) -> ModelResponse:
        index = self.episode_totals.calls
        try:
            response = await self.session.call_model(
                messages,
                attempt_index=self.attempt_index,
                attempt=f"{self.label} attempt {self.attempt_index} call {index}",
            )
        except ModelUnavailable as exc:
            raise ModelFailure(exc.error, exc.__cause__ or exc) from exc
        except EpisodeBudgetSpent as exc:  # the run's matched budget: an outcome, as the agent's own caps
            raise CapReached("episode_budget", str(exc)) from None
        except Exception as exc:  # a diverged replay: the agent stops the run on it
            raise ModelFailure(f"{type(exc).__name__}: {exc}", exc) from exc
        self.episode_totals.add(response)
        self.attempt_totals.add(response)
        return response

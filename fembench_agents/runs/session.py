"""One episode: an agent's attempts at one task (one repeat), each model call
and each scored attempt appended to the run log as it happens."""

from __future__ import annotations

import asyncio
import sys
import time

from fembench_agents.contracts import Feedback, FeedbackBuilder, ModelClient, Track
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.messages import CallContext, Message, ModelParams, ModelRequest, ModelResponse
from fembench_agents.scoring.outcomes import FunctionOutcome, TestSuiteOutcome
from fembench_agents.runs.log import AttemptRecord, EpisodeRecord, ModelCallRecord, RunLog
from fembench_agents.suite.model import Task


class ModelUnavailable(RuntimeError):
    """The model call failed after its retries; the episode ends as an error
    (recorded, and retried when the run is resumed). `permanent` is the kind
    of error retrying cannot fix ("authentication", ...), None otherwise."""

    def __init__(self, error: str, permanent: str | None = None) -> None:
        super().__init__(error)
        self.permanent = permanent


def _diverged_replay(exc: Exception) -> bool:
    """A replay asked something its recording never saw: the run must stop, not
    record a model failure (which a resume would then retry as if the provider
    had been flaky). Looked up in sys.modules, not imported: the models package
    imports litellm, and if it was never imported no client raised its error."""
    errors = sys.modules.get("fembench_agents.models.errors")
    return errors is not None and isinstance(exc, errors.UnrecordedRequestError)


class EpisodeSession:
    def __init__(self, *, task: Task, track: Track, model: ModelClient, params: ModelParams,
                 evaluator: Evaluator, feedback: FeedbackBuilder, log: RunLog, episode: str,
                 agent: str, repeat: int) -> None:
        self.task, self.track, self.model, self.params = task, track, model, params
        self.evaluator, self.feedback, self.log = evaluator, feedback, log
        self.episode, self.agent, self.repeat = episode, agent, repeat
        self.attempts: list[AttemptRecord] = []

    def last_reply(self) -> str:
        return self.attempts[-1].reply if self.attempts else ""

    async def score(self, text: str) -> FunctionOutcome | TestSuiteOutcome:
        return await asyncio.to_thread(self.evaluator.score, self.task, self.track, text)

    async def attempt(self, messages: list[Message]) -> tuple[FunctionOutcome | TestSuiteOutcome, Feedback]:
        index = len(self.attempts)
        # Every attempt is a sample of its own, even when its prompt repeats
        # an earlier one word for word (a model that repeats its wrong code,
        # two tasks that read alike, two agents that open alike).
        sample = f"{self.episode} attempt {index}"
        request = ModelRequest(model=self.model.model, messages=tuple(messages), params=self.params, sample=sample)
        context = CallContext(task_id=self.task.task_id, episode=self.episode, attempt_index=index,
                              attempt=f"{self.agent} repeat {self.repeat} attempt {index}", sample=sample)
        try:
            response = await self.model.complete(messages, context, self.params)
        except Exception as exc:  # noqa: BLE001 - any provider failure is recorded, never fatal to the run
            if _diverged_replay(exc):
                raise
            # A replayed failure carries the recorded text, so replay logs it identically.
            error = getattr(exc, "recorded", None) or f"{type(exc).__name__}: {exc}"[:2000]
            self.log.append(ModelCallRecord(episode=self.episode, task_id=self.task.task_id,
                                            attempt_index=index, request=request,
                                            request_hash=request.request_hash(), error=error))
            self._record(index, messages, "", None, None, None, model_error=error)
            # Read off the exception, not imported: see _diverged_replay.
            raise ModelUnavailable(error, getattr(exc, "permanent", None)) from exc
        self.log.append(ModelCallRecord(episode=self.episode, task_id=self.task.task_id, attempt_index=index,
                                        request=request, request_hash=response.request_hash or request.request_hash(),
                                        response=response))
        return await self.submit(response.text, messages, response)

    async def submit(self, text: str, messages: list[Message], response: ModelResponse | None
                     ) -> tuple[FunctionOutcome | TestSuiteOutcome, Feedback]:
        outcome = await self.score(text)
        feedback = self.feedback(outcome)
        self._record(len(self.attempts), messages, text, response, outcome, feedback)
        return outcome, feedback

    def _record(self, index: int, messages: list[Message], reply: str, response: ModelResponse | None,
                outcome: FunctionOutcome | TestSuiteOutcome | None, feedback: Feedback | None,
                model_error: str | None = None) -> None:
        record = AttemptRecord(
            episode=self.episode, task_id=self.task.task_id, track=self.track, agent=self.agent,
            model=self.model.model, repeat=self.repeat, attempt_index=index, messages=tuple(messages),
            reply=reply, request_hash=response.request_hash if response else None, response=response,
            model_error=model_error, outcome=outcome, feedback=feedback)
        self.attempts.append(record)
        self.log.append(record)

    def summary(self, started: float, error: str | None = None, error_kind: str | None = None) -> EpisodeRecord:
        scored = [a for a in self.attempts if a.outcome is not None]
        passed_at = next((a.attempt_index for a in scored if a.outcome and a.outcome.passed), None)
        last = scored[-1].outcome if scored else None
        responses = [a.response for a in self.attempts if a.response is not None]
        costs = [r.cost_usd for r in responses]  # a cached response is the same sample, at its recorded cost
        score = (last.joint_score if isinstance(last, TestSuiteOutcome) else float(bool(last and last.passed))) if last else 0.0
        if passed_at is not None:
            score = 1.0
        return EpisodeRecord(
            episode=self.episode, task_id=self.task.task_id, track=self.track, agent=self.agent,
            model=self.model.model, repeat=self.repeat, status="error" if error else "done",
            passed=passed_at is not None, score=score, attempts=len(self.attempts),
            first_pass_attempt=passed_at, failed_stage=None if passed_at is not None else (
                last.failed_stage if last else ("model_error" if error else None)),
            reason=None if passed_at is not None else (last.reason if last else ("model_error" if error else None)),
            prompt_tokens=sum(r.usage.prompt_tokens or 0 for r in responses),
            completion_tokens=sum(r.usage.completion_tokens or 0 for r in responses),
            cost_usd=None if any(c is None for c in costs) else sum(c for c in costs if c is not None),
            model_seconds=sum(r.latency_seconds for r in responses),
            seconds=time.perf_counter() - started, error=error, error_kind=error_kind,
            model_calls=len(responses), reused_calls=sum(r.cached or r.replayed for r in responses))

"""One episode: an agent's attempts at one task (one repeat), each model call
and each scored attempt appended to the run log as it happens."""

from __future__ import annotations

import asyncio
import time

from fembench_agents.contracts import Feedback, FeedbackBuilder, ModelClient, Problem, Track
from fembench_agents.messages import CallContext, Message, ModelParams, ModelResponse
from fembench_agents.runs.budget import SpendCap
from fembench_agents.runs.episode_budget import EpisodeBudget, EpisodeBudgetSpent
from fembench_agents.runs.log import AttemptRecord, EpisodeRecord, RunLog
from fembench_agents.runs.recording import ModelUnavailable, recorded_call
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.outcomes import OutcomeBase


class EpisodeSession:
    def __init__(
        self,
        *,
        task: Problem,
        track: Track,
        model: ModelClient,
        params: ModelParams,
        evaluator: Evaluator,
        feedback: FeedbackBuilder,
        log: RunLog,
        episode: str,
        agent: str,
        repeat: int,
        caps: EpisodeBudget | None = None,
        budget: SpendCap | None = None,
    ) -> None:
        self.task, self.track, self.model, self.params = task, track, model, params
        self.evaluator, self.feedback, self.log = evaluator, feedback, log
        self.episode, self.agent, self.repeat = episode, agent, repeat
        self.caps = caps  # the episode's budget (matched across agents); None: uncapped
        self.budget_stop: str | None = None  # the cap that ended the episode
        self.started = time.perf_counter()
        self.budget = budget  # --max-cost: no call starts once the spend reaches it
        self.attempts: list[AttemptRecord] = []
        self.oracle_passed: bool | None = None  # best-of-N's oracle choice (upper_bound)
        # every call answered through call_model: a coding agent makes many per attempt
        self.calls: list[ModelResponse] = []

    def last_reply(self) -> str:
        return self.attempts[-1].reply if self.attempts else ""

    async def upper_bound(self, others: list[str], chosen_passed: bool) -> None:
        passed = chosen_passed
        for text in others:
            if passed:
                break
            passed = (await self.score(text)).passed
        self.oracle_passed = passed

    async def score(self, text: str) -> OutcomeBase:
        return await asyncio.to_thread(self.evaluator.score, self.task, self.track, text)

    async def attempt(self, messages: list[Message]) -> tuple[OutcomeBase, Feedback]:
        index = len(self.attempts)
        # Every attempt is a sample of its own, even when its prompt repeats
        # an earlier one word for word (a model that repeats its wrong code,
        # two tasks that read alike, two agents that open alike).
        sample = f"{self.episode} attempt {index}"
        try:
            response = await self.call_model(
                messages,
                attempt_index=index,
                sample=sample,
                attempt=f"{self.agent} repeat {self.repeat} attempt {index}",
            )
        except ModelUnavailable as exc:
            self._record(index, messages, "", None, None, None, model_error=exc.error)
            raise
        return await self.submit(response.text, messages, response)

    async def call_model(
        self, messages: list[Message], *, attempt_index: int, attempt: str, sample: str | None = None
    ) -> ModelResponse:
        """A model call of this episode, recorded (see `runs.recording`)."""
        context = CallContext(
            task_id=self.task.task_id, episode=self.episode, attempt_index=attempt_index, attempt=attempt, sample=sample
        )
        self._check_caps()
        if self.budget is not None:
            self.budget.check()
        response = await recorded_call(self.model, self.log, messages, context, self.params)
        if self.budget is not None:
            self.budget.charge(response)
        self.calls.append(response)
        return response

    def _check_caps(self) -> None:
        if self.caps is None:
            return
        tokens = sum((r.usage.prompt_tokens or 0) + (r.usage.completion_tokens or 0) for r in self.calls)
        usd = sum(r.cost_usd or 0.0 for r in self.calls if not r.cached)
        cap = self.caps.reached(len(self.calls), tokens, usd, time.perf_counter() - self.started)
        if cap is not None:
            self.budget_stop = self.budget_stop or cap
            raise EpisodeBudgetSpent(f"episode budget reached: {cap} ({self.caps.describe()})")

    async def submit(
        self, text: str, messages: list[Message], response: ModelResponse | None
    ) -> tuple[OutcomeBase, Feedback]:
        outcome = await self.score(text)
        feedback = self.feedback(outcome)
        self._record(len(self.attempts), messages, text, response, outcome, feedback)
        return outcome, feedback

    def _record(
        self,
        index: int,
        messages: list[Message],
        reply: str,
        response: ModelResponse | None,
        outcome: OutcomeBase | None,
        feedback: Feedback | None,
        model_error: str | None = None,
    ) -> None:
        record = AttemptRecord(
            episode=self.episode,
            task_id=self.task.task_id,
            track=self.track,
            agent=self.agent,
            model=self.model.model,
            repeat=self.repeat,
            attempt_index=index,
            messages=tuple(messages),
            reply=reply,
            request_hash=response.request_hash if response else None,
            response=response,
            model_error=model_error,
            outcome=outcome,
            feedback=feedback,
        )
        self.attempts.append(record)
        self.log.append(record)

    def summary(self, started: float, error: str | None = None, error_kind: str | None = None) -> EpisodeRecord:
        scored = [a for a in self.attempts if a.outcome is not None]
        passed_at = next((a.attempt_index for a in scored if a.outcome and a.outcome.passed), None)
        last = scored[-1].outcome if scored else None
        responses = [a.response for a in self.attempts if a.response is not None]
        costs = [r.cost_usd for r in responses]  # a cached response is the same sample, at its recorded cost
        score = last.episode_score if last else 0.0
        if passed_at is not None:
            score = 1.0
        return EpisodeRecord(
            episode=self.episode,
            task_id=self.task.task_id,
            track=self.track,
            agent=self.agent,
            model=self.model.model,
            repeat=self.repeat,
            status="error" if error else "done",
            passed=passed_at is not None,
            score=score,
            attempts=len(self.attempts),
            first_pass_attempt=passed_at,
            failed_stage=None
            if passed_at is not None
            else (last.failed_stage if last else ("model_error" if error else None)),
            reason=None if passed_at is not None else (last.reason if last else ("model_error" if error else None)),
            prompt_tokens=sum(r.usage.prompt_tokens or 0 for r in responses),
            completion_tokens=sum(r.usage.completion_tokens or 0 for r in responses),
            cost_usd=None if any(c is None for c in costs) else sum(c for c in costs if c is not None),
            model_seconds=sum(r.latency_seconds for r in responses),
            seconds=time.perf_counter() - started,
            error=error,
            error_kind=error_kind,
            oracle_passed=self.oracle_passed,
            budget_stop=self.budget_stop,
            model_calls=len(self.calls),
            reused_calls=sum(r.cached or r.replayed for r in self.calls),
        )

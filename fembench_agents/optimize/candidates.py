"""Evaluating a candidate system prompt on problems of one track: the
single-shot prompt agent with that system prompt, its episodes run by
`runs.run.execute_run` into a run directory, exactly as
`fembench-agents run --agent prompt:FILE` would.

Layout under the optimization's out directory:
  candidates/<id>.json   {"system_prompt": ...}: the candidate, usable as `--agent prompt:FILE`
  evals/<id>/            a run directory (manifest.json + log.jsonl) per candidate;
                         `fembench-agents replay evals/<id>` replays it with no model calls

An episode finished in a candidate's log is not run again: evaluating the same
prompt on the same task twice (GEPA does, and a resumed run does) reads the
recorded outcome. GEPA still counts it as a metric call, so budgets mean what
they mean in GEPA; only the model and the sandbox are spared.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fembench_agents.agents import make_agent
from fembench_agents.contracts import FeedbackBuilder, ModelClient, Problem
from fembench_agents.messages import ModelParams
from fembench_agents.optimize.split import HeldOutViolation
from fembench_agents.runs.defaults import DEFAULT_TRACK
from fembench_agents.runs.log import AttemptRecord, EpisodeRecord, episode_key, read_log
from fembench_agents.runs.run import RunConfig, execute_run
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.extraction import parse_code

REPEAT = 0  # one episode per (candidate, task): params.seed = 0


def prompt_file_data(system_prompt: str, scaffold: str) -> dict[str, str]:
    """A prompt file's JSON (`agents.prompted.read_prompt_file`); the scaffold only when not the default."""
    return {"system_prompt": system_prompt, **({"scaffold": scaffold} if scaffold != "single_shot" else {})}


def candidate_id(system_prompt: str) -> str:
    return "c" + hashlib.sha256(system_prompt.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class EpisodeResult:
    """One task attempted under one candidate: what GEPA scores and reflects on."""

    task_id: str
    score: float  # the feedback builder's score (graded by how far the attempt got)
    passed: bool
    prompt: str  # the task prompt the model was given (the system prompt is the candidate)
    reply: str
    code: str  # the code parsed from the reply, or the reply when none parsed
    feedback: str
    error: str | None = None  # the model call failed (after retries)
    reused: bool = False  # read from the log, not run now


class PromptEvaluations:
    """Runs candidates on the problems of `track`. Refuses any problem outside
    `allowed` (the training and validation problems): held-out problems never
    reach a model here."""

    def __init__(
        self,
        root: Path,
        tasks: Mapping[str, Problem],
        allowed: frozenset[str],
        model: ModelClient,
        evaluator: Evaluator,
        feedback: FeedbackBuilder,
        params: ModelParams,
        concurrency: int,
        scaffold: str = "single_shot",
        track: str = DEFAULT_TRACK,
    ) -> None:
        self.root = root
        self.tasks, self.allowed = tasks, allowed
        self.model, self.evaluator, self.feedback, self.params = model, evaluator, feedback, params
        self.concurrency = concurrency
        self.scaffold = scaffold
        self.track = track
        self.new_episodes = 0
        self._locks: dict[str, asyncio.Lock] = {}

    def candidate_file(self, system_prompt: str) -> Path:
        path = self.root / "candidates" / f"{candidate_id(system_prompt)}.json"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(prompt_file_data(system_prompt, self.scaffold), indent=1))
            os.replace(tmp, path)
        return path

    def run_dir(self, system_prompt: str) -> Path:
        return self.root / "evals" / candidate_id(system_prompt)

    async def evaluate(self, system_prompt: str, task_ids: list[str]) -> list[EpisodeResult]:
        outside = sorted(set(task_ids) - self.allowed)
        if outside:
            raise HeldOutViolation(
                f"refusing to evaluate tasks outside the training and validation sets: {', '.join(outside)}"
            )
        cid = candidate_id(system_prompt)
        lock = self._locks.setdefault(cid, asyncio.Lock())
        async with lock:  # one writer per candidate run directory
            return await self._evaluate(system_prompt, task_ids)

    async def _evaluate(self, system_prompt: str, task_ids: list[str]) -> list[EpisodeResult]:
        spec = f"prompt:{self.candidate_file(system_prompt).resolve()}"
        agent = make_agent(spec)
        out = self.run_dir(system_prompt)
        key = {t: episode_key(self.model.model, agent.name, self.track, t, REPEAT) for t in task_ids}
        # the run's selection grows with every task attempted in it, so that `replay` re-runs exactly those
        attempted = {r.task_id for r in read_log(out) if isinstance(r, AttemptRecord)}
        ran: set[str] = set()

        def finished(record: EpisodeRecord) -> None:
            ran.add(record.task_id)

        await execute_run(
            self._config(spec, sorted({*attempted, *task_ids})),
            list(self.tasks.values()),
            out,
            self.model,
            self.evaluator,
            agent,
            self.feedback,
            on_episode=finished,
            stop_after=None,  # a failed model call scores 0 and is retried when GEPA asks again
            batch=task_ids,
        )
        self.new_episodes += len(ran)
        attempts = _last_attempts(read_log(out))
        return [self._result(t, attempts.get(key[t]), reused=t not in ran) for t in task_ids]

    def _config(self, spec: str, task_ids: list[str]) -> RunConfig:
        return RunConfig(
            model=self.model.model,
            agent=spec,
            tasks=",".join(task_ids),
            track=self.track,
            repeats=1,
            concurrency=self.concurrency,
            params=self.params,
        )

    def _result(self, task_id: str, attempt: AttemptRecord | None, reused: bool) -> EpisodeResult:
        if attempt is None or attempt.outcome is None or attempt.feedback is None:
            # A failed model call: its attempt holds the error (an errored episode's error is the same text).
            error = (attempt.model_error if attempt else None) or "no attempt"
            prompt = attempt.messages[-1].content if attempt and attempt.messages else ""
            return EpisodeResult(
                task_id=task_id,
                score=0.0,
                passed=False,
                prompt=prompt,
                reply="",
                code="",
                feedback=f"The model call failed, so there is no answer to score ({error}).",
                error=error,
                reused=reused,
            )
        task = self.tasks[task_id]
        parsed = parse_code(attempt.reply, (task.main_name,))
        return EpisodeResult(
            task_id=task_id,
            score=attempt.feedback.score,
            passed=attempt.outcome.passed,
            prompt=attempt.messages[-1].content,
            reply=attempt.reply,
            code=parsed.code if parsed.code.strip() else attempt.reply,
            feedback=attempt.feedback.text,
            reused=reused,
        )


def _last_attempts(records: Sequence[object]) -> dict[str, AttemptRecord]:
    """The last attempt of each episode."""
    return {r.episode: r for r in records if isinstance(r, AttemptRecord)}

"""`run`: one model x one agent x a task selection -> a run directory.

Resumable: episodes already finished in the log are skipped, so the same
command after Ctrl-C or kill -9 continues where the run stopped."""

from __future__ import annotations

import asyncio
import importlib.metadata
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from fembench_agents.agents import make_agent
from fembench_agents.contracts import FeedbackBuilder, ModelClient, Problem, SolverAgent, Track
from fembench_agents.kinds import tracks
from fembench_agents.kinds.contract import SkippedTask
from fembench_agents.messages import ModelParams
from fembench_agents.runs.budget import BudgetReached, SpendCap
from fembench_agents.runs.defaults import DEFAULT_CONCURRENCY, DEFAULT_REPEATS, DEFAULT_SELECTION, DEFAULT_TRACK
from fembench_agents.runs.episode_budget import EpisodeBudget, EpisodeBudgetSpent
from fembench_agents.runs.health import BUDGET_ERROR_KIND, STOP_AFTER, FailureStreak, RunStopped
from fembench_agents.runs.log import (
    EpisodeRecord,
    RunLog,
    RunManifest,
    episode_key,
    read_log,
    read_manifest,
    write_manifest,
)
from fembench_agents.runs.reader import finished_episodes
from fembench_agents.runs.recording import ModelUnavailable
from fembench_agents.runs.selection import select_tasks
from fembench_agents.runs.session import EpisodeSession
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.feedback import TemplateFeedback
from fembench_agents.scoring.sandbox import IsolationReport


@dataclass(frozen=True)
class RunConfig:
    model: str
    agent: str
    tasks: str = DEFAULT_SELECTION
    track: Track = DEFAULT_TRACK
    repeats: int = DEFAULT_REPEATS
    concurrency: int = DEFAULT_CONCURRENCY  # episodes at once
    params: ModelParams = field(default_factory=ModelParams)
    model_concurrency: int | None = None  # model calls at once per provider; None: `concurrency`
    # the same caps on every agent's episode (matched budgets); a manifest gives it as a dict
    episode_budget: EpisodeBudget | None = None
    # beside each problem, its fresh instance drawn with this seed (ScoringOptions.fresh_inputs)
    fresh_inputs: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "episode_budget", EpisodeBudget.of(self.episode_budget))
        if self.track not in tracks():
            raise ValueError(f"track must be one of {', '.join(tracks())}, got {self.track!r}")
        if self.repeats < 1:
            raise ValueError(f"repeats must be >= 1, got {self.repeats}")
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {self.concurrency}")
        if self.model_concurrency is not None and self.model_concurrency < 1:
            raise ValueError(f"model concurrency must be >= 1, got {self.model_concurrency}")
        if self.fresh_inputs is not None and self.fresh_inputs < 0:
            raise ValueError(f"the fresh-inputs seed must be >= 0, got {self.fresh_inputs}")

    @property
    def model_calls_at_once(self) -> int:
        return self.model_concurrency or self.concurrency

    def identity(self) -> dict[str, object]:
        """What must match for a run directory to be resumed with this config."""
        d = asdict(self)
        d["params"] = self.params.model_dump(exclude={"timeout", "api_base"})
        d.pop("concurrency")  # how fast, not what: a resume may change them
        d.pop("model_concurrency")
        if d["episode_budget"] is None:  # a run without one reads as runs did before budgets
            d.pop("episode_budget")
        if d["fresh_inputs"] is None:  # likewise a run of published problems only
            d.pop("fresh_inputs")
        return d


def _git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, cwd=Path(__file__).resolve().parent
        )
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def _versions() -> dict[str, str]:
    found = {}
    for pkg in ("fembench-agents", "numpy", "scipy", "litellm", "pydantic"):
        try:
            found[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            pass
    return found


def run_limits(config: RunConfig, evaluator: Evaluator) -> dict[str, int]:
    """The limits a session of a run works under, as the manifest records them."""
    return {
        "episodes": config.concurrency,
        "model_calls": config.model_calls_at_once,
        "sandbox_workers": evaluator.sandbox.size,
    }


def prepare_run_dir(
    out: Path,
    config: RunConfig,
    tasks: Sequence[Problem],
    isolation: IsolationReport | None = None,
    limits: dict[str, int] | None = None,
    calibration: str | None = None,
    grow: bool = False,
) -> None:
    """Write the manifest, or check that an existing run directory holds the
    same run. A resumed run that scores under weaker isolation than before
    records the weaker one: the run's scores are only as confined as that.
    `grow`: the run's selection may have grown since (`config.tasks` naming
    more problems than the manifest), as an optimizer's candidate run does."""
    if (out / "manifest.json").exists():
        old = read_manifest(out)
        identity = config.identity()
        grown = grow and {**old.config, "tasks": identity["tasks"]} == identity
        if old.config != identity and not grown:
            raise ValueError(f"{out} holds a different run (config {old.config}); choose another --out")
        drift = [t.task_id for t in tasks if old.task_hashes.get(t.task_id, t.content_hash) != t.content_hash]
        if drift:
            raise ValueError(f"{out}: tasks changed since the run started: {', '.join(drift)}")
        update: dict[str, object] = {}
        if old.config != identity:
            update["config"] = identity
            update["task_hashes"] = {**old.task_hashes, **{t.task_id: t.content_hash for t in tasks}}
        if isolation is not None and not isolation.confined and (old.isolation is None or old.isolation.confined):
            update["isolation"] = isolation
        if limits is not None and limits != old.limits:
            update["limits"] = limits  # the latest session's
        if calibration is not None and calibration not in old.calibrations:
            update["calibrations"] = [*old.calibrations, calibration]
        if update:
            write_manifest(out, old.model_copy(update=update))
        return
    out.mkdir(parents=True, exist_ok=True)
    write_manifest(
        out,
        RunManifest(
            run_id=out.name,
            config=config.identity(),
            task_hashes={t.task_id: t.content_hash for t in tasks},
            versions=_versions(),
            git_commit=_git_commit(),
            isolation=isolation,
            limits=limits,
            calibrations=[calibration] if calibration else [],
        ),
    )


def record_skipped_tasks(out: Path, skipped: list[SkippedTask]) -> None:
    """The task modules the latest session of the run at `out` went on without."""
    if not (out / "manifest.json").exists():
        return
    manifest = read_manifest(out)
    entries = [s.model_dump() for s in skipped]
    if manifest.skipped_tasks != entries:
        write_manifest(out, manifest.model_copy(update={"skipped_tasks": entries}))


async def run_episode(
    agent: SolverAgent,
    task: Problem,
    config: RunConfig,
    model: ModelClient,
    evaluator: Evaluator,
    feedback: FeedbackBuilder,
    log: RunLog,
    repeat: int,
    budget: SpendCap | None = None,
) -> EpisodeRecord:
    key = episode_key(config.model, agent.name, config.track, task.task_id, repeat)
    params = config.params.model_copy(update={"seed": repeat})
    session = EpisodeSession(
        task=task,
        track=config.track,
        model=model,
        params=params,
        evaluator=evaluator,
        feedback=feedback,
        log=log,
        episode=key,
        agent=agent.name,
        repeat=repeat,
        caps=config.episode_budget,
        budget=budget,
    )
    started = time.perf_counter()
    error, error_kind = None, None
    try:
        await agent.solve(task, session)
    except ModelUnavailable as exc:
        error, error_kind = str(exc), exc.permanent
    except EpisodeBudgetSpent:  # the session kept which cap: the episode ends as its attempts left it
        pass
    record = session.summary(started, error, error_kind)
    log.append(record)
    return record


async def execute_run(
    config: RunConfig,
    tasks: Sequence[Problem],
    out: Path,
    model: ModelClient,
    evaluator: Evaluator,
    agent: SolverAgent | None = None,
    feedback: FeedbackBuilder | None = None,
    on_episode: Callable[[EpisodeRecord], None] | None = None,
    stop_after: int | None = STOP_AFTER,
    batch: Sequence[str] | None = None,
    budget: SpendCap | None = None,
) -> list[EpisodeRecord]:
    """Run every unfinished episode of `config` into `out`; returns all finished episodes.
    Raises RunStopped once `stop_after` episodes in a row fail with the same error
    that retrying cannot fix (None: never stop early). `batch`: run only these
    problems' episodes now, in this order, and let the run's selection grow to
    `config.tasks` (an optimizer evaluates a candidate one batch of problems at a time).
    `budget`: the spend cap (shared by a grid's runs); once it is reached no episode
    starts, and BudgetReached is raised when every episode has ended or been left."""
    selected: list[Problem] = select_tasks(list(tasks), config.tasks)
    agent = agent or make_agent(config.agent)
    feedback = feedback if feedback is not None else TemplateFeedback()
    # A resume appends to the log: one it cannot read entirely is refused (DamagedLog) before anything is written.
    done = finished_episodes(read_log(out))
    prepare_run_dir(
        out,
        config,
        selected,
        evaluator.sandbox.isolation(),
        run_limits(config, evaluator),
        evaluator.calibration_id(config.track),
        grow=batch is not None,
    )
    by_id = {t.task_id: t for t in selected}
    now = selected if batch is None else [by_id[t] for t in dict.fromkeys(batch) if t in by_id]
    todo = [
        (t, r)
        for r in range(config.repeats)
        for t in now
        if episode_key(config.model, agent.name, config.track, t.task_id, r) not in done
    ]
    gate = asyncio.Semaphore(config.concurrency)
    streak = FailureStreak(stop_after) if stop_after else None
    ended = not_started = 0
    with RunLog(out) as log:

        async def one(task: Problem, repeat: int) -> EpisodeRecord | None:
            nonlocal ended, not_started
            async with gate:
                if budget is not None and budget.reached:
                    ended, not_started = ended + 1, not_started + 1
                    return None
                record = await run_episode(agent, task, config, model, evaluator, feedback, log, repeat, budget)
            ended += 1
            if on_episode:
                on_episode(record)
            if streak is not None:
                streak.observe(record, len(todo) - ended)
            return record

        running = [asyncio.ensure_future(one(t, r)) for t, r in todo]
        try:
            fresh = await asyncio.gather(*running)
        except BaseException as exc:
            # One episode failed the run (or it was interrupted): stop the others
            # before the log closes, so none of them writes to a closed log.
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
            if isinstance(exc, RunStopped):  # an episode may have ended while the stop was on its way
                raise RunStopped(exc.kind, exc.message, exc.failed, len(todo) - ended) from None
            raise
    stopped = sum(r is not None and r.error_kind == BUDGET_ERROR_KIND for r in fresh)
    if budget is not None and (stopped or not_started):
        raise BudgetReached(budget, stopped, not_started)
    merged = {**done, **{r.episode: r for r in fresh if r is not None}}
    return sorted(merged.values(), key=lambda r: (r.task_id, r.repeat))

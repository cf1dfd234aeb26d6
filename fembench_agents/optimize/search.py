"""One optimization, start to finish: split, budget, GEPA (checkpointed in
`<out>/gepa`, resumed from there), final scores, leak guard, artifacts.

Out directory:
  optimize.json         what this optimization is; a rerun must match it (the budget may change)
  gepa/                 GEPA's run_dir: gepa_state.bin (checkpoint), gepa_log.txt; `touch gepa/gepa.stop` stops it
  candidates/, evals/   each candidate and its run directory (see evaluate.py)
  reflection/log.jsonl  every reflection call
  history.json          every candidate with lineage and validation scores per task
  pareto_front.json     per validation task, the best score and the candidates reaching it
  result.json           the result, leak report included
"""

from __future__ import annotations

import contextlib
import json
import signal
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import gepa
from gepa.core.result import GEPAResult
from gepa.core.state import GEPAState
from pydantic import BaseModel

from fembench_agents.contracts import ModelClient, Problem
from fembench_agents.kinds import kind_for
from fembench_agents.optimize.adapter import COMPONENT, PromptAdapter
from fembench_agents.optimize.artifacts import (
    RESULT_SCHEMA_VERSION,
    candidate_history,
    pareto_front,
    write_json,
)
from fembench_agents.optimize.budget import Budget, resolve_budget
from fembench_agents.optimize.candidates import PromptEvaluations, candidate_id, prompt_file_data
from fembench_agents.optimize.environment import environment
from fembench_agents.optimize.heldout import LeakReport, evaluated_tasks, guarded, logged_heldout, scan_prompt
from fembench_agents.optimize.loop import LoopThread
from fembench_agents.optimize.reflection import ReflectionModel
from fembench_agents.optimize.settings import OptimizeSettings
from fembench_agents.optimize.split import HeldOutViolation, Split, split_tasks
from fembench_agents.runs.log import RunLog, now
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.feedback import TemplateFeedback

GEPA_DIR = "gepa"
STOP_FILE = "gepa.stop"


@dataclass(frozen=True)
class Models:
    task: ModelClient
    reflection: ModelClient


class StopFlag:
    """A GEPA stopper: once `requested`, GEPA finishes its iteration, saves its state and returns."""

    def __init__(self) -> None:
        self.requested = False

    def __call__(self, gepa_state: object) -> bool:
        return self.requested


class Scores(BaseModel):
    val: float
    seed_val: float
    train: float | None = None  # None when the final training evaluation was skipped
    seed_train: float | None = None


class OptimizeResult(BaseModel):
    schema_version: int = RESULT_SCHEMA_VERSION
    name: str
    out_dir: str
    complete: bool  # False when stopped early (Ctrl-C or gepa.stop); rerun to resume
    system_prompt: str
    best_index: int
    best_candidate_id: str
    candidates: int
    iterations: int
    scores: Scores
    budget: Budget
    metric_calls: int
    new_metric_calls: int  # spent by this invocation (the rest were restored from the checkpoint)
    new_episodes: int  # episodes run (not read back from a log) by this invocation
    reflection_calls: int
    reflection_cost_usd: float | None
    split: Split
    leak: LeakReport
    prompt_path: str | None = None


class _Tracker:
    """GEPA callback: the iteration count at the end of the run."""

    iterations = 0

    def on_optimization_end(self, event: dict[str, Any]) -> None:
        self.iterations = int(event["total_iterations"]) + 1  # GEPA's state.i counts from -1


class _FileLogger:
    """GEPA's log lines go to a file, not the terminal (rich shows progress there)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def log(self, message: str) -> None:
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(f"{message}\n")


def check_out_dir(out: Path, settings: OptimizeSettings, split: Split, tasks: Mapping[str, Problem]) -> bool:
    """Writes `optimize.json`, or checks that `out` holds this same optimization.
    Returns True when resuming."""
    identity = {
        "settings": settings.identity(),
        "split": split.model_dump(mode="json"),
        "task_hashes": {t: tasks[t].content_hash for t in sorted(split.seen)},
    }
    path = out / "optimize.json"
    if path.exists():
        old = json.loads(path.read_text())
        diff = sorted(
            k
            for k in {*old["settings"], *identity["settings"]}
            if old["settings"].get(k) != identity["settings"].get(k)
        )
        if diff:
            raise ValueError(
                f"{out} holds a different optimization (differs in {', '.join(diff)}); choose another --out"
            )
        if old["split"] != identity["split"]:
            raise ValueError(f"{out} holds an optimization over a different split; choose another --out")
        drift = sorted(t for t, h in identity["task_hashes"].items() if old["task_hashes"].get(t) != h)
        if drift:
            raise ValueError(f"{out}: tasks changed since the optimization started: {', '.join(drift)}")
        return True
    write_json(path, {**identity, "created": now()})
    return False


def _checkpoint_calls(gepa_dir: Path) -> int:
    if not (gepa_dir / "gepa_state.bin").exists():
        return 0
    return int(GEPAState.load(str(gepa_dir)).total_num_evals)


def optimize_prompt(
    settings: OptimizeSettings,
    tasks: Sequence[Problem],
    evaluator: Evaluator,
    out: Path,
    models: Models,
    *,
    prompt_out: Path | None = None,
    callbacks: Sequence[object] = (),
    stop: StopFlag | None = None,
) -> OptimizeResult:
    """Runs (or resumes) the optimization described by `settings` in `out`.
    `prompt_out` receives the optimized prompt with its provenance once the
    run completes (not when stopped early). `tasks`: the problems of `settings.track`."""
    by_id = {t.task_id: t for t in tasks}
    split = split_tasks(tasks, settings.heldout, settings.val_fraction, settings.seed, settings.tasks)
    split.check_disjoint()
    budget = resolve_budget(settings.budget, len(split.val))
    out.mkdir(parents=True, exist_ok=True)
    check_out_dir(out, settings, split, by_id)
    gepa_dir = out / GEPA_DIR
    gepa_dir.mkdir(exist_ok=True)
    (gepa_dir / STOP_FILE).unlink(missing_ok=True)  # a stop request belongs to the run it stopped
    before = _checkpoint_calls(gepa_dir)
    stop = stop or StopFlag()
    tracker = _Tracker()
    seed_candidate = {COMPONENT: settings.seed_prompt}

    with LoopThread() as loop, RunLog(out / "reflection") as reflection_log:
        evaluations = PromptEvaluations(
            out,
            by_id,
            split.seen,
            models.task,
            evaluator,
            TemplateFeedback(),
            settings.params,
            settings.concurrency,
            settings.scaffold,
            settings.track,
        )
        adapter = PromptAdapter(evaluations, loop, by_id, frozenset(split.train), settings.include_reference)
        reflection = ReflectionModel(models.reflection, settings.reflection_params, reflection_log, loop)
        reflection_before = reflection.calls
        result: GEPAResult[Any, Any]
        if settings.engine == "dspy":
            from fembench_agents.optimize.dspy_engine import run_dspy_gepa  # dspy imports slowly: only when chosen

            result = run_dspy_gepa(
                settings,
                split,
                budget,
                by_id,
                evaluations,
                reflection,
                loop,
                str(gepa_dir),
                stop_callbacks=[stop],
                callbacks=[tracker, *callbacks],
            )
        else:
            result = gepa.optimize(
                seed_candidate=seed_candidate,
                trainset=list(split.train),
                valset=list(split.val),
                adapter=cast(Any, adapter),
                reflection_lm=reflection,
                reflection_minibatch_size=settings.reflection_minibatch_size,
                use_merge=settings.use_merge,
                max_merge_invocations=settings.max_merge_invocations,
                max_metric_calls=budget.max_metric_calls,
                stop_callbacks=[stop],
                run_dir=str(gepa_dir),
                logger=_FileLogger(gepa_dir / "gepa_log.txt"),
                callbacks=cast(Any, [tracker, *callbacks]),
                seed=settings.seed,
                raise_on_exception=True,
                display_progress_bar=False,
            )
        (gepa_dir / STOP_FILE).unlink(missing_ok=True)
        complete = (
            not stop.requested
            and result.total_metric_calls is not None
            and result.total_metric_calls >= budget.max_metric_calls
        )
        best = result.candidates[result.best_idx]
        train = seed_train = None
        if settings.final_train_eval and complete:
            train = _mean(adapter.evaluate(list(split.train), best).scores)
            seed_train = (
                train if result.best_idx == 0 else _mean(adapter.evaluate(list(split.train), seed_candidate).scores)
            )
        new_episodes = evaluations.new_episodes
        reflection_calls = reflection.calls - reflection_before
        reflection_cost = None if reflection.unpriced else reflection.total_cost

    leak = check_leaks(out, best[COMPONENT], split, by_id, evaluator, settings.track)
    total = int(result.total_metric_calls or 0)
    outcome = OptimizeResult(
        name=settings.name,
        out_dir=str(out),
        complete=complete,
        system_prompt=best[COMPONENT],
        best_index=result.best_idx,
        best_candidate_id=candidate_id(best[COMPONENT]),
        candidates=result.num_candidates,
        iterations=tracker.iterations,
        scores=Scores(
            val=result.val_aggregate_scores[result.best_idx],
            seed_val=result.val_aggregate_scores[0],
            train=train,
            seed_train=seed_train,
        ),
        budget=budget,
        metric_calls=total,
        new_metric_calls=total - before,
        new_episodes=new_episodes,
        reflection_calls=reflection_calls,
        reflection_cost_usd=reflection_cost,
        split=split,
        leak=leak,
    )
    write_json(out / "history.json", candidate_history(result, split))
    write_json(out / "pareto_front.json", pareto_front(result, split))
    if complete and prompt_out is not None:
        write_json(
            prompt_out,
            {**prompt_file_data(best[COMPONENT], settings.scaffold), "provenance": provenance(settings, outcome)},
        )
        outcome = outcome.model_copy(update={"prompt_path": str(prompt_out)})
    write_json(out / "result.json", outcome.model_dump(mode="json"))
    return outcome


def check_leaks(
    out: Path, prompt: str, split: Split, tasks: Mapping[str, Problem], evaluator: Evaluator, track: str
) -> LeakReport:
    """The leak guard (heldout.py) on the optimized `prompt`, with what the track's kind hides."""
    logged = logged_heldout(out, split.heldout)
    strays = sorted(evaluated_tasks(out) - split.seen)
    notes = [f"tasks outside the split were evaluated: {', '.join(strays)}"] if strays else []
    hidden = kind_for(track).hidden
    heldout, material_notes = guarded([tasks[t] for t in split.heldout], hidden, evaluator.scorer_for(track))
    seen = {t: hidden.visible(tasks[t]) for t in sorted(split.seen)}
    report = scan_prompt(prompt, heldout, seen, logged, notes + material_notes)
    if strays:
        report = report.model_copy(update={"leaked": True})
    return report


def provenance(settings: OptimizeSettings, result: OptimizeResult) -> dict[str, Any]:
    return {
        "schema_version": RESULT_SCHEMA_VERSION,
        "optimizer": "dspy.GEPA" if settings.engine == "dspy" else "gepa",
        "engine": settings.engine,
        "created": now(),
        "name": settings.name,
        "model": settings.model,
        "reflection_model": settings.reflection_model,
        "params": settings.params.model_dump(mode="json", exclude={"api_base"}),
        "reflection_params": settings.reflection_params.model_dump(mode="json", exclude={"api_base"}),
        "budget": {**result.budget.model_dump(), "used_metric_calls": result.metric_calls},
        "gepa": {
            "use_merge": settings.use_merge,
            "max_merge_invocations": settings.max_merge_invocations,
            "reflection_minibatch_size": settings.reflection_minibatch_size,
            "candidate_selection_strategy": "pareto",
            "frontier_type": "instance",
            "skip_perfect_score": True,
            "seed": settings.seed,
        },
        "include_reference": settings.include_reference,
        **settings.later(),  # the track and the problems taking part, when not the code track's all
        "seed_prompt": settings.seed_prompt,
        "scaffold": settings.scaffold,
        "split": result.split.model_dump(mode="json"),
        "scores": result.scores.model_dump(),
        "candidate": {
            "index": result.best_index,
            "id": result.best_candidate_id,
            "candidates": result.candidates,
            "iterations": result.iterations,
        },
        "leak_check": result.leak.model_dump(mode="json"),
        "out_dir": result.out_dir,
        **environment(),
    }


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


@contextlib.contextmanager
def graceful_interrupts(stop: StopFlag, on_first: Callable[[], None] | None = None) -> Iterator[None]:
    """The first Ctrl-C asks GEPA to stop after the current iteration (state
    saved, results written); a second one interrupts at once. Outside the main
    thread, signals are left alone."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        if stop.requested:
            raise KeyboardInterrupt
        stop.requested = True
        if on_first:
            on_first()

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


__all__ = ["HeldOutViolation", "Models", "OptimizeResult", "StopFlag", "graceful_interrupts", "optimize_prompt"]

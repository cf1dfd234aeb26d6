"""Running a planned grid from the command line: the key check before litellm's
import, the calibration a grid lacks, the progress line (with the spend
against `--max-cost`), and the exit status of a partial run."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from fembench_agents.cli.app import (
    DEFAULT_CASES,
    err,
    fail_unavailable,
    open_sandbox,
    problem_paths,
    problems_for,
    progress_bar,
)
from fembench_agents.kinds.contract import ProblemsUnavailable, SkippedTask
from fembench_agents.runs.budget import BudgetReached, SpendCap, merged_stop
from fembench_agents.runs.grid import (
    PlannedRun,
    episode_total,
    execute_grid,
    grid_budget,
    grid_options,
    grid_selections,
    grid_tracks,
    open_clients,
    resolved_runs,
)
from fembench_agents.runs.health import RunStopped, error_summary

if TYPE_CHECKING:
    from rich.progress import TaskID

    from fembench_agents.runs.problems import ProblemSets


async def run_grid(
    runs: list[PlannedRun],
    tasks_path: str,
    cache: Path | None,
    allow_weak_isolation: bool = False,
    sandbox_workers: int | None = None,
    cases_path: str = DEFAULT_CASES,
    skipped: list[SkippedTask] | None = None,
    executor: str = "local",
    max_cost: float | None = None,
) -> list[RunStopped]:
    """Every run of the grid to its end, or to its early stop (returned, not
    raised). Task modules that did not load go into `skipped` and into each
    run's manifest."""
    _require_credentials(runs)  # before litellm's import (seconds): a refusal comes at once
    from fembench_agents.models import ResponseCache, is_local  # lazy: litellm import

    budget = None
    if max_cost is not None:
        try:
            budget = grid_budget(runs, max_cost)
        except ValueError as exc:
            for line in str(exc).splitlines():
                err.print(f"error: {line}", markup=False, highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
    response_cache = ResponseCache(cache) if cache else None
    tracks = grid_tracks(runs)
    with open_sandbox(allow_weak_isolation, sandbox_workers, tracks, executor) as sandbox, ExitStack() as stack:
        options = grid_options(runs)
        sets = problems_for(tracks, tasks_path, cases_path, sandbox, skipped, options, grid_selections(runs))
        runs = resolved_runs(runs, sets.made)  # fresh instances named in a selection: made, and named by id
        total = episode_total(runs, sets)  # a selection matching nothing fails before any model server starts
        _prepare(sets, problem_paths(tasks_path, cases_path), runs)
        clients = open_clients(runs, stack, response_cache)
        first = runs[0].config
        local = (
            " (1 for the embedded model, which answers one at a time)"
            if any(is_local(r.config.model) for r in runs)
            else ""
        )
        where = "" if executor == "local" else f" on {executor}"
        err.print(
            f"limits: {first.concurrency} episodes at once per run, {first.model_calls_at_once} model calls "
            f"at once per provider{local}, {sandbox.size} sandbox workers{where}"
            + (f"; spend cap: {budget.line()} spent" if budget else ""),
            highlight=False,
        )
        with progress_bar() as progress:
            bar = progress.add_task(_progress_text(budget), total=total)

            def tick(_: object) -> None:
                progress.advance(bar)

            if budget is not None:
                budget.on_change = lambda b: progress.update(bar, description=_progress_text(b))
            stops = await execute_grid(runs, sets, clients, on_episode=tick, budget=budget)
        sets.evaluator.close()
    return stops


def _progress_text(budget: SpendCap | None) -> str:
    """The progress line's words: the spend against the cap when there is one."""
    return "episodes" if budget is None else f"episodes {budget.line()}"


def _prepare(sets: ProblemSets, paths: dict[str, str], runs: list[PlannedRun]) -> None:
    """What scoring the grid's problems needs on this machine and lacks (a PDE case's
    calibration), made before the first episode with a progress bar."""
    from fembench_agents.runs.problems import prepare_selected

    with progress_bar() as progress:
        bars: dict[str, TaskID] = {}

        def advance(what: str, done: int, total: int) -> None:
            if what not in bars:
                bars[what] = progress.add_task(what, total=total)
            progress.update(bars[what], completed=done)

        try:
            prepare_selected(sets, paths, [(r.config.track, r.config.tasks) for r in runs], advance)
        except ProblemsUnavailable as exc:
            fail_unavailable(exc)
    for what in bars:
        err.print(f"{what}: done", markup=False, highlight=False)


def _require_credentials(runs: list[PlannedRun]) -> None:
    """Before any episode: exit 2 with one line per model whose provider key is missing."""
    from fembench_agents.models.credentials import credential_problems

    problems = list(
        dict.fromkeys(p for r in runs for p in credential_problems([r.config.model], r.config.params.api_base))
    )
    for problem in problems:
        err.print(f"error: {problem}", markup=False, highlight=False, soft_wrap=True)
    if problems:
        raise typer.Exit(2)


def exit_on_model_errors(run_dirs: list[Path], stops: list[RunStopped]) -> None:
    """After the report: say how many episodes ended in a model error and why
    (keys redacted), and exit 1, so a script tells a partial run from a clean one."""
    from fembench_agents.models import redact
    from fembench_agents.report.tables import collect_episodes

    lines = error_summary(record for _, record in collect_episodes(run_dirs)[1])
    budget_stops = [s for s in stops if isinstance(s, BudgetReached)]
    lines += [str(stop) for stop in stops if not isinstance(stop, BudgetReached)]
    if budget_stops:
        lines.append(merged_stop(budget_stops))
    if not lines:
        return
    lines.append("run the same command again to resume: failed and unstarted episodes are retried")
    if budget_stops:
        lines.append("(with a higher --max-cost: what was spent counts against it)")
    for line in lines:
        err.print(redact(line), markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(1)

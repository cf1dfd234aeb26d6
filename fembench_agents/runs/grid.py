"""The runs a `run` or a `compare` makes, and executing them together: each
run's config and directory (from command options, an experiment file or the
Python API), one client per model, and every run over one evaluator. The CLI
parses options and prints; the Python API calls the same functions."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Coroutine, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fembench_agents.contracts import ModelClient
from fembench_agents.kinds.contract import ScoringOptions
from fembench_agents.runs.budget import SpendCap, unpriced_refusal
from fembench_agents.runs.defaults import DEFAULT_LIBRARY, DEFAULT_SELECTION, RUNS_DIR
from fembench_agents.runs.experiments import Experiment
from fembench_agents.runs.health import RunStopped
from fembench_agents.runs.log import EpisodeRecord
from fembench_agents.runs.problems import ProblemSets
from fembench_agents.runs.run import RunConfig, execute_run, record_skipped_tasks
from fembench_agents.runs.selection import resolve_selection, select_tasks

if TYPE_CHECKING:
    from fembench_agents.models import ResponseCache


@dataclass(frozen=True)
class PlannedRun:
    """One run of a grid: what it runs, and the directory it writes (or resumes)."""

    config: RunConfig
    out: Path


def safe_name(name: str) -> str:
    """`name` as a piece of a directory name: runs of other characters become one `-`."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-")


def run_dir_name(model: str, agent: str, suffix: str = "") -> str:
    """A run's directory name: model and agent, then what tells the runs of one grid apart (`__TRACK`)."""
    return f"{safe_name(model)}__{safe_name(agent)}{suffix}"


def problem_selection(tasks: str, track: str, cases: str | None, library: str | None) -> tuple[str, str]:
    """The (selection, track) a run draws from: PDE `cases` on a `library` track
    when either is given, else `tasks` on `track`."""
    if cases is not None or library is not None:
        return cases or DEFAULT_SELECTION, library or DEFAULT_LIBRARY
    return tasks, track


def library_list(libraries: str | None, cases: str | None) -> list[str]:
    """The library tracks a comparison runs on: those named (comma-separated), the
    default library when only `cases` are, none for function tasks."""
    if not (libraries or cases):
        return []
    return (libraries or DEFAULT_LIBRARY).split(",")


def single_run(config: RunConfig, out: Path | None = None) -> PlannedRun:
    """A `run`: into `out`, or runs/MODEL__AGENT__TRACK (two tracks of one model and agent never share a run)."""
    return PlannedRun(config, out or Path(RUNS_DIR) / run_dir_name(config.model, config.agent, f"__{config.track}"))


def experiment_dir(exp: Experiment, out: Path | None = None) -> Path:
    """Where a comparison's run directories go: `out`, or runs/NAME."""
    return out or Path(RUNS_DIR) / safe_name(exp.name)


def experiment_runs(exp: Experiment, out: Path) -> list[PlannedRun]:
    """Models x agents x tracks, each run in `out`/MODEL__AGENT[__TRACK]. A PDE
    experiment runs each agent on each library track it names, over its cases;
    several function tracks run each; one function track needs no suffix. An
    experiment naming both `libraries` and `tracks` runs both: its cases on the
    libraries and its tasks on the tracks."""
    grid: list[tuple[str, str, str]] = [(lib, exp.cases, f"__{lib}") for lib in exp.libraries]
    grid += [(t, exp.tasks, f"__{t}") for t in exp.tracks]
    grid = grid or [(exp.track, exp.tasks, "")]
    return [
        PlannedRun(
            RunConfig(
                model=m,
                agent=a,
                tasks=selection,
                track=track,
                repeats=exp.repeats,
                concurrency=exp.concurrency,
                model_concurrency=exp.model_concurrency,
                params=exp.params,
                episode_budget=exp.episode_budget,
                fresh_inputs=exp.fresh_inputs,
            ),
            out / run_dir_name(m, a, suffix),
        )
        for m in exp.models
        for a in exp.agents
        for track, selection, suffix in grid
    ]


def grid_selections(runs: Sequence[PlannedRun]) -> list[tuple[str, str]]:
    """(track, selection) of every run: what the kinds load for, making what made items name."""
    return list(dict.fromkeys((r.config.track, r.config.tasks) for r in runs))


def resolved_runs(runs: Sequence[PlannedRun], made: Mapping[str, str]) -> list[PlannedRun]:
    """The runs with each selection's made items (fresh PDE instances) replaced by the ids the
    kind made for them (`made`: item -> ids, `ProblemSets.made`, or a dry run's preview of them):
    the manifest records those ids, and a resume, making the same items again from the kind's
    cache, asks for the same ones."""
    return [replace(r, config=replace(r.config, tasks=resolve_selection(r.config.tasks, made))) for r in runs]


def grid_tracks(runs: Sequence[PlannedRun]) -> list[str]:
    """The tracks a grid draws problems from, each once, in order."""
    return list(dict.fromkeys(r.config.track for r in runs))


def grid_options(runs: Sequence[PlannedRun]) -> ScoringOptions:
    """What the grid's problems are loaded with: one load serves every run, so its runs
    share one fresh-inputs seed (or none); a ValueError names the seeds otherwise."""
    seeds = {r.config.fresh_inputs for r in runs}
    if len(seeds) > 1:
        raise ValueError(f"one grid draws fresh inputs with one seed, not {sorted(seeds, key=str)}")
    return ScoringOptions(prepared_later=True, fresh_inputs=seeds.pop() if seeds else None)


def episode_total(runs: Sequence[PlannedRun], sets: ProblemSets) -> int:
    """How many episodes the grid holds (finished ones of a resumed run included).
    Raises ValueError for a selection that matches no problem: before any model starts."""
    return sum(len(select_tasks(sets.by_track[r.config.track], r.config.tasks)) * r.config.repeats for r in runs)


def open_clients(
    runs: Sequence[PlannedRun], stack: ExitStack, cache: ResponseCache | None = None
) -> dict[str, ModelClient]:
    """One client per model of the grid, open until `stack` closes; a model's calls
    at once are limited per provider, and replies come from `cache` when it has them."""
    from fembench_agents.models import ClientOptions, open_client, provider_of  # lazy: litellm import

    clients: dict[str, ModelClient] = {}
    for r in runs:
        config = r.config
        if config.model not in clients:
            options = ClientOptions(
                concurrency=config.model_calls_at_once, concurrency_group=provider_of(config.model, config.params)
            )
            clients[config.model] = stack.enter_context(
                open_client(config.model, config.params, options=options, cache=cache)
            )
    return clients


async def execute_grid(
    runs: Sequence[PlannedRun],
    sets: ProblemSets,
    clients: dict[str, ModelClient],
    on_episode: Callable[[EpisodeRecord], None] | None = None,
    budget: SpendCap | None = None,
) -> list[RunStopped]:
    """Every run of the grid to its end, or to its early stop (returned, not raised:
    one run stopping leaves the others going). Each run's manifest names the
    problem sources its track went on without. `budget`: one spend cap for the
    whole grid (`grid_budget`)."""
    stops = await asyncio.gather(
        *(
            _until_stopped(
                execute_run(
                    r.config,
                    sets.by_track[r.config.track],
                    r.out,
                    clients[r.config.model],
                    sets.evaluator,
                    on_episode=on_episode,
                    budget=budget,
                )
            )
            for r in runs
        )
    )
    for r in runs:
        record_skipped_tasks(r.out, sets.skipped_by_track.get(r.config.track, []))
    return [s for s in stops if s is not None]


def grid_budget(runs: Sequence[PlannedRun], max_cost: float) -> SpendCap:
    """One cap for every run of a grid, starting from what their logs already spent.
    ValueError, one line per model, when a model has no price, or $0 from litellm's
    price map (a model it lists without prices): its calls could not be capped."""
    from fembench_agents.models import model_prices, priced_by_litellm  # lazy: litellm import

    refusals = []
    for model in dict.fromkeys(r.config.model for r in runs):
        price = model_prices(model)
        if price is None or (price == (0.0, 0.0) and priced_by_litellm(model)):
            refusals.append(unpriced_refusal(model, price is not None))
    if refusals:
        raise ValueError("\n".join(refusals))
    budget = SpendCap(max_cost)
    budget.count_logged(r.out for r in runs)
    return budget


async def _until_stopped(run: Coroutine[Any, Any, object]) -> RunStopped | None:
    try:
        await run
    except RunStopped as stop:
        return stop
    return None

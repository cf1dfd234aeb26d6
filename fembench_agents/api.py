"""The Python front door: load the suite, run and compare agents, score a
folder, open a run, build a report. The command line does the same through
these pieces; a notebook can call them directly.

    import fembench_agents as fb
    tasks = fb.load_tasks("tasks")
    run_dir = fb.run("local", "feedback-loop:3", tasks="FEM_1D_*", out="runs/demo")
    pde_dir = fb.run("local", "single-shot", cases="poisson_*", library="numpy-scipy")
    grid = fb.compare(["local"], ["single-shot", "feedback-loop:3"], tasks="FEM_1D_*")
    assert fb.replay(run_dir) == []                      # re-run from its log, no model call
    episodes = fb.open_run(run_dir).episode_rows()     # list of dicts
    # pandas.DataFrame(episodes), if pandas is installed
    report = fb.build_report([run_dir])
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from contextlib import ExitStack
from pathlib import Path

from fembench_agents.agents import make_agent
from fembench_agents.kinds import kind_for
from fembench_agents.kinds.contract import ScoringOptions
from fembench_agents.kinds.review import FolderSummary
from fembench_agents.messages import ModelParams
from fembench_agents.report import Report
from fembench_agents.report import build_report as _build_report
from fembench_agents.runs.defaults import (
    CASES_PATH,
    DEFAULT_CONCURRENCY,
    DEFAULT_LIBRARY,
    DEFAULT_REPEATS,
    DEFAULT_SELECTION,
    DEFAULT_TRACK,
    TASKS_PATH,
)
from fembench_agents.runs.experiments import Experiment
from fembench_agents.runs.grid import (
    PlannedRun,
    episode_total,
    execute_grid,
    experiment_dir,
    experiment_runs,
    grid_budget,
    grid_options,
    grid_selections,
    grid_tracks,
    library_list,
    open_clients,
    problem_selection,
    resolved_runs,
    single_run,
)
from fembench_agents.runs.problems import load_problems, preload_for, prepare_selected
from fembench_agents.runs.reader import RunRecords
from fembench_agents.runs.reader import open_run as _open_run
from fembench_agents.runs.replay import Change, replay_run, run_options, run_track
from fembench_agents.runs.replay import rescore as _rescore
from fembench_agents.runs.run import RunConfig
from fembench_agents.scoring.folder import score_saved
from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.suite.loader import load_tasks as _load_tasks
from fembench_agents.suite.model import Task
from fembench_agents.vocabulary import Track

PathLike = str | os.PathLike[str]


def load_tasks(path: PathLike = TASKS_PATH) -> list[Task]:
    """Every task module under `path` (a file or a directory), validated."""
    with Sandbox(allow_weak_isolation=True) as sandbox:  # runs only the suite's own modules
        return _load_tasks(str(path), sandbox)


def run(
    model: str,
    agent: str,
    *,
    tasks: str = DEFAULT_SELECTION,
    tasks_path: PathLike = TASKS_PATH,
    track: Track = DEFAULT_TRACK,
    cases: str | None = None,
    library: str | None = None,
    cases_path: PathLike = CASES_PATH,
    paths: Mapping[str, PathLike] | None = None,
    repeats: int = DEFAULT_REPEATS,
    out: PathLike | None = None,
    params: ModelParams | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    allow_weak_isolation: bool = False,
    max_cost: float | None = None,
    fresh_inputs: int | None = None,
) -> Path:
    """One model x one agent x a task selection (or PDE `cases` on one `library`)
    into a run directory (resumed if it exists); returns the directory. `model`
    is a litellm name or `local`. A run stopped early raises RunStopped (BudgetReached
    when `max_cost` USD, as `--max-cost` counts it, was reached). `fresh_inputs`: a
    seed, to run each function task's fresh instance beside it (`--fresh-inputs`)."""
    tasks, track = problem_selection(tasks, track, cases, library)
    config = RunConfig(
        model=model,
        agent=agent,
        tasks=tasks,
        track=track,
        repeats=repeats,
        concurrency=concurrency,
        params=params or ModelParams(),
        fresh_inputs=fresh_inputs,
    )
    return _execute(
        [single_run(config, Path(out) if out is not None else None)],
        _paths(tasks_path, cases_path, paths),
        allow_weak_isolation,
        max_cost,
    )[0]


def compare(
    models: list[str],
    agents: list[str],
    *,
    tasks: str = DEFAULT_SELECTION,
    tasks_path: PathLike = TASKS_PATH,
    track: Track = DEFAULT_TRACK,
    cases: str | None = None,
    libraries: list[str] | None = None,
    cases_path: PathLike = CASES_PATH,
    paths: Mapping[str, PathLike] | None = None,
    repeats: int = DEFAULT_REPEATS,
    out: PathLike | None = None,
    params: ModelParams | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    allow_weak_isolation: bool = False,
    max_cost: float | None = None,
    fresh_inputs: int | None = None,
) -> list[Path]:
    """Models x agents on a task selection (or PDE `cases` on each of `libraries`),
    each run in its own directory under `out` (runs/compare by default), as
    `fembench-agents compare` makes them; returns the run directories. `max_cost`:
    USD the whole grid may spend (`--max-cost`). `fresh_inputs`: a seed, to run each
    function task's fresh instance beside it (`--fresh-inputs`)."""
    exp = Experiment(
        name="compare",
        models=models,
        agents=agents,
        tasks=tasks,
        tasks_path=str(tasks_path),
        track=track,
        cases=cases or DEFAULT_SELECTION,
        cases_path=str(cases_path),
        libraries=libraries or library_list(None, cases),
        repeats=repeats,
        concurrency=concurrency,
        params=params or ModelParams(),
        fresh_inputs=fresh_inputs,
    )
    runs = experiment_runs(exp, experiment_dir(exp, Path(out) if out is not None else None))
    return _execute(runs, _paths(tasks_path, cases_path, paths), allow_weak_isolation, max_cost)


def _paths(tasks_path: PathLike, cases_path: PathLike, paths: Mapping[str, PathLike] | None) -> dict[str, str]:
    """Where each problem source is, by its kind's `default_path`: the function tasks,
    the PDE cases, and any other registered kind's (`paths`)."""
    return {TASKS_PATH: str(tasks_path), CASES_PATH: str(cases_path), **{k: str(v) for k, v in (paths or {}).items()}}


def _execute(
    runs: list[PlannedRun], paths: dict[str, str], allow_weak_isolation: bool, max_cost: float | None = None
) -> list[Path]:
    """The runs' grid, as the command line executes it (without a response cache); the first early stop is raised."""
    for r in runs:
        make_agent(r.config.agent)  # an unknown agent fails before any sandbox or model starts
    budget = grid_budget(runs, max_cost) if max_cost is not None else None  # an unpriced model: ValueError
    tracks = grid_tracks(runs)
    with (
        Sandbox(allow_weak_isolation=allow_weak_isolation, preload=preload_for(tracks)) as sandbox,
        ExitStack() as stack,
    ):
        sandbox.require_isolation()
        sets = load_problems(tracks, sandbox, paths, grid_options(runs), grid_selections(runs))
        runs = resolved_runs(runs, sets.made)  # fresh instances named in a selection: made, and named by id
        try:
            episode_total(runs, sets)  # a selection matching nothing fails before any model starts
            prepare_selected(sets, paths, [(r.config.track, r.config.tasks) for r in runs], _quiet)
            stops = asyncio.run(execute_grid(runs, sets, open_clients(runs, stack), budget=budget))
        finally:
            sets.evaluator.close()
    if stops:
        raise stops[0]
    return [r.out for r in runs]


def _quiet(what: str, done: int, total: int) -> None:
    """A run from the API calibrates what it needs without a progress bar."""


def score_folder(
    folder: PathLike,
    tasks_path: PathLike = TASKS_PATH,
    *,
    cases_path: PathLike | None = None,
    compat: tuple[str, ...] = (),
    gates: str = "ours",
    track: str | None = None,
    paths: Mapping[str, PathLike] | None = None,
    allow_weak_isolation: bool = False,
    fresh_inputs: int | None = None,
) -> FolderSummary:
    """Saved completions `{task_id}_code_{label}.py` / `_test_` in `folder`, scored;
    with `cases_path`, PDE solver programs `{case_id}_{library}_{label}.py` (and
    the compatibility options `compat` names; `gates="published"` judges each imported
    case by its published record's thresholds); with `track`, the saved attempts
    of that track's kind as it names them (any registered kind, its source in `paths`);
    with `fresh_inputs`, each function on its task's fresh instance too (`--fresh-inputs`)."""
    kind = kind_for(track or (DEFAULT_TRACK if cases_path is None else DEFAULT_LIBRARY))
    all_paths = _paths(tasks_path, cases_path or CASES_PATH, paths)
    path = all_paths.get(kind.default_path, kind.default_path)
    tracks = kind.folder.tracks(Path(folder), path)
    with Sandbox(allow_weak_isolation=allow_weak_isolation, preload=preload_for(tracks)) as sandbox:
        sandbox.require_isolation()
        sets = load_problems(
            tracks, sandbox, all_paths, ScoringOptions(tuple(compat), gates=gates, fresh_inputs=fresh_inputs)
        )
        try:
            found = kind.folder.find(Path(folder), path, sets.by_track)
            return score_saved(found, kind.folder, sets.evaluator, skipped=sets.skipped)
        finally:
            sets.evaluator.close()


def replay(
    run_dir: PathLike,
    *,
    rescore: bool = False,
    tasks_path: PathLike = TASKS_PATH,
    cases_path: PathLike = CASES_PATH,
    paths: Mapping[str, PathLike] | None = None,
    allow_weak_isolation: bool = False,
) -> list[Change]:
    """The attempts of the run at `run_dir` whose outcome differs now, for any
    kind: with `rescore`, each stored reply scored again by the current
    evaluator; otherwise the whole run re-run from its log with no model call
    (into `run_dir/replay`), which raises UnrecordedRequestError where it
    diverges from the recording. [] when everything is as recorded."""
    run_path = Path(run_dir)
    track = run_track(run_path)
    with Sandbox(allow_weak_isolation=allow_weak_isolation, preload=preload_for([track])) as sandbox:
        sandbox.require_isolation()
        sets = load_problems([track], sandbox, _paths(tasks_path, cases_path, paths), run_options(run_path))
        problems = sets.by_track[track]
        try:
            if rescore:
                return _rescore(run_path, {p.task_id: p for p in problems}, sets.evaluator)
            return replay_run(run_path, problems, sets.evaluator)
        finally:
            sets.evaluator.close()


RunView = RunRecords


def open_run(path: PathLike, skip_bad_lines: bool = False) -> RunRecords:
    """The run in `path`: manifest, records, episodes (latest record wins), rows.
    A log line that is not a record raises DamagedLog naming it, or with
    `skip_bad_lines` is left out and listed in `skipped`."""
    return _open_run(path, skip_bad_lines)


def build_report(run_dirs: list[PathLike]) -> Report:
    """The comparison report over run directories (`fembench_agents.report` renders it)."""
    return _build_report(run_dirs)

"""The Python front door: load the suite, run and compare agents, score a
folder, open a run, build a report. The command line does the same through
these pieces; a notebook can call them directly.

    import fembench_agents as fb
    tasks = fb.load_tasks("tasks")
    run_dir = fb.run("local", "feedback-loop:3", tasks="FEM_1D_*", out="runs/demo")
    pde_dir = fb.run("local", "single-shot", cases="poisson_*", library="numpy-scipy")
    episodes = fb.open_run(run_dir).episode_rows()     # list of dicts
    # pandas.DataFrame(episodes), if pandas is installed
    report = fb.build_report([run_dir])
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from fembench_agents.messages import ModelParams
from fembench_agents.report import Report
from fembench_agents.report import build_report as _build_report
from fembench_agents.runs.problems import load_problems, preload_for
from fembench_agents.runs.reader import RunRecords
from fembench_agents.runs.reader import open_run as _open_run
from fembench_agents.runs.run import RunConfig, execute_run
from fembench_agents.scoring.evaluator import Evaluator
from fembench_agents.scoring.folder import FolderScore
from fembench_agents.scoring.folder import score_folder as _score_folder
from fembench_agents.scoring.sandbox import Sandbox
from fembench_agents.suite.loader import load_tasks as _load_tasks
from fembench_agents.suite.model import Task
from fembench_agents.vocabulary import Track

PathLike = str | os.PathLike[str]


def load_tasks(path: PathLike = "tasks") -> list[Task]:
    """Every task module under `path` (a file or a directory), validated."""
    with Sandbox(allow_weak_isolation=True) as sandbox:  # runs only the suite's own modules
        return _load_tasks(str(path), sandbox)


def run(
    model: str,
    agent: str,
    *,
    tasks: str = "all",
    tasks_path: PathLike = "tasks",
    track: Track = "code",
    cases: str | None = None,
    library: str | None = None,
    cases_path: PathLike = "cases",
    repeats: int = 1,
    out: PathLike | None = None,
    params: ModelParams | None = None,
    concurrency: int = 2,
    allow_weak_isolation: bool = False,
) -> Path:
    """One model x one agent x a task selection (or PDE `cases` on one `library`)
    into a run directory (resumed if it exists); returns the directory. `model`
    is a litellm name or `local`."""
    from fembench_agents.models import ClientOptions, open_client, provider_of

    if cases is not None or library is not None:
        tasks, track = cases or "all", library or "numpy-scipy"

    config = RunConfig(
        model=model,
        agent=agent,
        tasks=tasks,
        track=track,
        repeats=repeats,
        concurrency=concurrency,
        params=params or ModelParams(),
    )
    target = Path(out) if out is not None else Path("runs") / f"{model}__{agent}__{track}".replace("/", "-")
    options = ClientOptions(concurrency=config.model_calls_at_once, concurrency_group=provider_of(model))
    paths = {"tasks": str(tasks_path), "cases": str(cases_path)}
    with (
        Sandbox(allow_weak_isolation=allow_weak_isolation, preload=preload_for([track])) as sandbox,
        open_client(model, config.params, options=options) as client,
    ):
        sandbox.require_isolation()
        sets = load_problems([track], sandbox, paths)
        try:
            asyncio.run(execute_run(config, sets.by_track[track], target, client, sets.evaluator))
        finally:
            sets.evaluator.close()
    return target


def score_folder(
    folder: PathLike, tasks_path: PathLike = "tasks", *, allow_weak_isolation: bool = False
) -> FolderScore:
    """Saved completions `{task_id}_code_{label}.py` / `_test_` in `folder`, scored."""
    with Sandbox(allow_weak_isolation=allow_weak_isolation) as sandbox:
        sandbox.require_isolation()
        evaluator = Evaluator(sandbox)
        try:
            return _score_folder(Path(folder), _load_tasks(str(tasks_path), sandbox), evaluator)
        finally:
            evaluator.close()


RunView = RunRecords


def open_run(path: PathLike) -> RunRecords:
    """The run in `path`: manifest, records, episodes (latest record wins), rows."""
    return _open_run(path)


def build_report(run_dirs: list[PathLike]) -> Report:
    """The comparison report over run directories (`fembench_agents.report` renders it)."""
    return _build_report(run_dirs)

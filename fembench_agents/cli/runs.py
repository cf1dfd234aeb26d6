"""`run` and `compare`: the commands that call models, and their options."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from fembench_agents.cli.app import (
    DEFAULT_CASES,
    DEFAULT_TASKS,
    AllowWeakOpt,
    ExecutorOpt,
    FreshInputsOpt,
    app,
    bad_input,
    exit_if_skipped,
    fail,
    refuse_damaged_runs,
)
from fembench_agents.cli.grid_run import exit_on_model_errors, run_grid
from fembench_agents.errors import BadInput, first_error
from fembench_agents.kinds.contract import SkippedTask
from fembench_agents.messages import ModelParams
from fembench_agents.runs.defaults import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_TOKENS,
    DEFAULT_REPEATS,
    DEFAULT_SELECTION,
    DEFAULT_TEMPERATURE,
    DEFAULT_TRACK,
)
from fembench_agents.runs.episode_budget import EpisodeBudget
from fembench_agents.runs.grid import (
    experiment_dir,
    experiment_runs,
    library_list,
    problem_selection,
    single_run,
)
from fembench_agents.runs.run import RunConfig

CACHE_DIR = Path(".fembench-cache")
EpisodeBudgetOpt = Annotated[
    str | None,
    typer.Option(
        "--episode-budget",
        help="the same caps on every agent's episode: calls=N,tokens=N,usd=X,seconds=S (any of them); "
        "the episode records the cap that ended it",
    ),
]
CacheOpt = Annotated[Path | None, typer.Option(help="response cache directory")]
ConcurrencyOpt = Annotated[int, typer.Option(min=1, help="episodes at once (per run)")]
ModelConcurrencyOpt = Annotated[
    int | None, typer.Option(min=1, help="model calls in flight at once per provider [default: --concurrency]")
]
SandboxWorkersOpt = Annotated[
    int | None, typer.Option(min=1, help="sandbox workers: attempts scored at once [default: one per CPU]")
]
CasesPathOpt = Annotated[str, typer.Option("--cases-path", help="the PDE cases folder")]
DryRunOpt = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="print the grid, its most model calls, tokens and dollars (the rule is printed with it); "
        "no model call, no sandbox job, no key needed",
    ),
]
MaxCostOpt = Annotated[
    float | None,
    typer.Option(
        "--max-cost",
        min=0.0,
        help="USD: start no model call once the recorded spend (of the whole grid) reaches it; "
        "resume with a higher cap to go on",
    ),
]


def _params(temperature: float, max_tokens: int, reasoning: str | None, api_base: str | None) -> ModelParams:
    try:
        return ModelParams(
            temperature=temperature,
            max_tokens=max_tokens,
            reasoning_effort=reasoning,  # type: ignore[arg-type]
            api_base=api_base,
        )
    except ValidationError as exc:
        bad_input(BadInput(f"bad model parameters: {first_error(exc)}"))


@app.command("run")
def run(
    model: Annotated[str, typer.Option(help="litellm model name, `local` for the embedded model")] = "local",
    agent: Annotated[
        str,
        typer.Option(
            help="single-shot | feedback-loop[:N] | template-guided | prompt:PATH | openhands[:OPTIONS] | "
            "mini-swe-agent[:OPTIONS] | plan-then-code[:N] | debug-and-refine[:D[:R]] | best-of:N"
        ),
    ] = "single-shot",
    tasks: Annotated[
        str, typer.Option("--tasks", help="task ids or fnmatch patterns, comma-separated, or all")
    ] = DEFAULT_SELECTION,
    tasks_path: Annotated[str, typer.Option("--tasks-path", help="task file or directory")] = DEFAULT_TASKS,
    track: Annotated[str, typer.Option(help="code | tests")] = DEFAULT_TRACK,
    cases: Annotated[
        str | None, typer.Option("--cases", help="PDE case ids or fnmatch patterns (instead of --tasks)")
    ] = None,
    library: Annotated[
        str | None, typer.Option(help="PDE library track: numpy-scipy | scikit-fem | ... (with --cases)")
    ] = None,
    cases_path: CasesPathOpt = DEFAULT_CASES,
    repeats: Annotated[int, typer.Option(min=1)] = DEFAULT_REPEATS,
    out: Annotated[Path | None, typer.Option(help="run directory (resumed if it exists)")] = None,
    temperature: float = DEFAULT_TEMPERATURE,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    reasoning_effort: Annotated[str | None, typer.Option(help="low | medium | high")] = None,
    api_base: Annotated[str | None, typer.Option(help="OpenAI-compatible server URL")] = None,
    concurrency: ConcurrencyOpt = DEFAULT_CONCURRENCY,
    model_concurrency: ModelConcurrencyOpt = None,
    sandbox_workers: SandboxWorkersOpt = None,
    cache: CacheOpt = CACHE_DIR,
    allow_weak_isolation: AllowWeakOpt = False,
    executor: ExecutorOpt = "local",
    episode_budget: EpisodeBudgetOpt = None,
    dry_run: DryRunOpt = False,
    max_cost: MaxCostOpt = None,
    fresh_inputs: FreshInputsOpt = None,
) -> None:
    """One model x one agent x a task selection (or PDE cases on one library) -> a resumable run directory."""
    tasks, track = problem_selection(tasks, track, cases, library)
    try:
        config = RunConfig(
            model=model,
            agent=agent,
            tasks=tasks,
            track=track,
            repeats=repeats,
            concurrency=concurrency,
            model_concurrency=model_concurrency,
            params=_params(temperature, max_tokens, reasoning_effort, api_base),
            episode_budget=EpisodeBudget.of(episode_budget),
            fresh_inputs=fresh_inputs,
        )
        from fembench_agents.agents import make_agent

        make_agent(agent)
    except ValueError as exc:
        fail(str(exc))
    planned = single_run(config, out)
    out = planned.out
    refuse_damaged_runs([planned.out])
    if dry_run:
        from fembench_agents.cli.dry_run import show_dry_run

        show_dry_run([planned], tasks_path, cases_path)
        return
    skipped: list[SkippedTask] = []
    try:
        stops = asyncio.run(
            run_grid(
                [planned],
                tasks_path,
                cache,
                allow_weak_isolation,
                sandbox_workers,
                cases_path,
                skipped,
                executor,
                max_cost,
            )
        )
    except ValueError as exc:
        fail(str(exc))
    from fembench_agents.cli.report import show_report  # here: `run` and `compare` register before `report`

    show_report([out], out / "report")
    exit_on_model_errors([out], stops)
    exit_if_skipped(skipped)


@app.command("compare")
def compare(
    models: Annotated[
        str | None, typer.Option(help="comma-separated model names (with --experiment: replace the file's)")
    ] = None,
    agents: Annotated[str | None, typer.Option(help="comma-separated agent specs")] = None,
    tasks: Annotated[str, typer.Option("--tasks")] = DEFAULT_SELECTION,
    tasks_path: Annotated[str, typer.Option("--tasks-path")] = DEFAULT_TASKS,
    track: str = DEFAULT_TRACK,
    cases: Annotated[str | None, typer.Option("--cases", help="PDE case ids or patterns (with --libraries)")] = None,
    libraries: Annotated[
        str | None, typer.Option(help="comma-separated PDE library tracks, e.g. numpy-scipy,scikit-fem")
    ] = None,
    cases_path: CasesPathOpt = DEFAULT_CASES,
    repeats: Annotated[int, typer.Option(min=1)] = DEFAULT_REPEATS,
    experiment: Annotated[Path | None, typer.Option(help="experiment file (TOML) in experiments/")] = None,
    out: Annotated[Path | None, typer.Option(help="directory for the grid's run directories")] = None,
    temperature: float = DEFAULT_TEMPERATURE,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    concurrency: ConcurrencyOpt = DEFAULT_CONCURRENCY,
    model_concurrency: ModelConcurrencyOpt = None,
    sandbox_workers: SandboxWorkersOpt = None,
    cache: CacheOpt = CACHE_DIR,
    allow_weak_isolation: AllowWeakOpt = False,
    executor: ExecutorOpt = "local",
    episode_budget: EpisodeBudgetOpt = None,
    dry_run: DryRunOpt = False,
    max_cost: MaxCostOpt = None,
    fresh_inputs: FreshInputsOpt = None,
) -> None:
    """Models x agents x tasks x repeats, concurrently; ends with the report."""
    from fembench_agents.agents import make_agent
    from fembench_agents.runs.experiments import Experiment, load_experiment

    try:
        if experiment:
            exp = load_experiment(experiment, models.split(",") if models else None)
        elif models and agents:
            exp = Experiment(
                name="compare",
                models=models.split(","),
                agents=agents.split(","),
                tasks=tasks,
                tasks_path=tasks_path,
                track=track,
                cases=cases or DEFAULT_SELECTION,
                cases_path=cases_path,
                libraries=library_list(libraries, cases),
                repeats=repeats,
                concurrency=concurrency,
                model_concurrency=model_concurrency,
                sandbox_workers=sandbox_workers,
                params=_params(temperature, max_tokens, None, None),
                max_cost=max_cost,
            )
        else:
            raise ValueError("give --experiment FILE, or both --models and --agents")
        if episode_budget is not None:  # the command line's caps over the file's
            exp = exp.model_copy(update={"episode_budget": EpisodeBudget.parse(episode_budget)})
        if fresh_inputs is not None:  # the command line's seed over the file's
            exp = exp.model_copy(update={"fresh_inputs": fresh_inputs})
        for spec in exp.agents:
            make_agent(spec)
    except ValueError as exc:
        fail(str(exc))
    out = experiment_dir(exp, out)
    runs = experiment_runs(exp, out)
    refuse_damaged_runs([r.out for r in runs])
    if dry_run:
        from fembench_agents.cli.dry_run import show_dry_run

        show_dry_run(runs, exp.tasks_path, exp.cases_path)
        return
    skipped: list[SkippedTask] = []
    try:
        stops = asyncio.run(
            run_grid(
                runs,
                exp.tasks_path,
                cache,
                allow_weak_isolation,
                exp.sandbox_workers,
                exp.cases_path,
                skipped,
                executor,
                max_cost if max_cost is not None else exp.max_cost,  # the option wins over the file's
            )
        )
    except ValueError as exc:
        fail(str(exc))
    from fembench_agents.cli.report import show_report

    run_dirs = [r.out for r in runs]
    show_report(run_dirs, out / "report")
    exit_on_model_errors(run_dirs, stops)
    exit_if_skipped(skipped)

"""`run`, `compare`, `report` and `replay`: the commands that call models."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Coroutine
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, Any

import typer

from fembench_agents.cli.app import (
    DEFAULT_CASES,
    DEFAULT_TASKS,
    AllowWeakOpt,
    ExecutorOpt,
    app,
    err,
    exit_if_skipped,
    open_sandbox,
    problems_for,
    progress_bar,
)
from fembench_agents.contracts import SkippedTask
from fembench_agents.messages import ModelParams
from fembench_agents.runs.health import RunStopped, error_summary
from fembench_agents.runs.run import RunConfig, execute_run, record_skipped_tasks, select_tasks
from fembench_agents.vocabulary import Track

CACHE_DIR = Path(".fembench-cache")
CacheOpt = Annotated[Path | None, typer.Option(help="response cache directory")]
ConcurrencyOpt = Annotated[int, typer.Option(min=1, help="episodes at once (per run)")]
ModelConcurrencyOpt = Annotated[
    int | None, typer.Option(min=1, help="model calls in flight at once per provider [default: --concurrency]")
]
SandboxWorkersOpt = Annotated[
    int | None, typer.Option(min=1, help="sandbox workers: attempts scored at once [default: one per CPU]")
]
CasesPathOpt = Annotated[str, typer.Option("--cases-path", help="the PDE cases folder")]


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-")


def _params(temperature: float, max_tokens: int, reasoning: str | None, api_base: str | None) -> ModelParams:
    try:
        return ModelParams(
            temperature=temperature,
            max_tokens=max_tokens,
            reasoning_effort=reasoning,  # type: ignore[arg-type]
            api_base=api_base,
        )
    except ValueError as exc:
        err.print(f"[red]error:[/red] bad model parameters: {exc}")
        raise typer.Exit(2) from None


async def _run_grid(
    configs: list[tuple[RunConfig, Path]],
    tasks_path: str,
    cache: Path | None,
    allow_weak_isolation: bool = False,
    sandbox_workers: int | None = None,
    cases_path: str = DEFAULT_CASES,
    skipped: list[SkippedTask] | None = None,
    executor: str = "local",
) -> tuple[list[Path], list[RunStopped]]:
    """Every run of the grid to its end, or to its early stop (returned, not
    raised). Task modules that did not load go into `skipped` and into each
    run's manifest."""
    from fembench_agents.models import (  # lazy: litellm import
        ClientOptions,
        ModelCallError,  # noqa: F401
        ResponseCache,
        is_local,
        open_client,
        provider_of,
    )

    _require_credentials(configs)
    response_cache = ResponseCache(cache) if cache else None
    tracks = [c.track for c, _ in configs]
    with open_sandbox(allow_weak_isolation, sandbox_workers, tracks, executor) as sandbox, ExitStack() as stack:
        skipped = [] if skipped is None else skipped
        sets = problems_for(tracks, tasks_path, cases_path, sandbox, skipped)
        problems, evaluator = sets.by_track, sets.evaluator
        for config, _ in configs:
            select_tasks(problems[config.track], config.tasks)  # fail before starting any model server
        clients = {}
        for config, _ in configs:
            if config.model not in clients:
                options = ClientOptions(
                    concurrency=config.model_calls_at_once, concurrency_group=provider_of(config.model, config.params)
                )
                clients[config.model] = stack.enter_context(
                    open_client(config.model, config.params, options=options, cache=response_cache)
                )
        first = configs[0][0]
        local = (
            " (1 for the embedded model, which answers one at a time)"
            if any(is_local(c.model) for c, _ in configs)
            else ""
        )
        where = "" if executor == "local" else f" on {executor}"
        err.print(
            f"limits: {first.concurrency} episodes at once per run, {first.model_calls_at_once} model calls "
            f"at once per provider{local}, {sandbox.size} sandbox workers{where}",
            highlight=False,
        )
        total = sum(len(select_tasks(problems[c.track], c.tasks)) * c.repeats for c, _ in configs)
        with progress_bar() as progress:
            bar = progress.add_task("episodes", total=total)

            def tick(_: object) -> None:
                progress.advance(bar)

            stops = await asyncio.gather(
                *(
                    _until_stopped(execute_run(c, problems[c.track], out, clients[c.model], evaluator, on_episode=tick))
                    for c, out in configs
                )
            )
        evaluator.close()
    for config, out in configs:
        record_skipped_tasks(out, sets.skipped_by_track.get(config.track, []))
    return [out for _, out in configs], [s for s in stops if s is not None]


async def _until_stopped(run: Coroutine[Any, Any, object]) -> RunStopped | None:
    """One run stopping early leaves the other runs of a grid going."""
    try:
        await run
    except RunStopped as stop:
        return stop
    return None


def _require_credentials(configs: list[tuple[RunConfig, Path]]) -> None:
    """Before any episode: exit 2 with one line per model whose provider key is missing."""
    from fembench_agents.models.credentials import credential_problems

    problems = list(dict.fromkeys(p for c, _ in configs for p in credential_problems([c.model], c.params.api_base)))
    for problem in problems:
        err.print(f"error: {problem}", markup=False, highlight=False, soft_wrap=True)
    if problems:
        raise typer.Exit(2)


def _exit_on_model_errors(run_dirs: list[Path], stops: list[RunStopped]) -> None:
    """After the report: say how many episodes ended in a model error and why
    (keys redacted), and exit 1, so a script tells a partial run from a clean one."""
    from fembench_agents.models import redact
    from fembench_agents.report.tables import collect_episodes

    lines = error_summary(record for _, record in collect_episodes(run_dirs)[1])
    lines += [str(stop) for stop in stops]
    if not lines:
        return
    lines.append("run the same command again to resume: failed and unstarted episodes are retried")
    for line in lines:
        err.print(redact(line), markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(1)


@app.command("run")
def run(
    model: Annotated[str, typer.Option(help="litellm model name, `local` for the embedded model")] = "local",
    agent: Annotated[
        str,
        typer.Option(
            help="single-shot | feedback-loop[:N] | template-guided | prompt:PATH | openhands[:OPTIONS] | mini-swe-agent[:OPTIONS]"
        ),
    ] = "single-shot",
    tasks: Annotated[
        str, typer.Option("--tasks", help="task ids or fnmatch patterns, comma-separated, or all")
    ] = "all",
    tasks_path: Annotated[str, typer.Option("--tasks-path", help="task file or directory")] = DEFAULT_TASKS,
    track: Annotated[str, typer.Option(help="code | tests")] = "code",
    cases: Annotated[
        str | None, typer.Option("--cases", help="PDE case ids or fnmatch patterns (instead of --tasks)")
    ] = None,
    library: Annotated[
        str | None, typer.Option(help="PDE library track: numpy-scipy | scikit-fem | ... (with --cases)")
    ] = None,
    cases_path: CasesPathOpt = DEFAULT_CASES,
    repeats: Annotated[int, typer.Option(min=1)] = 1,
    out: Annotated[Path | None, typer.Option(help="run directory (resumed if it exists)")] = None,
    temperature: float = 0.0,
    max_tokens: int = 2048,
    reasoning_effort: Annotated[str | None, typer.Option(help="low | medium | high")] = None,
    api_base: Annotated[str | None, typer.Option(help="OpenAI-compatible server URL")] = None,
    concurrency: ConcurrencyOpt = 2,
    model_concurrency: ModelConcurrencyOpt = None,
    sandbox_workers: SandboxWorkersOpt = None,
    cache: CacheOpt = CACHE_DIR,
    allow_weak_isolation: AllowWeakOpt = False,
    executor: ExecutorOpt = "local",
) -> None:
    """One model x one agent x a task selection (or PDE cases on one library) -> a resumable run directory."""
    if cases is not None or library is not None:
        tasks, track = cases or "all", library or "numpy-scipy"
    try:
        config = RunConfig(
            model=model,
            agent=agent,
            tasks=tasks,
            track=track,  # type: ignore[arg-type]
            repeats=repeats,
            concurrency=concurrency,
            model_concurrency=model_concurrency,
            params=_params(temperature, max_tokens, reasoning_effort, api_base),
        )
        from fembench_agents.agents import make_agent

        make_agent(agent)
    except ValueError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    out = out or Path("runs") / f"{_safe(model)}__{_safe(agent)}__{track}"
    skipped: list[SkippedTask] = []
    try:
        _, stops = asyncio.run(
            _run_grid(
                [(config, out)], tasks_path, cache, allow_weak_isolation, sandbox_workers, cases_path, skipped, executor
            )
        )
    except ValueError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    from fembench_agents.cli.report import show_report  # here: `run` and `compare` register before `report`

    show_report([out], out / "report")
    _exit_on_model_errors([out], stops)
    exit_if_skipped(skipped)


@app.command("compare")
def compare(
    models: Annotated[
        str | None, typer.Option(help="comma-separated model names (with --experiment: replace the file's)")
    ] = None,
    agents: Annotated[str | None, typer.Option(help="comma-separated agent specs")] = None,
    tasks: Annotated[str, typer.Option("--tasks")] = "all",
    tasks_path: Annotated[str, typer.Option("--tasks-path")] = DEFAULT_TASKS,
    track: str = "code",
    cases: Annotated[str | None, typer.Option("--cases", help="PDE case ids or patterns (with --libraries)")] = None,
    libraries: Annotated[
        str | None, typer.Option(help="comma-separated PDE library tracks, e.g. numpy-scipy,scikit-fem")
    ] = None,
    cases_path: CasesPathOpt = DEFAULT_CASES,
    repeats: Annotated[int, typer.Option(min=1)] = 1,
    experiment: Annotated[Path | None, typer.Option(help="experiment file (TOML) in experiments/")] = None,
    out: Annotated[Path | None, typer.Option(help="directory for the grid's run directories")] = None,
    temperature: float = 0.0,
    max_tokens: int = 2048,
    concurrency: ConcurrencyOpt = 2,
    model_concurrency: ModelConcurrencyOpt = None,
    sandbox_workers: SandboxWorkersOpt = None,
    cache: CacheOpt = CACHE_DIR,
    allow_weak_isolation: AllowWeakOpt = False,
    executor: ExecutorOpt = "local",
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
                track=track,  # type: ignore[arg-type]
                cases=cases or "all",
                cases_path=cases_path,
                libraries=(libraries or ("numpy-scipy" if cases else "")).split(",") if (libraries or cases) else [],  # type: ignore[arg-type]
                repeats=repeats,
                concurrency=concurrency,
                model_concurrency=model_concurrency,
                sandbox_workers=sandbox_workers,
                params=_params(temperature, max_tokens, None, None),
            )
        else:
            raise ValueError("give --experiment FILE, or both --models and --agents")
        for spec in exp.agents:
            make_agent(spec)
    except ValueError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    out = out or Path("runs") / _safe(exp.name)
    # A PDE experiment runs each agent on each library track it names, over its cases.
    grid: list[tuple[Track, str, str]] = [(lib, exp.cases, f"__{lib}") for lib in exp.libraries]
    grid = grid or [(t, exp.tasks, f"__{t}") for t in exp.tracks] or [(exp.track, exp.tasks, "")]
    configs = [
        (
            RunConfig(
                model=m,
                agent=a,
                tasks=selection,
                track=track,
                repeats=exp.repeats,
                concurrency=exp.concurrency,
                model_concurrency=exp.model_concurrency,
                params=exp.params,
            ),
            out / f"{_safe(m)}__{_safe(a)}{suffix}",
        )
        for m in exp.models
        for a in exp.agents
        for track, selection, suffix in grid
    ]
    skipped: list[SkippedTask] = []
    try:
        run_dirs, stops = asyncio.run(
            _run_grid(
                configs,
                exp.tasks_path,
                cache,
                allow_weak_isolation,
                exp.sandbox_workers,
                exp.cases_path,
                skipped,
                executor,
            )
        )
    except ValueError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    from fembench_agents.cli.report import show_report

    show_report(run_dirs, out / "report")
    _exit_on_model_errors(run_dirs, stops)
    exit_if_skipped(skipped)

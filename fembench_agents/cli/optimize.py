"""`optimize`: GEPA prompt optimization (registered on the main app)."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.panel import Panel
from rich.table import Table

from fembench_agents.cli.app import (
    AllowWeakOpt,
    ExecutorOpt,
    app,
    console,
    err,
    fail,
    fail_unavailable,
    open_sandbox,
    problem_paths,
    problems_for,
    progress_bar,
    say_done,
)
from fembench_agents.kinds.contract import ProblemsUnavailable, ScoringOptions

LOCAL_REFLECTION_MAX_TOKENS = 1024  # the embedded model's context is 4096 tokens


@app.command("optimize")
def optimize(
    experiment: Annotated[
        Path | None, typer.Option(help="optimize experiment file (TOML), e.g. experiments/gepa_fembench_protocol.toml")
    ] = None,
    model: Annotated[str | None, typer.Option(help="task model (litellm name, `local`)")] = None,
    reflection_model: Annotated[str | None, typer.Option(help="reflection model (litellm name, `local`)")] = None,
    budget: Annotated[str | None, typer.Option(help="light | medium | heavy | N metric calls")] = None,
    engine: Annotated[
        str | None, typer.Option(help="direct (the gepa package) | dspy (dspy.GEPA on a DSPy program)")
    ] = None,
    heldout: Annotated[str | None, typer.Option(help="held-out task ids or patterns, comma-separated")] = None,
    val_fraction: Annotated[float | None, typer.Option(help="share of the non-held-out tasks for validation")] = None,
    seed: Annotated[int | None, typer.Option(help="seed of the split and of GEPA")] = None,
    out: Annotated[Path | None, typer.Option(help="out directory (resumed if it exists)")] = None,
    track: Annotated[str | None, typer.Option(help="the function tasks' track: code | tests")] = None,
    cases: Annotated[
        str | None, typer.Option("--cases", help="PDE case ids or fnmatch patterns taking part (instead of tasks)")
    ] = None,
    library: Annotated[
        str | None, typer.Option(help="PDE library track: numpy-scipy | scikit-fem | ... (with --cases)")
    ] = None,
    tasks_path: Annotated[str | None, typer.Option("--tasks-path", help="task file or directory")] = None,
    cases_path: Annotated[str | None, typer.Option("--cases-path", help="the PDE cases folder")] = None,
    include_reference: Annotated[
        bool | None,
        typer.Option(
            "--include-reference/--no-include-reference",
            help="show training tasks' reference implementations to the reflection model",
        ),
    ] = None,
    name: Annotated[str | None, typer.Option(help="name of the result (optimizers/<name>.json)")] = None,
    prompt_out: Annotated[
        Path | None, typer.Option(help="where the optimized prompt goes (default: optimizers/<name>.json)")
    ] = None,
    seed_prompt: Annotated[str | None, typer.Option(help="the system prompt GEPA starts from")] = None,
    temperature: Annotated[float | None, typer.Option(help="task model temperature")] = None,
    max_tokens: Annotated[int | None, typer.Option(help="task model max tokens")] = None,
    reflection_temperature: Annotated[float | None, typer.Option()] = None,
    reflection_max_tokens: Annotated[int | None, typer.Option()] = None,
    concurrency: Annotated[int | None, typer.Option(min=1, help="episodes at once")] = None,
    final_train_eval: Annotated[
        bool | None,
        typer.Option(
            "--final-train-eval/--no-final-train-eval", help="score the best and the seed prompt on all training tasks"
        ),
    ] = None,
    cache: Annotated[Path | None, typer.Option(help="response cache directory")] = Path(".fembench-cache"),
    evaluate: Annotated[
        bool,
        typer.Option(
            "--evaluate/--no-evaluate",
            help="then judge the optimized prompt against the seed agent on the held-out tasks (heldout_repeats each)",
        ),
    ] = True,
    allow_weak_isolation: AllowWeakOpt = False,
    executor: ExecutorOpt = "local",
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="print the most model calls, tokens and dollars of each phase (the rule is printed with it); "
            "no model call, no sandbox job, no key needed",
        ),
    ] = False,
) -> None:
    """GEPA on a training split: tune a single-shot agent's system prompt, never touching held-out tasks."""
    from fembench_agents.models.credentials import credential_problems
    from fembench_agents.optimize import load_settings, resolve_budget

    overrides: dict[str, Any] = {
        "model": model,
        "reflection_model": reflection_model,
        "budget": budget,
        "engine": engine,
        "heldout": heldout,
        "val_fraction": val_fraction,
        "seed": seed,
        "track": track,
        "cases": cases,
        "library": library,
        "tasks_path": tasks_path,
        "cases_path": cases_path,
        "include_reference": include_reference,
        "name": name,
        "seed_prompt": seed_prompt,
        "concurrency": concurrency,
        "final_train_eval": final_train_eval,
        "params": {"temperature": temperature, "max_tokens": max_tokens},
        "reflection_params": {"temperature": reflection_temperature, "max_tokens": reflection_max_tokens},
    }
    try:
        settings = load_settings(experiment, overrides)
        resolve_budget(settings.budget, 1)
    except ValueError as exc:
        fail(str(exc))
    if dry_run:
        from fembench_agents.cli.dry_run import show_optimize_dry_run

        show_optimize_dry_run(settings, evaluate)
        return
    problems = list(
        dict.fromkeys(
            credential_problems([settings.model], settings.params.api_base)
            + credential_problems([settings.reflection_model], settings.reflection_params.api_base)
        )
    )
    for problem in problems:
        err.print(f"error: {problem}", markup=False, highlight=False, soft_wrap=True)
    if problems:
        raise typer.Exit(2)
    # after the refusals above: litellm's and dspy's imports cost seconds
    from fembench_agents.models import ResponseCache, is_local, open_client
    from fembench_agents.optimize import Models, StopFlag, graceful_interrupts, optimize_prompt, split_tasks
    from fembench_agents.optimize.judgement import judge_heldout
    from fembench_agents.optimize.loop import LoopThread
    from fembench_agents.optimize.progress import RichProgress
    from fembench_agents.optimize.split import with_made
    from fembench_agents.runs.problems import prepare_selected

    if (
        is_local(settings.reflection_model)
        and (settings.reflection_params.max_tokens or 0) > LOCAL_REFLECTION_MAX_TOKENS
    ):
        settings = settings.model_copy(
            update={
                "reflection_params": settings.reflection_params.model_copy(
                    update={"max_tokens": LOCAL_REFLECTION_MAX_TOKENS}
                )
            }
        )
        err.print(f"note: reflection max_tokens capped at {LOCAL_REFLECTION_MAX_TOKENS} for the embedded model")
    out = out or Path("runs") / "optimize" / settings.name
    prompt_out = prompt_out or Path("optimizers") / f"{settings.name}.json"
    stop = StopFlag()
    with (
        open_sandbox(allow_weak_isolation, tracks=[settings.track], executor=executor) as sandbox,
        ExitStack() as stack,
    ):
        options = ScoringOptions(prepared_later=True)
        selections = [(settings.track, settings.tasks), (settings.track, settings.heldout)]
        sets = problems_for(
            [settings.track], settings.tasks_path, settings.cases_path, sandbox, options=options, selections=selections
        )
        among, held = with_made(settings.tasks, settings.heldout, sets.made)  # fresh instances: made, named by id
        settings = settings.model_copy(update={"tasks": among, "heldout": held})
        tasks = sets.by_track[settings.track]
        try:
            split = split_tasks(tasks, settings.heldout, settings.val_fraction, settings.seed, settings.tasks)
            chosen = ",".join([*split.train, *split.val, *split.heldout])
            try:  # what the optimization scores, calibrated on this machine first where it must be
                prepare_selected(
                    sets, problem_paths(settings.tasks_path, settings.cases_path), [(settings.track, chosen)], say_done
                )
            except ProblemsUnavailable as exc:
                fail_unavailable(exc)
            total = resolve_budget(settings.budget, len(split.val)).max_metric_calls
            response_cache = ResponseCache(cache) if cache else None
            task_client = stack.enter_context(open_client(settings.model, settings.params, cache=response_cache))
            same = settings.reflection_model == settings.model or (
                is_local(settings.reflection_model) and is_local(settings.model)
            )
            reflection_client = (
                task_client
                if same
                else stack.enter_context(
                    open_client(settings.reflection_model, settings.reflection_params, cache=response_cache)
                )
            )
        except ValueError as exc:
            fail(str(exc))
        err.print(
            f"held out {len(split.heldout)}, train {len(split.train)}, validation {len(split.val)}; "
            f"budget {settings.budget} = {total} metric calls; engine {settings.engine}; out {out}"
        )
        evaluator = sets.evaluator
        stack.callback(evaluator.close)
        try:
            with (
                progress_bar() as progress,
                graceful_interrupts(
                    stop,
                    on_first=lambda: err.print(
                        "[yellow]stopping after the current iteration (Ctrl-C again to abort now)[/yellow]"
                    ),
                ),
            ):
                result = optimize_prompt(
                    settings,
                    tasks,
                    evaluator,
                    out,
                    Models(task_client, reflection_client),
                    prompt_out=prompt_out,
                    callbacks=[RichProgress(progress, total)],
                    stop=stop,
                )
        except KeyboardInterrupt:
            err.print(
                f"interrupted; GEPA's last checkpoint and every finished episode are kept in {out}: "
                "rerun the same command to resume"
            )
            raise typer.Exit(130) from None
        except ValueError as exc:
            fail(str(exc))
        judgement = None
        if evaluate and result.prompt_path is not None and not result.leak.leaked:
            _show(result, settings, judged=True)
            err.print(
                f"judging on the held-out tasks: {len(result.split.heldout)} tasks x {settings.heldout_repeats} "
                f"runs x 2 agents, into {out / 'heldout'}"
            )
            try:
                with LoopThread() as loop:
                    judgement = loop.run(judge_heldout(result, settings, tasks, evaluator, task_client))
            except KeyboardInterrupt:
                err.print("interrupted; rerun the same command to finish the held-out judgement")
                raise typer.Exit(130) from None
    if judgement is None:
        _show(result, settings)
    else:
        show_judgement(judgement, out)


def show_judgement(judgement: Any, out: Path) -> None:
    from fembench_agents.optimize.judgement import CURVE_PNG, JUDGEMENT_MD, origin_totals

    j = judgement
    table = Table(title=f"held-out judgement: {j.model}, {j.repeats} runs per task")
    table.add_column("held-out task")
    table.add_column(j.baseline_agent)
    table.add_column("optimized prompt")
    for r in j.rows:
        table.add_row(r.task_id, f"{r.baseline_passed}/{r.runs}", f"{r.optimized_passed}/{r.runs}")
    for label, (base, optimized, runs) in origin_totals(j).items():
        table.add_row(label, f"{base}/{runs}", f"{optimized}/{runs}", style="bold")
    table.add_row("total", f"{j.baseline_passed}/{j.runs}", f"{j.optimized_passed}/{j.runs}", style="bold")
    console.print(table)
    best = "-" if j.best_val_score is None else f"{j.best_val_score:.3f}"
    console.print(
        f"budget {j.used_metric_calls}/{j.max_metric_calls} metric calls; best validation score {best}; "
        f"written: {out / JUDGEMENT_MD}, {out / CURVE_PNG}",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )


def _show(result: Any, settings: Any, judged: bool = False) -> None:
    table = Table(title=f"optimize {result.name}" + ("" if result.complete else " (stopped early)"))
    table.add_column("")
    table.add_column("seed prompt")
    table.add_column("optimized")
    fmt = lambda x: "-" if x is None else f"{x:.3f}"  # noqa: E731
    table.add_row(f"validation ({len(result.split.val)} tasks)", fmt(result.scores.seed_val), fmt(result.scores.val))
    table.add_row(
        f"training ({len(result.split.train)} tasks)", fmt(result.scores.seed_train), fmt(result.scores.train)
    )
    console.print(table)
    console.print(
        f"metric calls {result.metric_calls}/{result.budget.max_metric_calls} "
        f"({result.new_metric_calls} in this invocation), {result.iterations} iterations, "
        f"{result.candidates} candidates, best #{result.best_index} ({result.best_candidate_id}); "
        f"{result.reflection_calls} reflection calls"
    )
    if result.leak.leaked:
        lines = [f"{h.kind}: {h.task_id}: {h.text[:120]} ({h.detail})" for h in result.leak.hits[:20]]
        console.print(
            Panel(
                "\n".join(lines) + "\n\nThe optimized prompt must not be used to judge the held-out "
                "tasks. This is recorded in result.json and in the prompt's provenance.",
                title="[bold red]HELD-OUT LEAK DETECTED[/bold red]",
                border_style="red",
            )
        )
    else:
        console.print(f"[green]leak check: {result.leak.summary()}[/green]")
    if judged:
        console.print(f"optimized prompt: {result.prompt_path}", markup=False, highlight=False, soft_wrap=True)
    elif result.prompt_path is None:
        console.print(f"[yellow]not finished: rerun the same command to resume from {result.out_dir}[/yellow]")
    else:
        params = settings.params
        sampling = "".join(
            [
                f" --temperature {params.temperature}" if params.temperature is not None else "",
                f" --max-tokens {params.max_tokens}" if params.max_tokens is not None else "",
            ]
        )
        console.print(
            f"optimized prompt: {result.prompt_path}\n{_next_commands(result, settings, sampling)}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    if result.leak.leaked:
        raise typer.Exit(3)


def _next_commands(result: Any, settings: Any, sampling: str) -> str:
    """What judges the prompt by hand. `compare` for the default track, as it always
    was; `run`, which takes any registered track, once per agent for the others."""
    from fembench_agents.optimize.judgement import baseline_agent
    from fembench_agents.runs.defaults import DEFAULT_TRACK

    heldout = ",".join(result.split.heldout)
    if settings.track == DEFAULT_TRACK:
        return (
            "next, on the held-out tasks:\n"
            f"  fembench-agents compare --models {settings.model} "
            f"--agents {baseline_agent(settings)},"
            f"prompt:{result.prompt_path} --tasks {heldout} "
            f"--repeats {settings.heldout_repeats} --tasks-path {settings.tasks_path}{sampling}"
        )
    runs = [
        f"  fembench-agents run --model {settings.model} --agent {agent} --track {settings.track} "
        f"--tasks {heldout} --repeats {settings.heldout_repeats} --tasks-path {settings.tasks_path} "
        f"--cases-path {settings.cases_path}{sampling}"
        for agent in (baseline_agent(settings), f"prompt:{result.prompt_path}")
    ]
    return "next, on the held-out problems (one run per agent):\n" + "\n".join(runs)

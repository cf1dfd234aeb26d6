"""`score`: saved completions in a folder, scored like attempts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from fembench_agents.cli.app import (
    DEFAULT_CASES,
    DEFAULT_TASKS,
    AllowWeakOpt,
    ExecutorOpt,
    FreshInputsOpt,
    TasksOpt,
    app,
    console,
    err,
    exit_if_skipped,
    fail,
    fail_unavailable,
    open_sandbox,
    problem_paths,
    problems_for,
    progress_bar,
)
from fembench_agents.kinds import kind_for
from fembench_agents.kinds.contract import ProblemsUnavailable, ScoringOptions
from fembench_agents.runs.defaults import DEFAULT_LIBRARY, DEFAULT_TRACK


@app.command("score")
def score(
    folder: Annotated[Path, typer.Argument(help="folder of {task_id}_code_{label}.py / _test_ files")],
    tasks: TasksOpt = DEFAULT_TASKS,
    json_out: Annotated[Path | None, typer.Option("--json", help="write outcomes and summary here")] = None,
    cases: Annotated[
        bool, typer.Option("--cases", help="score PDE solver programs {case_id}_{library}_{label}.py instead")
    ] = False,
    cases_path: Annotated[str, typer.Option("--cases-path", help="the PDE cases folder")] = DEFAULT_CASES,
    compat: Annotated[
        list[str] | None,
        typer.Option(
            "--compat",
            help="with --cases: a recorded compatibility option: hypre-as-gamg (a rewrite of the program), "
            "published-v1 (u read in the first published contract's layout, (nx, ny))",
        ),
    ] = None,
    gates: Annotated[
        str,
        typer.Option(
            "--gates",
            help="with --cases: which gates judge: ours, or published (each imported case by its published "
            "record's own thresholds, on our e_base and t_base)",
        ),
    ] = "ours",
    allow_weak_isolation: AllowWeakOpt = False,
    executor: ExecutorOpt = "local",
    fresh_inputs: FreshInputsOpt = None,
) -> None:
    """Score saved completions: functions correct and mean joint test success per label
    (with --cases: PDE solver programs, per-stage counts per label and library)."""
    from fembench_agents.scoring.folder import score_saved

    if not folder.is_dir():
        fail(f"{folder} is not a directory")
    if not cases and (compat or gates != "ours"):
        fail("--compat and --gates apply to PDE solver programs: add --cases")
    kind = kind_for(DEFAULT_LIBRARY if cases else DEFAULT_TRACK)
    path = problem_paths(tasks, cases_path)[kind.default_path]
    try:
        tracks = kind.folder.tracks(folder, path)
    except ProblemsUnavailable as exc:
        fail_unavailable(exc)
    with open_sandbox(allow_weak_isolation, tracks=tracks, executor=executor) as sandbox:
        options = ScoringOptions(tuple(compat or ()), gates=gates, fresh_inputs=fresh_inputs)
        sets = problems_for(tracks, tasks, cases_path, sandbox, options=options)
        found = kind.folder.find(folder, path, sets.by_track)
        with progress_bar() as progress:
            bar = progress.add_task("scoring", total=len(found.attempts))
            result = score_saved(
                found, kind.folder, sets.evaluator, lambda _: progress.advance(bar), skipped=sets.skipped
            )
        sets.evaluator.close()
    shown = kind.folder.table(result, found)
    table = Table(title=f"{folder} ({len(found.problems)} {shown.noun})", caption=result.isolation.summary())
    for col in shown.columns:
        table.add_column(col)
    for row in shown.rows:
        table.add_row(*row)
    console.print(table)
    for note in shown.notes:
        console.print(note)
    if result.unmatched_files:
        err.print(
            f"[yellow]{len(result.unmatched_files)} files matched no {shown.unmatched}:[/yellow] "
            + ", ".join(result.unmatched_files[:10])
        )
    if json_out:
        json_out.write_text(result.model_dump_json(indent=1))
        err.print(f"wrote {json_out}")
    exit_if_skipped(sets.skipped)

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
    TasksOpt,
    app,
    console,
    err,
    exit_if_skipped,
    fail_unavailable,
    open_sandbox,
    problems_for,
    progress_bar,
)
from fembench_agents.contracts import ProblemsUnavailable, ScoringOptions


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
        typer.Option("--compat", help="with --cases: a recorded compatibility rewrite, e.g. hypre-as-gamg"),
    ] = None,
    allow_weak_isolation: AllowWeakOpt = False,
    executor: ExecutorOpt = "local",
) -> None:
    """Score saved completions: functions correct and mean joint test success per label
    (with --cases: PDE solver programs, per-stage counts per label and library)."""
    from fembench_agents.scoring.folder import find_completions, score_folder

    if not folder.is_dir():
        err.print(f"[red]error:[/red] {folder} is not a directory")
        raise typer.Exit(2)
    if cases:
        _score_cases(folder, cases_path, json_out, allow_weak_isolation, tuple(compat or ()), executor)
        return
    with open_sandbox(allow_weak_isolation, executor=executor) as sandbox:
        sets = problems_for(["code", "tests"], tasks, DEFAULT_CASES, sandbox)
        loaded, evaluator = sets.by_track["code"], sets.evaluator
        total = len(find_completions(folder, loaded)[0])
        with progress_bar() as progress:
            bar = progress.add_task("scoring", total=total)
            result = score_folder(folder, loaded, evaluator, progress=lambda _: progress.advance(bar))
        evaluator.close()
    result = result.model_copy(update={"skipped_tasks": sets.skipped})
    table = Table(title=f"{folder} ({len(loaded)} tasks)", caption=result.isolation.summary())
    for col in ("label", "functions correct", "joint test success", "tests pass reference", "failures detected"):
        table.add_column(col)
    for s in result.summaries:
        table.add_row(
            s.label,
            f"{s.functions_correct}/{s.tasks}",
            f"{s.mean_joint_test_success:.3f}",
            f"{s.mean_reference_pass:.3f}",
            f"{s.mean_failure_detection:.3f}",
        )
    console.print(table)
    if result.unmatched_files:
        err.print(
            f"[yellow]{len(result.unmatched_files)} files matched no task:[/yellow] "
            + ", ".join(result.unmatched_files[:10])
        )
    if json_out:
        json_out.write_text(result.model_dump_json(indent=1))
        err.print(f"wrote {json_out}")
    exit_if_skipped(sets.skipped)


def _score_cases(
    folder: Path,
    cases_path: str,
    json_out: Path | None,
    allow_weak_isolation: bool,
    compat: tuple[str, ...],
    executor: str,
) -> None:
    from fembench_agents.cases.folder import find_programs, score_case_folder
    from fembench_agents.cases.problem import load_cases
    from fembench_agents.cases.store import CaseStoreError

    try:
        loaded = load_cases(Path(cases_path))
    except CaseStoreError as exc:
        fail_unavailable(ProblemsUnavailable(str(exc)))
    programs, _ = find_programs(folder, loaded)
    libraries = sorted({p.library for p in programs})
    with open_sandbox(allow_weak_isolation, tracks=libraries, executor=executor) as sandbox:
        evaluator = problems_for(
            libraries, DEFAULT_TASKS, cases_path, sandbox, options=ScoringOptions(compat)
        ).evaluator
        with progress_bar() as progress:
            bar = progress.add_task("scoring", total=len(programs))
            result = score_case_folder(folder, loaded, evaluator, progress=lambda _: progress.advance(bar))
        evaluator.close()
    table = Table(title=f"{folder} ({len(loaded)} cases)", caption=result.isolation.summary())
    for col in ("label", "library", "programs", "executes", "accurate", "fast (pass)"):
        table.add_column(col)
    for s in result.summaries:
        table.add_row(s.label, s.library, str(s.attempts), str(s.executes), str(s.accurate), str(s.fast))
    console.print(table)
    if result.unmatched_files:
        err.print(
            f"[yellow]{len(result.unmatched_files)} files matched no case and library:[/yellow] "
            + ", ".join(result.unmatched_files[:10])
        )
    if json_out:
        json_out.write_text(result.model_dump_json(indent=1))
        err.print(f"wrote {json_out}")

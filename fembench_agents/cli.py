"""The `fembench-agents` command line."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from fembench_agents.evaluator import Evaluator
from fembench_agents.loader import TaskFormatError, load_tasks
from fembench_agents.sandbox import Sandbox, WeakIsolationRefused

app = typer.Typer(no_args_is_help=True, add_completion=False, help=__doc__)
tasks_app = typer.Typer(no_args_is_help=True, help="Browse and check the function-task suite.")
app.add_typer(tasks_app, name="tasks")
# Piped output (CI logs, files) gets wide tables instead of rich's 80 columns.
console = Console(width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True)

DEFAULT_TASKS = os.environ.get("FEMBENCH_TASKS", "tasks")
TasksOpt = Annotated[str, typer.Option("--tasks", help="task file or directory")]
AllowWeakOpt = Annotated[bool, typer.Option(
    "--allow-weak-isolation",
    help="run generated code even where this machine cannot confine it in namespaces "
         "(recorded in the run and printed in every report; see `sandbox check`)")]


def open_sandbox(allow_weak_isolation: bool = False, workers: int | None = None) -> Sandbox:
    """The sandbox for commands that run generated code: stops the command,
    before any attempt runs, where the isolation is weaker than namespaced and
    the user did not accept that."""
    sandbox = Sandbox(workers=workers, allow_weak_isolation=allow_weak_isolation)
    try:
        report = sandbox.require_isolation()
    except WeakIsolationRefused as exc:
        sandbox.close()
        _refused(exc)
    if not report.confined:
        err.print(f"[yellow]warning:[/yellow] {escape(report.summary())}")
    return sandbox


def _refused(exc: WeakIsolationRefused) -> NoReturn:
    err.print(f"[red]error:[/red] {escape(str(exc))}")
    raise typer.Exit(2)


def _progress() -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=err, transient=True)


def _load(path: str, sandbox: Sandbox) -> list:
    try:
        return load_tasks(path, sandbox)
    except (TaskFormatError, FileNotFoundError) as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None


@tasks_app.command("list")
def tasks_list(tasks: TasksOpt = DEFAULT_TASKS) -> None:
    """One line per task: id, tier, helpers given, inputs, tests."""
    with Sandbox(allow_weak_isolation=True) as sandbox:  # runs only the suite's own modules
        loaded = _load(tasks, sandbox)
    table = Table(title=f"{len(loaded)} tasks in {tasks}")
    for col in ("task id", "tier", "given", "inputs", "tests", "description"):
        table.add_column(col)
    for t in loaded:
        table.add_row(t.task_id, t.tier.label if t.tier else "-", str(len(t.helpers)), str(len(t.inputs)),
                      str(len(t.tests)), t.short_description)
    console.print(table)


@tasks_app.command("show")
def tasks_show(task_id: str, tasks: TasksOpt = DEFAULT_TASKS) -> None:
    """The prompt-facing view of one task."""
    from fembench_agents.views import task_card

    with Sandbox(allow_weak_isolation=True) as sandbox:
        loaded = {t.task_id: t for t in _load(tasks, sandbox)}
    if task_id not in loaded:
        err.print(f"[red]error:[/red] no task {task_id!r} in {tasks}; try `fembench-agents tasks list`")
        raise typer.Exit(2)
    console.print(task_card(loaded[task_id]), markup=False, highlight=False, soft_wrap=True)


@tasks_app.command("validate")
def tasks_validate(path: Annotated[str, typer.Argument(help="task file or directory")] = DEFAULT_TASKS) -> None:
    """Prove every task internally consistent; non-zero exit and a table of problems otherwise."""
    from concurrent.futures import ThreadPoolExecutor

    from fembench_agents.validate import validate_task

    with Sandbox(allow_weak_isolation=True) as sandbox:  # runs only the suite's own modules
        loaded = _load(path, sandbox)
        evaluator = Evaluator(sandbox)
        with _progress() as progress, ThreadPoolExecutor(max_workers=sandbox.size) as pool:
            bar = progress.add_task("validating", total=len(loaded))
            problems = []
            for found in pool.map(lambda t: validate_task(t, evaluator), loaded):
                problems += found
                progress.advance(bar)
        evaluator.close()
    if problems:
        table = Table(title=f"{len(problems)} problems")
        for col in ("task id", "check", "problem"):
            table.add_column(col)
        for p in problems:
            table.add_row(p.task_id, p.check, p.message)
        console.print(table)
        raise typer.Exit(1)
    console.print(f"[green]{len(loaded)} tasks valid[/green]")


@app.command("score")
def score(
    folder: Annotated[Path, typer.Argument(help="folder of {task_id}_code_{label}.py / _test_ files")],
    tasks: TasksOpt = DEFAULT_TASKS,
    json_out: Annotated[Path | None, typer.Option("--json", help="write outcomes and summary here")] = None,
    allow_weak_isolation: AllowWeakOpt = False,
) -> None:
    """Score saved completions: functions correct and mean joint test success per label."""
    from fembench_agents.score_folder import find_completions, score_folder

    if not folder.is_dir():
        err.print(f"[red]error:[/red] {folder} is not a directory")
        raise typer.Exit(2)
    with open_sandbox(allow_weak_isolation) as sandbox:
        loaded = _load(tasks, sandbox)
        evaluator = Evaluator(sandbox)
        total = len(find_completions(folder, loaded)[0])
        with _progress() as progress:
            bar = progress.add_task("scoring", total=total)
            result = score_folder(folder, loaded, evaluator, progress=lambda _: progress.advance(bar))
        evaluator.close()
    table = Table(title=f"{folder} ({len(loaded)} tasks)", caption=result.isolation.summary())
    for col in ("label", "functions correct", "joint test success", "tests pass reference", "failures detected"):
        table.add_column(col)
    for s in result.summaries:
        table.add_row(s.label, f"{s.functions_correct}/{s.tasks}", f"{s.mean_joint_test_success:.3f}",
                      f"{s.mean_reference_pass:.3f}", f"{s.mean_failure_detection:.3f}")
    console.print(table)
    if result.unmatched_files:
        err.print(f"[yellow]{len(result.unmatched_files)} files matched no task:[/yellow] "
                  + ", ".join(result.unmatched_files[:10]))
    if json_out:
        json_out.write_text(result.model_dump_json(indent=1))
        err.print(f"wrote {json_out}")


sandbox_app = typer.Typer(no_args_is_help=True, help="The sandbox that runs generated code.")
app.add_typer(sandbox_app, name="sandbox")


@sandbox_app.command("check")
def sandbox_check() -> None:
    """Print the isolation this machine gives generated code, and why; exit 1 below namespaced."""
    from fembench_agents.sandbox.isolation import remedies

    with Sandbox(allow_weak_isolation=True) as sandbox:
        report = replace(sandbox.isolation(), accepted_weak=False)  # probing accepts nothing
    console.print(escape(report.summary()), highlight=False)
    if report.confined:
        console.print("each job: private mount, network, PID and IPC namespaces; every inherited mount "
                      "read-only; home, project, task and run directories, /run and /tmp hidden; a private "
                      "/tmp; no network interfaces; no capabilities; limits on memory, CPU time, processes "
                      "and file size", highlight=False)
        return
    console.print("generated code is refused here unless a command is given --allow-weak-isolation. To fix:",
                  highlight=False)
    for line in remedies():
        console.print(f"  - {escape(line)}", highlight=False)
    raise typer.Exit(1)


def main() -> None:
    import fembench_agents.cli_models  # noqa: F401 - registers models check
    import fembench_agents.cli_optimize  # noqa: F401 - registers optimize
    import fembench_agents.cli_runs  # noqa: F401 - registers run, compare, report, replay

    try:
        app()
    except WeakIsolationRefused as exc:  # a job's confinement failed after the first check passed
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        sys.exit(2)
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)


if __name__ == "__main__":
    main()

"""`tasks list/show/validate`: browse and check the function-task suite."""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import Progress, TaskID
from rich.table import Table

from fembench_agents.cli.app import (
    DEFAULT_CASES,
    DEFAULT_TASKS,
    TasksOpt,
    app,
    console,
    err,
    exit_if_skipped,
    fail,
    fail_unavailable,
    problems_for,
    progress_bar,
)
from fembench_agents.kinds import kind_for
from fembench_agents.kinds.contract import ProblemsUnavailable
from fembench_agents.kinds.review import ValidationOptions
from fembench_agents.runs.defaults import DEFAULT_TRACK
from fembench_agents.scoring.sandbox import Sandbox

tasks_app = typer.Typer(no_args_is_help=True, help="Browse and check the function-task suite.")
app.add_typer(tasks_app, name="tasks")


@tasks_app.command("list")
def tasks_list(tasks: TasksOpt = DEFAULT_TASKS) -> None:
    """One line per task: id, tier, helpers given, inputs, tests."""
    with Sandbox(allow_weak_isolation=True) as sandbox:  # runs only the suite's own modules
        suite = problems_for(["code"], tasks, DEFAULT_CASES, sandbox)
    loaded = suite.by_track["code"]
    table = Table(title=f"{len(loaded)} tasks in {tasks}")
    for col in ("task id", "tier", "given", "inputs", "tests", "description"):
        table.add_column(col)
    for t in loaded:
        table.add_row(
            t.task_id,
            t.tier.label if t.tier else "-",
            str(len(t.helpers)),
            str(len(t.inputs)),
            str(len(t.tests)),
            t.short_description,
        )
    console.print(table)
    exit_if_skipped(suite.skipped)


@tasks_app.command("show")
def tasks_show(task_id: str, tasks: TasksOpt = DEFAULT_TASKS) -> None:
    """The prompt-facing view of one task."""
    from fembench_agents.suite.views import task_card

    with Sandbox(allow_weak_isolation=True) as sandbox:
        loaded = {t.task_id: t for t in problems_for(["code"], tasks, DEFAULT_CASES, sandbox).by_track["code"]}
    if task_id not in loaded:
        fail(f"no task {task_id!r} in {tasks}; try `fembench-agents tasks list`")
    console.print(task_card(loaded[task_id]), markup=False, highlight=False, soft_wrap=True)


class _ValidationBar:
    """`ValidationProgress` on a progress bar shown once the tasks have loaded (a
    suite that does not load leaves no bar behind); notes go to stderr."""

    def __init__(self, stack: ExitStack) -> None:
        self.stack = stack
        self.progress: Progress | None = None
        self.bar: TaskID | None = None

    def start(self, total: int) -> None:
        self.progress = self.stack.enter_context(progress_bar())
        self.bar = self.progress.add_task("validating", total=total)

    def advance(self) -> None:
        if self.progress is not None and self.bar is not None:
            self.progress.advance(self.bar)

    def note(self, line: str) -> None:
        err.print(line, markup=False, highlight=False, soft_wrap=True)  # as `say_skipped` prints


@tasks_app.command("validate")
def tasks_validate(
    path: Annotated[str, typer.Argument(help="task file or directory")] = DEFAULT_TASKS,
    json_out: Annotated[Path | None, typer.Option("--json", help="write the problems and skipped tasks here")] = None,
) -> None:
    """Prove every task internally consistent; a table of problems and exit 1 otherwise
    (exit 3 when every loaded task is valid but some modules did not load)."""
    try:
        with ExitStack() as stack:
            found = kind_for(DEFAULT_TRACK).validator.validate(path, ValidationOptions(), _ValidationBar(stack))
    except ProblemsUnavailable as exc:
        fail_unavailable(exc)
    if json_out:
        data = {
            "valid": found.valid,
            "problems": [p.model_dump() for p in found.problems],
            "skipped": [s.model_dump() for s in found.skipped],
        }
        json_out.write_text(json.dumps(data, indent=1))
    if found.problems:
        table = Table(title=f"{len(found.problems)} problems")
        for col in ("task id", "check", "problem"):
            table.add_column(col)
        for p in found.problems:
            table.add_row(p.task_id, p.check, p.message)
        console.print(table)
        raise typer.Exit(1)
    console.print(f"[green]{found.summary}[/green]")
    exit_if_skipped(found.skipped)

"""The app, its shared options and helpers; each command group lives in its
own module of this package and registers on `app` when imported."""

from __future__ import annotations

import os
import sys
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from fembench_agents.scoring.sandbox import Sandbox, WeakIsolationRefused
from fembench_agents.suite.loader import TaskFormatError, load_tasks

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Compare, repair and optimize LLM solver agents on computational-mechanics code.",
)
# Piped output (CI logs, files) gets wide tables instead of rich's 80 columns.
console = Console(width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True)

DEFAULT_TASKS = os.environ.get("FEMBENCH_TASKS", "tasks")
TasksOpt = Annotated[str, typer.Option("--tasks", help="task file or directory")]
AllowWeakOpt = Annotated[
    bool,
    typer.Option(
        "--allow-weak-isolation",
        help="run generated code even where this machine cannot confine it in namespaces "
        "(recorded in the run and printed in every report; see `sandbox check`)",
    ),
]


def open_sandbox(allow_weak_isolation: bool = False, workers: int | None = None) -> Sandbox:
    """The sandbox for commands that run generated code: stops the command,
    before any attempt runs, where the isolation is weaker than namespaced and
    the user did not accept that."""
    sandbox = Sandbox(workers=workers, allow_weak_isolation=allow_weak_isolation)
    try:
        report = sandbox.require_isolation()
    except WeakIsolationRefused as exc:
        sandbox.close()
        refused(exc)
    if not report.confined:
        err.print(f"[yellow]warning:[/yellow] {escape(report.summary())}")
    return sandbox


def refused(exc: WeakIsolationRefused) -> NoReturn:
    err.print(f"[red]error:[/red] {escape(str(exc))}")
    raise typer.Exit(2)


def progress_bar() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    )


def load_suite(path: str, sandbox: Sandbox) -> list:
    try:
        return load_tasks(path, sandbox)
    except (TaskFormatError, FileNotFoundError) as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None

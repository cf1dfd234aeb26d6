"""The app, its shared options and helpers; each command group lives in its
own module of this package and registers on `app` when imported."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from fembench_agents.errors import BadInput
from fembench_agents.kinds.contract import ProblemsUnavailable, ScoringOptions, SkippedTask
from fembench_agents.runs.defaults import CASES_PATH, TASKS_PATH
from fembench_agents.scoring.sandbox import Sandbox, WeakIsolationRefused
from fembench_agents.scoring.sandbox.executor import ExecutorChoice, JobExecutor

if TYPE_CHECKING:
    from fembench_agents.runs.problems import ProblemSets
    from fembench_agents.runs.reader import RunRecords

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Compare, repair and optimize LLM solver agents on computational-mechanics code.",
)
# Piped output (CI logs, files) gets wide tables instead of rich's 80 columns.
console = Console(width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True)

DEFAULT_TASKS = os.environ.get("FEMBENCH_TASKS", TASKS_PATH)
DEFAULT_CASES = os.environ.get("FEMBENCH_CASES", CASES_PATH)
TasksOpt = Annotated[str, typer.Option("--tasks", help="task file or directory")]
FreshInputsOpt = Annotated[
    int | None,
    typer.Option(
        "--fresh-inputs",
        min=0,
        metavar="SEED",
        help="beside each function task, its fresh instance <id>~fresh<SEED>: verification inputs drawn anew "
        "from the ranges the task declares (docs/fresh_instances.md)",
    ),
]
AllowWeakOpt = Annotated[
    bool,
    typer.Option(
        "--allow-weak-isolation",
        help="run generated code even where this machine cannot confine it in namespaces "
        "(recorded in the run and printed in every report; see `sandbox check`)",
    ),
]

ExecutorOpt = Annotated[
    str,
    typer.Option(
        "--executor",
        help="where sandboxed jobs run: local (this machine's pool) | ray (a local Ray instance) | "
        "ray:ADDRESS (a Ray cluster); Ray needs the ray extra, see docs/ray.md",
    ),
]

SkipBadLinesOpt = Annotated[
    bool,
    typer.Option(
        "--skip-bad-lines",
        help="read a damaged run log past the lines that are not records, and say how many were left out",
    ),
]
SKIP_HINT = "pass --skip-bad-lines to read the rest of the log (the bad lines are left out and counted)"


def say_bad_input(exc: BadInput, hint: str | None = None) -> None:
    """The fault in one line on stderr, then what the user can do about it."""
    err.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
    if hint or exc.hint:
        err.print(f"hint: {hint or exc.hint}", markup=False, highlight=False, soft_wrap=True)


def bad_input(exc: BadInput, hint: str | None = None) -> NoReturn:
    """Exit 2 on input the command cannot use, naming the fault (see `say_bad_input`)."""
    say_bad_input(exc, hint)
    raise typer.Exit(2)


def fail(message: str, hint: str | None = None) -> NoReturn:
    """Exit 2 with `message` on one line (never wrapped, never read as markup)."""
    bad_input(BadInput(message), hint)


def open_runs(run_dirs: Sequence[os.PathLike[str] | str], skip_bad_lines: bool) -> list[RunRecords]:
    """Each run read back. A log line that is not a record exits 2 naming it,
    or with `skip_bad_lines` is left out, and stderr says how many were."""
    from fembench_agents.runs.log import LOG_NAME, DamagedLog
    from fembench_agents.runs.reader import open_run

    runs = []
    for directory in run_dirs:
        try:
            run = open_run(directory, skip_bad_lines)
        except DamagedLog as exc:
            bad_input(exc, SKIP_HINT)
        except BadInput as exc:
            bad_input(exc)
        if run.skipped:
            n = len(run.skipped)
            err.print(
                f"skipped {n} bad line{'s' if n != 1 else ''} (first: {run.skipped[0]})",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
        if run.torn_line is not None:
            err.print(
                f"note: {run.path / LOG_NAME}:{run.torn_line}: incomplete last line (a writer stopped "
                "mid-record) left out; a resume redoes its episode",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
        runs.append(run)
    return runs


RESUME_HINT = (
    "a run resumes only from a log it can read entirely, and nothing was appended: repair or delete the bad "
    "lines (`report --skip-bad-lines` shows what the rest holds), or run into a new --out"
)


def refuse_damaged_runs(run_dirs: Sequence[Path]) -> None:
    """Before anything starts: exit 2 where a run to resume has a manifest or a log
    line this build cannot read (a resume appends to a log it read entirely, or not at all)."""
    from fembench_agents.runs.log import MANIFEST_NAME, DamagedLog, read_manifest, scan_log

    for directory in run_dirs:
        try:
            if (directory / MANIFEST_NAME).exists():
                read_manifest(directory)
            faults = scan_log(directory).faults
        except BadInput as exc:
            bad_input(exc, RESUME_HINT)
        if faults:
            bad_input(DamagedLog(faults), RESUME_HINT)


def open_sandbox(
    allow_weak_isolation: bool = False,
    workers: int | None = None,
    tracks: Iterable[str] = (),
    executor: str = "local",
) -> Sandbox:
    """The sandbox for commands that run generated code: stops the command,
    before any attempt runs, where the isolation is weaker than namespaced and
    the user did not accept that. `tracks`: those whose modules (a PDE
    library's) the warm workers import once, so no attempt is charged for it.
    `executor`: `--executor` as given (exit 2 when it is malformed or Ray
    cannot be used)."""
    from fembench_agents.runs.problems import preload_for

    preload = preload_for(tracks)
    sandbox = Sandbox(
        workers=workers,
        allow_weak_isolation=allow_weak_isolation,
        preload=preload,
        executor=_executor(executor, workers, preload),
    )
    try:
        report = sandbox.require_isolation()
    except WeakIsolationRefused as exc:
        sandbox.close()
        refused(exc)
    except RuntimeError as exc:  # the executor could not run the probe (a Ray node with other code)
        sandbox.close()
        err.print(f"error: --executor {executor}: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    if not report.confined:
        err.print(f"[yellow]warning:[/yellow] {escape(report.summary())}")
    return sandbox


def _executor(text: str, workers: int | None, preload: tuple[str, ...]) -> JobExecutor | None:
    """The executor `--executor` names; None for this machine's pool."""
    try:
        choice = ExecutorChoice.parse(text)
    except ValueError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    if choice.kind == "local":
        return None
    try:
        from fembench_agents.scoring.sandbox.ray_executor import RayExecutor
    except ImportError:
        err.print("error: --executor ray needs Ray: pip install 'fembench-agents[ray]'", markup=False)
        raise typer.Exit(2) from None
    try:
        return RayExecutor(choice.address, workers, preload)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        err.print(f"error: --executor {choice}: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


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


# Exit status of a command that went on without some task modules (after 1, which wins).
EXIT_SKIPPED = 3


def problem_paths(tasks_path: str, cases_path: str) -> dict[str, str]:
    """Where each problem source is, as `--tasks-path` and `--cases-path` name them."""
    return {TASKS_PATH: tasks_path, CASES_PATH: cases_path}


def say_done(what: str, done: int, total: int) -> None:
    """A preparation's progress (`TaskKind.prepare`) as one line when it ends, for commands without a bar."""
    if done == total:
        err.print(f"{what}: done", markup=False, highlight=False)


def say_skipped(skip: SkippedTask) -> None:
    """One source left out, with its reason, on stderr."""
    err.print(f"skipped task {skip.name}: {skip.reason}", markup=False, highlight=False, soft_wrap=True)


def fail_unavailable(exc: ProblemsUnavailable) -> NoReturn:
    """Exit 2 with each source that did not load, and each line of why a track's problems cannot be had here."""
    for skip in exc.skipped:
        say_skipped(skip)
    for line in str(exc).splitlines():
        err.print(f"error: {line}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def problems_for(
    tracks: Sequence[str],
    tasks_path: str,
    cases_path: str,
    sandbox: Sandbox,
    skipped: list[SkippedTask] | None = None,
    options: ScoringOptions | None = None,
    selections: Sequence[tuple[str, str]] = (),
) -> ProblemSets:
    """What each track draws from and an evaluator that can score them all;
    sources that did not load are named on stderr and added to `skipped`. Exits 2
    when a track's problems are unavailable here (say, no machine calibration)."""
    from fembench_agents.runs.problems import load_problems

    try:
        sets = load_problems(tracks, sandbox, problem_paths(tasks_path, cases_path), options, selections)
    except ProblemsUnavailable as exc:
        fail_unavailable(exc)
    for note in sets.notes:
        err.print(note, markup=False, highlight=False, soft_wrap=True)
    for skip in sets.skipped:
        say_skipped(skip)
    if skipped is not None:
        skipped.extend(sets.skipped)
    return sets


def exit_if_skipped(skipped: list[SkippedTask]) -> None:
    """The last word of a command that left task modules out: say so, exit EXIT_SKIPPED."""
    if skipped:
        names = ", ".join(s.name for s in skipped)
        err.print(f"{len(skipped)} task(s) skipped: {names}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_SKIPPED)

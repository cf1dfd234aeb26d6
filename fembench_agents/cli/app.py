"""The app, its shared options and helpers; each command group lives in its
own module of this package and registers on `app` when imported."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from fembench_agents.scoring.sandbox import Sandbox, WeakIsolationRefused
from fembench_agents.scoring.sandbox.executor import ExecutorChoice, JobExecutor
from fembench_agents.suite.loader import LoadedSuite, SkippedTask, load_each

if TYPE_CHECKING:
    from fembench_agents.cases.problem import SolverCase
    from fembench_agents.cases.scorer import CaseScorer

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Compare, repair and optimize LLM solver agents on computational-mechanics code.",
)
# Piped output (CI logs, files) gets wide tables instead of rich's 80 columns.
console = Console(width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True)

DEFAULT_TASKS = os.environ.get("FEMBENCH_TASKS", "tasks")
DEFAULT_CASES = os.environ.get("FEMBENCH_CASES", "cases")
TasksOpt = Annotated[str, typer.Option("--tasks", help="task file or directory")]
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


def open_sandbox(
    allow_weak_isolation: bool = False,
    workers: int | None = None,
    libraries: Iterable[str] = (),
    executor: str = "local",
) -> Sandbox:
    """The sandbox for commands that run generated code: stops the command,
    before any attempt runs, where the isolation is weaker than namespaced and
    the user did not accept that. `libraries`: PDE library tracks whose
    modules the warm workers import once, so no attempt is charged for it.
    `executor`: `--executor` as given (exit 2 when it is malformed or Ray
    cannot be used)."""
    from fembench_agents.cases.tracks import get_track

    preload = tuple(dict.fromkeys(m for lib in libraries for m in get_track(lib).modules))
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


def load_suite(path: str, sandbox: Sandbox) -> LoadedSuite:
    """Every task module under `path` that loads; each one that does not is
    named with its reason on stderr and left out. Exit 2 when none loads."""
    try:
        loaded = load_each(path, sandbox)
    except FileNotFoundError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    for skip in loaded.skipped:
        err.print(f"skipped task {skip.name}: {skip.reason}", markup=False, highlight=False, soft_wrap=True)
    if loaded.skipped and not loaded.tasks:
        err.print(f"[red]error:[/red] no task in {path} could be loaded")
        raise typer.Exit(2)
    return loaded


def exit_if_skipped(skipped: list[SkippedTask]) -> None:
    """The last word of a command that left task modules out: say so, exit EXIT_SKIPPED."""
    if skipped:
        names = ", ".join(s.name for s in skipped)
        err.print(f"{len(skipped)} task(s) skipped: {names}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_SKIPPED)


def load_case_set(path: str | Path) -> list[SolverCase]:
    """The built PDE cases of a cases folder, or exit 2 saying how to build them."""
    from fembench_agents.cases.problem import load_cases
    from fembench_agents.cases.store import CaseStoreError

    try:
        return load_cases(Path(path))
    except CaseStoreError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from None


def require_tracks(libraries: Iterable[str]) -> None:
    """Exit 2 naming every library track that is unknown or not installed: never faked."""
    from fembench_agents.cases.tracks import get_track

    problems = []
    for lib in libraries:
        try:
            ok, why = get_track(lib).available()
        except KeyError as exc:
            ok, why = False, str(exc.args[0])
        if not ok:
            problems.append(f"library track {lib!r} is unavailable: {why}")
    for problem in problems:
        err.print(f"error: {problem}", markup=False, highlight=False, soft_wrap=True)
    if problems:
        raise typer.Exit(2)


def case_scorer(
    sandbox: Sandbox, cases_path: str | Path, libraries: Iterable[str], compat: tuple[str, ...] = ()
) -> CaseScorer:
    """The PDE scorer with this machine's calibration (t_base), or exit 2 saying how to make one.
    `compat`: compatibility rewrites (cases/compat.py), recorded in every outcome they change."""
    from fembench_agents.cases import timing
    from fembench_agents.cases.compat import REWRITES
    from fembench_agents.cases.scorer import CaseScorer, CaseScoringConfig

    require_tracks(libraries)
    unknown = [c for c in compat if c not in REWRITES]
    if unknown:
        err.print(f"error: unknown compatibility rewrite(s) {unknown}; known: {sorted(REWRITES)}", markup=False)
        raise typer.Exit(2)
    try:
        calibration = timing.load(Path(cases_path))
    except timing.CalibrationMissing as exc:
        err.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    return CaseScorer(sandbox, calibration, CaseScoringConfig(compat=compat))

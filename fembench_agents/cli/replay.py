"""`replay`: re-run a recorded run from its log with no model calls, re-score
its attempts with the current evaluator, or print one task's feedback loop."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.panel import Panel

from fembench_agents.cli.app import (
    DEFAULT_CASES,
    DEFAULT_TASKS,
    AllowWeakOpt,
    ExecutorOpt,
    SkipBadLinesOpt,
    TasksOpt,
    app,
    bad_input,
    console,
    fail,
    open_runs,
    open_sandbox,
    problems_for,
)
from fembench_agents.cli.runs import CasesPathOpt
from fembench_agents.errors import BadInput

if TYPE_CHECKING:
    from fembench_agents.runs.replay import Change
    from fembench_agents.scoring.evaluator import Evaluator


@app.command("replay")
def replay(
    run_dir: Annotated[Path, typer.Argument(help="a run directory")],
    rescore: Annotated[bool, typer.Option(help="re-evaluate stored attempts with the current evaluator")] = False,
    show: Annotated[str | None, typer.Option(help="print this task's feedback loop turn by turn")] = None,
    tasks_path: TasksOpt = DEFAULT_TASKS,
    cases_path: CasesPathOpt = DEFAULT_CASES,
    allow_weak_isolation: AllowWeakOpt = False,
    skip_bad_lines: SkipBadLinesOpt = False,
    executor: ExecutorOpt = "local",
) -> None:
    """Re-run a recorded run from its log with no model calls."""
    from fembench_agents.runs.replay import episode_turns, run_options, run_track
    from fembench_agents.runs.replay import rescore as rescore_run

    if not (run_dir / "manifest.json").exists():
        bad_input(BadInput(f"{run_dir} is not a run directory (no manifest.json)"))
    # read (and a damaged log named) before any sandbox starts
    (recorded,) = open_runs([run_dir], skip_bad_lines)
    records = recorded.records
    if show:
        _print_turns(episode_turns(run_dir, show, records), show)
        return
    track = run_track(run_dir)
    with open_sandbox(allow_weak_isolation, tracks=[track], executor=executor) as sandbox:
        sets = problems_for([track], tasks_path, cases_path, sandbox, options=run_options(run_dir))
        problems, evaluator = sets.by_track[track], sets.evaluator
        try:
            if rescore:
                changes = rescore_run(run_dir, {t.task_id: t for t in problems}, evaluator, records)
            else:
                changes = _replayed(run_dir, problems, evaluator, records)
        finally:
            evaluator.close()
    what = "re-scored" if rescore else "replayed"
    if not changes:
        console.print(f"[green]{what}: every attempt's outcome is identical[/green]")
        return
    console.print(f"[yellow]{what}: {len(changes)} attempts changed[/yellow]")
    for c in changes[:50]:
        console.print(f"{c.episode} #{c.attempt_index}\n  before: {c.before}\n  after:  {c.after}", markup=False)
    raise typer.Exit(1)


def _replayed(run_dir: Path, problems: list[Any], evaluator: Evaluator, records: list[Any]) -> list[Change]:
    """The replay's changes, or exit 2 where it diverged from the recording."""
    from fembench_agents.models import UnrecordedRequestError  # litellm's import: only for a replay
    from fembench_agents.runs.replay import replay_run

    try:
        return replay_run(run_dir, problems, evaluator, records)
    except UnrecordedRequestError as exc:
        fail(f"the replay diverged from the recording: {exc}")


def _print_turns(episodes: list, task_id: str) -> None:
    if not episodes:
        fail(f"no attempts at {task_id!r} in this run")
    for end, turns in episodes:
        console.rule(turns[0].episode)
        for a in turns:
            console.print(
                Panel(a.messages[-1].content, title=f"attempt {a.attempt_index}: prompt", expand=False), markup=False
            )
            console.print(Panel(a.reply or "(empty reply)", title="reply", expand=False), markup=False)
            if a.outcome is not None:
                verdict = "passed" if a.outcome.passed else f"failed at {a.outcome.failed_stage} ({a.outcome.reason})"
                console.print(f"outcome: {verdict}")
            if a.model_error:
                console.print(f"model error: {a.model_error}", markup=False)
            if a.feedback is not None and not a.outcome.passed:  # type: ignore[union-attr]
                console.print(
                    Panel(a.feedback.text, title=f"feedback (score {a.feedback.score:.2f})", expand=False), markup=False
                )
        if end is not None:
            console.print(f"episode: {'passed' if end.passed else 'failed'} after {end.attempts} attempts")

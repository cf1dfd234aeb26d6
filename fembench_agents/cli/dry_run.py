"""`run --dry-run`, `compare --dry-run` and `optimize --dry-run`: the grid, the most model calls it
can make, its tokens and dollars (`runs/estimate.py`), with no model call and
no sandbox job."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from fembench_agents.cli.app import console, err, fail_unavailable, problem_paths, say_skipped
from fembench_agents.kinds.contract import PreviewedProblems, ProblemsUnavailable
from fembench_agents.runs.grid import PlannedRun, grid_selections, grid_tracks, resolved_runs

if TYPE_CHECKING:
    from fembench_agents.optimize.settings import OptimizeSettings

TITLE = "dry run: no model call, no sandbox job"


def _refuse_unknown(models: Sequence[tuple[str, str | None]]) -> None:
    """Exit 2 naming each (model, api_base) no provider serves: bad input, even for a dry run."""
    from fembench_agents.models.credentials import unknown_model

    unknown = [u for model, base in models if (u := unknown_model(model, base))]
    for line in dict.fromkeys(unknown):
        err.print(f"error: {line}", markup=False, highlight=False, soft_wrap=True)
    if unknown:
        raise typer.Exit(2)


def _note_missing_keys(models: Sequence[tuple[str, str | None]]) -> None:
    """A line under the table per model whose key is not set: the real command would refuse it."""
    from fembench_agents.models.credentials import missing_key_advice, missing_keys

    for model, base in dict.fromkeys(models):
        missing = missing_keys(model) if base is None else []
        if missing:
            console.print(f"note: model {model!r} {missing_key_advice(missing)}", markup=False, highlight=False)


def _previewed(
    tracks: Sequence[str], tasks_path: str, cases_path: str, selections: Sequence[tuple[str, str]]
) -> PreviewedProblems:
    from fembench_agents.runs.problems import preview_problems

    try:
        found = preview_problems(tracks, problem_paths(tasks_path, cases_path), selections)
    except ProblemsUnavailable as exc:
        fail_unavailable(exc)
    for skip in found.skipped:
        say_skipped(skip)
    return found


def _say_notes(found: PreviewedProblems) -> None:
    """What the kinds said of the problems made on demand (fresh instances: read, or to be made)."""
    for note in found.notes:
        console.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)


def _print_table(title: str, columns: Sequence[str], rows: Sequence[list[str]], total: list[str] | None) -> None:
    table = Table(title=title)
    for column in columns:
        numeric = column in ("episodes", "max calls", "prompt tokens", "completion tokens", "dollars")
        table.add_column(column, justify="right" if numeric else "left")
    for row in rows:
        table.add_row(*row)
    if total is not None:
        table.add_row(*total, style="bold")
    console.print(table)


def show_dry_run(runs: Sequence[PlannedRun], tasks_path: str, cases_path: str) -> None:
    """Print the estimate table and its rule; exit 2 on a model no provider serves
    or problems that cannot be read. A missing key is only noted: nothing is called."""
    from fembench_agents.agents import make_agent

    models = [(r.config.model, r.config.params.api_base) for r in runs]
    _refuse_unknown(models)
    found = _previewed(grid_tracks(runs), tasks_path, cases_path, grid_selections(runs))
    runs = resolved_runs(runs, found.made)
    from fembench_agents.models import model_prices  # lazy: litellm's import, after the refusals
    from fembench_agents.runs.estimate import COLUMNS, RULES, estimate_run, litellm_tokens, total_row

    rows = []
    try:
        for r in runs:
            rows.append(
                estimate_run(
                    r, make_agent(r.config.agent), found.by_track[r.config.track], model_prices, litellm_tokens
                )
            )
    except ValueError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    _print_table(TITLE, COLUMNS, [r.cells() for r in rows], total_row(rows))
    for rule in RULES:
        console.print(f"  {rule}", markup=False, highlight=False, soft_wrap=True)
    _say_notes(found)
    _note_missing_keys(models)


def show_optimize_dry_run(settings: OptimizeSettings, evaluate: bool) -> None:
    """`optimize --dry-run`: each phase's most model calls, tokens and dollars (`optimize/estimate.py`)."""
    models = [
        (settings.model, settings.params.api_base),
        (settings.reflection_model, settings.reflection_params.api_base),
    ]
    _refuse_unknown(models)
    selections = [(settings.track, settings.tasks), (settings.track, settings.heldout)]
    found = _previewed([settings.track], settings.tasks_path, settings.cases_path, selections)
    from fembench_agents.models import model_prices  # lazy: litellm's import, after the refusals
    from fembench_agents.optimize.estimate import COLUMNS, RULES, estimate_optimization, split_line
    from fembench_agents.optimize.split import with_made
    from fembench_agents.runs.estimate import litellm_tokens

    among, held = with_made(settings.tasks, settings.heldout, found.made)  # as the optimization will
    settings = settings.model_copy(update={"tasks": among, "heldout": held})

    problems = found.by_track[settings.track]
    try:
        line = split_line(settings, problems)
        rows = estimate_optimization(settings, problems, model_prices, litellm_tokens, evaluate)
    except ValueError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    console.print(line, markup=False, highlight=False, soft_wrap=True)
    _print_table(TITLE, COLUMNS, [r.cells() for r in rows], None)
    for rule in RULES:
        console.print(f"  {rule}", markup=False, highlight=False, soft_wrap=True)
    _say_notes(found)
    _note_missing_keys(models)

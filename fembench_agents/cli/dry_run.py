"""`run --dry-run` and `compare --dry-run`: the grid, the most model calls it
can make, its tokens and dollars (`runs/estimate.py`), with no model call and
no sandbox job; and the spend cap's refusal of unpriced models."""

from __future__ import annotations

from collections.abc import Sequence

import typer
from rich.table import Table

from fembench_agents.cli.app import console, err, fail_unavailable, problem_paths, say_skipped
from fembench_agents.kinds.contract import ProblemsUnavailable
from fembench_agents.runs.grid import PlannedRun, grid_tracks


def show_dry_run(runs: Sequence[PlannedRun], tasks_path: str, cases_path: str) -> None:
    """Print the estimate table and its rule; exit 2 on a model no provider serves
    or problems that cannot be read. A missing key is only noted: nothing is called."""
    from fembench_agents.agents import make_agent
    from fembench_agents.models.credentials import missing_key_advice, missing_keys, unknown_model
    from fembench_agents.runs.problems import preview_problems

    models = list(dict.fromkeys(r.config.model for r in runs))
    unknown = [u for r in runs if (u := unknown_model(r.config.model, r.config.params.api_base))]
    for line in dict.fromkeys(unknown):
        err.print(f"error: {line}", markup=False, highlight=False, soft_wrap=True)
    if unknown:
        raise typer.Exit(2)
    try:
        found = preview_problems(grid_tracks(runs), problem_paths(tasks_path, cases_path))
    except ProblemsUnavailable as exc:
        fail_unavailable(exc)
    for skip in found.skipped:
        say_skipped(skip)
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
    table = Table(title="dry run: no model call, no sandbox job")
    for i, column in enumerate(COLUMNS):
        table.add_column(column, justify="right" if i >= 3 else "left")
    for row in rows:
        table.add_row(*row.cells())
    table.add_row(*total_row(rows), style="bold")
    console.print(table)
    for rule in RULES:
        console.print(f"  {rule}", markup=False, highlight=False, soft_wrap=True)
    for model in models:
        missing = missing_keys(model) if not any(r.config.params.api_base for r in runs) else []
        if missing:
            console.print(f"note: model {model!r} {missing_key_advice(missing)}", markup=False, highlight=False)


def refuse_unpriced(runs: Sequence[PlannedRun]) -> None:
    """`--max-cost` cannot cap what has no price: exit 2 naming each such model."""
    from fembench_agents.models import model_prices  # lazy: litellm's import

    unpriced = [m for m in dict.fromkeys(r.config.model for r in runs) if model_prices(m) is None]
    for model in unpriced:
        err.print(
            f"error: --max-cost cannot cap model {model!r}: litellm has no price for it, so its calls "
            "would count $0; run it without --max-cost",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    if unpriced:
        raise typer.Exit(2)

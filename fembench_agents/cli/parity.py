"""`parity`: every agent on every task kind with an oracle model; each cell must be 100%."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from fembench_agents.cli.app import (
    DEFAULT_CASES,
    DEFAULT_TASKS,
    AllowWeakOpt,
    app,
    console,
    err,
    open_sandbox,
    problem_paths,
    say_done,
)
from fembench_agents.kinds.contract import ProblemsUnavailable, ScoringOptions


@app.command("parity")
def parity(
    agents: Annotated[str | None, typer.Option(help="comma-separated agent specs [default: every agent kind]")] = None,
    tracks: Annotated[
        str | None, typer.Option(help="comma-separated tracks [default: every registered track available here]")
    ] = None,
    sample: Annotated[int, typer.Option(min=1, help="problems per track (the first by id)")] = 2,
    tasks_path: Annotated[str, typer.Option("--tasks-path")] = DEFAULT_TASKS,
    cases_path: Annotated[str, typer.Option("--cases-path")] = DEFAULT_CASES,
    out: Annotated[Path, typer.Option(help="where the oracle's runs go")] = Path("runs/parity"),
    allow_weak_isolation: AllowWeakOpt = False,
) -> None:
    """Harness parity: every agent with an oracle model on every track; each cell must be 100%.

    The oracle answers each problem's reference in the form each agent expects; a cell below
    100% is a harness fault, named with its stage and reason."""
    from fembench_agents.kinds import tracks as registered
    from fembench_agents.parity import AGENTS, parity_cell
    from fembench_agents.parity import sample as first
    from fembench_agents.runs.problems import load_problems, prepare_selected

    specs = [a.strip() for a in agents.split(",")] if agents else list(AGENTS)
    wanted = [t.strip() for t in tracks.split(",")] if tracks else list(registered())
    unknown = [t for t in wanted if t not in registered()]
    if unknown:
        err.print(f"error: unknown track(s) {unknown}; expected some of {list(registered())}", markup=False)
        raise typer.Exit(2)
    with open_sandbox(allow_weak_isolation, tracks=wanted) as sandbox:
        problems, evaluators, unavailable = {}, {}, {}
        for track in wanted:
            paths = problem_paths(tasks_path, cases_path)
            try:
                sets = load_problems([track], sandbox, paths, ScoringOptions(prepared_later=True))
                chosen = first(sets.by_track[track], sample)
                prepare_selected(sets, paths, [(track, ",".join(p.task_id for p in chosen))], say_done)
            except ProblemsUnavailable as exc:
                unavailable[track] = str(exc).splitlines()[0]
                continue
            problems[track], evaluators[track] = chosen, sets.evaluator
        cells = []
        for spec in specs:
            for track in problems:
                cell = asyncio.run(parity_cell(spec, track, problems[track], evaluators[track], out))
                cells.append(cell)
                err.print(f"{spec} on {track}: {cell.passed}/{cell.total}", markup=False, highlight=False)
        for evaluator in evaluators.values():
            evaluator.close()
    table = Table(title=f"Harness parity: share of oracle episodes passed ({sample} per track)")
    table.add_column("Agent", no_wrap=True)
    for track in problems:
        table.add_column(track)
    for spec in specs:
        row = [c for c in cells if c.agent == spec]
        table.add_row(spec, *(f"{c.share:.0%} ({c.passed}/{c.total})" for c in row))
    console.print(table)
    for track, why in unavailable.items():
        err.print(f"{track}: not run here: {why}", markup=False, highlight=False, soft_wrap=True)
    faults = [f"{c.agent} on {c.track}: {f}" for c in cells for f in c.faults]
    for fault in faults:
        err.print(f"harness fault: {fault}", markup=False, highlight=False, soft_wrap=True)
    if faults:
        raise typer.Exit(1)

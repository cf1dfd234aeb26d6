"""`report`: tables, intervals, paired tests and plots of finished runs (also
after `run` and `compare`), the threshold sensitivity of PDE runs, and an
optimization's held-out judgement."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from fembench_agents.cli.app import app, console, err


def show_report(run_dirs: list[Path], out: Path | None, full: bool = False) -> None:
    """The terminal's tables (the short set unless `full`), isolation warnings, and one
    line saying where everything else is; report.md under `out` holds every table."""
    from fembench_agents.report import build_report, isolation_warnings, write_report
    from fembench_agents.report.kind_parts import kind_notes
    from fembench_agents.report.terminal import pointer, terminal_tables

    report = build_report(run_dirs)
    for table in terminal_tables(report, console.width, full=full):
        console.print(table)
    for note in kind_notes(report):
        console.print(note, markup=False, highlight=False)
    for warning in isolation_warnings(report):
        err.print(f"[yellow]warning:[/yellow] {warning}", markup=True, highlight=False)
    written = None
    if out is not None:
        written = str(write_report(report, out)["markdown"])
    err.print(pointer([str(r) for r in run_dirs], full, written), markup=False, highlight=False, soft_wrap=True)


@app.command("report")
def report(
    runs: Annotated[list[Path], typer.Argument(help="run directories, or a directory `compare` wrote them into")],
    out: Annotated[
        Path | None, typer.Option(help="write report.md, report.json, tables/ (Markdown, CSV, JSON) and plots here")
    ] = None,
    sensitivity: Annotated[
        bool, typer.Option(help="PDE pass rates recomputed over a grid of alpha_acc and alpha_time (no solver runs)")
    ] = False,
    full: Annotated[
        bool, typer.Option("--full", help="every table (default: summary, per-task tables, paired tests)")
    ] = False,
) -> None:
    """Tables, confidence intervals, paired tests and plots for finished runs."""
    from fembench_agents.runs.reader import expand_run_dirs

    runs = [_heldout_judgement(r) for r in runs]
    runs = expand_run_dirs(runs)
    for r in runs:
        if not (r / "manifest.json").exists():
            err.print(f"[red]error:[/red] {r} is not a run directory (no manifest.json)")
            raise typer.Exit(2)
    if sensitivity:
        _show_sensitivity(runs, out)
        return
    show_report(runs, out, full=full)


def _show_sensitivity(runs: list[Path], out: Path | None) -> None:
    from fembench_agents.cases.sensitivity import curves, plot

    found = curves(runs)
    if not found:
        err.print("[red]error:[/red] no scored PDE case attempts in these runs")
        raise typer.Exit(2)
    for c in found:
        rates = "  ".join(f"{a:g}:{r:.2f}" for a, r in zip(c.alphas, c.pass_rates, strict=True))
        console.print(f"{c.model} / {c.agent} / {c.library} (n={c.attempts}) pass rate by {c.varied}: {rates}")
    if out is not None:
        paths = plot(found, out)
        (out / "sensitivity.json").write_text(json.dumps([c.model_dump() for c in found], indent=1) + "\n")
        err.print(f"sensitivity plot written to {', '.join(str(p) for p in paths)}")


def _heldout_judgement(path: Path) -> Path:
    """An optimization's directory stands for its held-out judgement: its
    table is printed and its two run directories are reported."""
    from fembench_agents.optimize.judgement import JUDGEMENT_JSON, HeldoutJudgement

    if not (path / JUDGEMENT_JSON).is_file():
        return path
    from fembench_agents.cli.optimize import show_judgement

    show_judgement(HeldoutJudgement.model_validate_json((path / JUDGEMENT_JSON).read_text()), path)
    return path / "heldout"

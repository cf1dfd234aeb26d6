"""`report`: tables, intervals, paired tests and plots of finished runs (also
after `run` and `compare`), the threshold sensitivity of PDE runs, and an
optimization's held-out judgement."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fembench_agents.cli.app import SkipBadLinesOpt, app, bad_input, console, err, fail, open_runs
from fembench_agents.errors import BadInput

if TYPE_CHECKING:
    from fembench_agents.runs.reader import RunRecords


def show_report(run_dirs: Sequence[Path | RunRecords], out: Path | None, full: bool = False) -> None:
    """The terminal's tables (the short set unless `full`) of runs (directories, or runs
    already read), isolation warnings, and one line saying where everything else is;
    report.md under `out` holds every table."""
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
    paths = [str(r if isinstance(r, Path) else r.path) for r in run_dirs]
    err.print(pointer(paths, full, written), markup=False, highlight=False, soft_wrap=True)


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
    contamination: Annotated[
        bool,
        typer.Option(help="only published beside fresh instances of the same strata: rates, paired difference, plot"),
    ] = False,
    skip_bad_lines: SkipBadLinesOpt = False,
) -> None:
    """Tables, confidence intervals, paired tests and plots for finished runs."""
    from fembench_agents.runs.reader import expand_run_dirs

    runs = [_heldout_judgement(r) for r in runs]
    runs = expand_run_dirs(runs)
    for r in runs:
        if not (r / "manifest.json").exists():
            bad_input(BadInput(f"{r} is not a run directory (no manifest.json)"))
    opened = open_runs(runs, skip_bad_lines)  # a damaged log is named before any table
    if sensitivity:
        if any(r.skipped for r in opened):  # its curves read each log whole (cases.sensitivity)
            fail("--sensitivity reads every line of a log and cannot skip bad ones; without it, report can")
        _show_sensitivity(runs, out)
        return
    if contamination:
        _show_contamination(opened, out)
        return
    show_report(opened, out, full=full)


def _show_contamination(runs: Sequence[RunRecords], out: Path | None) -> None:
    """The published-against-fresh tables (report/contamination.py); with `out`, the whole report there."""
    from fembench_agents.report import build_report, write_report
    from fembench_agents.report.contamination_view import contamination_sections
    from fembench_agents.report.terminal import table

    report = build_report(runs)
    sections = contamination_sections(report)
    if not sections:
        fail("no fresh instances in these runs: name some in the selection (`fresh:...`, docs/fresh_instances.md)")
    for section in sections:
        console.print(table(section.title, section.rows))
    if out is not None:
        written = write_report(report, out)
        err.print(f"written to {written['markdown']} (plot: {out / 'plots' / 'contamination.png'})")


def _show_sensitivity(runs: list[Path], out: Path | None) -> None:
    from fembench_agents.cases.sensitivity import curves, plot

    found = curves(runs)
    if not found:
        fail("no scored PDE case attempts in these runs")
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
    from pydantic import ValidationError

    from fembench_agents.cli.optimize import show_judgement
    from fembench_agents.errors import first_error, read_text_file

    file = path / JUDGEMENT_JSON
    try:
        judgement = HeldoutJudgement.model_validate_json(read_text_file(str(file), "held-out judgement"))
    except ValidationError as exc:
        bad_input(BadInput(f"{file}: not a held-out judgement: {first_error(exc)}"))
    show_judgement(judgement, path)
    return path / "heldout"

"""`cases list/show/build/calibrate/validate`: the PDE cases (docs/pde_cases.md)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from fembench_agents.cases import coverage, store, timing
from fembench_agents.cases.model import CaseFile
from fembench_agents.cases.tracks import TRACKS, TrackUnavailable
from fembench_agents.cli.app import app
from fembench_agents.kinds import kind_for, tracks
from fembench_agents.kinds.review import ValidationOptions
from fembench_agents.runs.defaults import DEFAULT_LIBRARY

cases_app = typer.Typer(no_args_is_help=True, add_completion=False, help="Browse, build and check the PDE cases.")
app.add_typer(cases_app, name="cases")
console = Console(width=160)
CasesDir = Annotated[Path, typer.Option("--cases", help="the cases folder")]
DEFAULT = Path(os.environ.get("FEMBENCH_CASES", "cases"))


def _fail(msg: str) -> None:
    typer.echo(f"error: {msg}", err=True)
    raise typer.Exit(2)


@cases_app.command("list")
def list_cases(
    cases: CasesDir = DEFAULT,
    family: Annotated[str | None, typer.Option(help="only this family, e.g. poisson")] = None,
    library: Annotated[str | None, typer.Option(help="only cases offered on this library track")] = None,
) -> None:
    """The cases (id, family, domain, grid, libraries) and which library tracks are available."""
    try:
        defs = store.load_definitions(cases)
    except store.CaseStoreError as exc:
        _fail(str(exc))
    if library is not None and not _is_library(library):
        _fail(f"unknown library track {library!r}; known: {', '.join(sorted(_library_tracks()))}")
    chosen = [d for d in defs if (family is None or d.family == family) and (library is None or library in d.libraries)]
    table = Table("id", "family", "domain", "grid", "libraries")
    for d in chosen:
        table.add_row(d.id, d.family, d.domain, "x".join(map(str, reversed(d.grid.shape))), ", ".join(d.libraries))
    console.print(table)
    console.print(f"{len(chosen)} of {len(defs)} cases")
    _coverage(chosen)
    for name, track in sorted(TRACKS.items()):
        if library is None or name == library:
            ok, why = track.available()
            gaps = f"; no calibration solver for {', '.join(track.unsupported_families)}" * bool(
                track.unsupported_families
            )
            console.print(f"track {name}: {'available' if ok else 'unavailable (' + why + ')'}{gaps}")


def _library_tracks() -> list[str]:
    """The registered tracks of the PDE kind (the function tracks are registered too, and offer no case)."""
    from fembench_agents.cases.kind import LIBRARY_KINDS  # here: the registry loads it on first use anyway

    return [track for track in tracks() if kind_for(track) in LIBRARY_KINDS]


def _is_library(track: str) -> bool:
    return track in _library_tracks()


def _coverage(chosen: list[CaseFile]) -> None:
    legend = coverage.letters(list(TRACKS))
    table = Table(
        "family", *coverage.COLUMNS, "cases", title="cases per family x domain, with the library tracks offering them"
    )
    for row in coverage.matrix(chosen, list(TRACKS)):
        table.add_row(*row)
    console.print(table)
    extra = Table(
        "family",
        *coverage.VARIANTS,
        "cases",
        title="cases with natural or periodic pieces or a transient variant, per family",
    )
    for row in coverage.variants(chosen, list(TRACKS)):
        extra.add_row(*row)
    if extra.rows:
        console.print(extra)
    console.print(
        "libraries: "
        + ", ".join(f"{letter} = {lib}" for lib, letter in legend.items())
        + " (lower case: some cases only)"
    )


@cases_app.command("show")
def show(case_id: str, cases: CasesDir = DEFAULT) -> None:
    """The agent-visible case_spec of one case (never the evaluator-only half)."""
    try:
        specs = {s.id: s for s in store.load_specs(cases)}
    except store.CaseStoreError as exc:
        _fail(str(exc))
    if case_id not in specs:
        _fail(f"unknown case {case_id!r}; see `cases list`")
    typer.echo(json.dumps(json.loads(specs[case_id].model_dump_json()), indent=1, sort_keys=True))


@cases_app.command("build")
def build(
    cases: CasesDir = DEFAULT,
    only: Annotated[list[str] | None, typer.Option("--only", help="build only these ids")] = None,
    force: Annotated[bool, typer.Option("--force", help="rebuild cases whose definition did not change too")] = False,
) -> None:
    """Derive every case's spec, reference and calibration error; rewrite the records (reproducibly).
    A case is rebuilt only when its definition file or the builder version changed, unless --force."""
    from fembench_agents.cases.builder import build_all
    from fembench_agents.cases.manufactured import CaseDefinitionError

    try:
        reused: list[str] = []
        built = build_all(cases, only, force, lambda case_id, old: reused.append(case_id) if old else None)
    except (store.CaseStoreError, CaseDefinitionError, TrackUnavailable, ValueError) as exc:
        _fail(str(exc))
    typer.echo(f"built {len(built) - len(reused)} cases, {len(reused)} unchanged, into {cases}")


@cases_app.command("calibrate")
def calibrate(
    cases: CasesDir = DEFAULT,
    repeats: Annotated[int, typer.Option(min=1, help="timed sandbox jobs per solve (median)")] = 5,
    machine: Annotated[str | None, typer.Option(help="name of this machine's file")] = None,
    only: Annotated[
        list[str] | None, typer.Option("--only", help="time only these ids (the file keeps the other times)")
    ] = None,
    library: Annotated[
        list[str] | None, typer.Option("--library", help="time only these tracks (the file keeps the other times)")
    ] = None,
) -> None:
    """Time our calibration solvers on this machine, in the sandbox as attempts are timed: t_base per case and library."""
    from fembench_agents.cases.calibrate import CalibrationFailed, calibrate_pairs, each_case_library
    from fembench_agents.cases.problem import load_cases

    try:
        chosen = [c for c in load_cases(cases) if not only or c.task_id in only]
    except store.CaseStoreError as exc:
        _fail(str(exc))
    pairs = list(each_case_library(chosen, library, lambda lib, why: typer.echo(f"skip {lib}: {why}", err=True)))
    try:  # a whole calibration replaces the machine's file; --only or --library update it
        cal, kept = calibrate_pairs(cases, pairs, repeats, machine, merge=bool(only or library))
    except CalibrationFailed as exc:
        _fail(str(exc))
    if kept:
        typer.echo(kept, err=True)
    path = timing.path_for(cases, cal.machine)
    typer.echo(f"calibration {cal.calibration_id} for {sum(map(len, cal.t_base.values()))} solves written to {path}")


@cases_app.command("validate")
def validate(
    cases: CasesDir = DEFAULT,
    rebuild: Annotated[
        bool, typer.Option(help="also rebuild and compare (the same record up to the last bits of floating point)")
    ] = True,
    calibration: Annotated[
        bool, typer.Option(help="also score our calibration solvers through the sandbox against their own gates")
    ] = True,
) -> None:
    """Check the records: leak test, reproducibility, coverage, and our calibration solvers against their own gates."""
    checks = ValidationOptions(rebuild=rebuild, calibration=calibration)
    found = kind_for(DEFAULT_LIBRARY).validator.validate(str(cases), checks, _Notes())
    for p in found.problems:
        typer.echo(f"problem: {p.message}", err=True)
    if found.problems:
        raise typer.Exit(1)
    typer.echo(found.summary)


class _Notes:
    """`ValidationProgress` for `cases validate`: no bar; what is not checked goes to stderr."""

    def start(self, total: int) -> None:
        pass

    def advance(self) -> None:
        pass

    def note(self, line: str) -> None:
        typer.echo(line, err=True)

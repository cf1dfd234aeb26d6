"""`fembench-agents cases generate`: fresh, never-published cases drawn from a
family's space with a seed (docs/fresh_instances.md), written to a folder of
their own (default cases/fresh, gitignored) that `cases validate --cases` checks."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fembench_agents.cli.cases import cases_app


@cases_app.command("generate")
def generate(
    family: Annotated[str | None, typer.Option(help="the family, e.g. poisson")] = None,
    seed: Annotated[int, typer.Option(min=0, help="the seed: the same seed draws the same cases")] = 0,
    count: Annotated[int, typer.Option(min=1, help="how many cases")] = 1,
    domain: Annotated[
        str | None,
        typer.Option(help="one domain kind for every case, its size and placement drawn (default: drawn per case)"),
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="the folder the cases go to")] = Path("cases/fresh"),
    library: Annotated[
        list[str] | None,
        typer.Option(
            "--library", help="calibrate on these tracks (default: every track whose calibration solves the case)"
        ),
    ] = None,
    case_id: Annotated[
        str | None, typer.Option("--id", help="draw again the one case this fresh id names (instead of --family)")
    ] = None,
) -> None:
    """Draw fresh cases (seeded), check them as built cases are checked, redraw refused draws, and report."""
    from fembench_agents.cases.generate.draw import DEFAULT_LIBRARIES, GenerationError
    from fembench_agents.cases.generate.manifest import FreshRecord
    from fembench_agents.cases.generate.output import Request, redraw_summary, regenerate
    from fembench_agents.cases.generate.output import generate as draw_cases
    from fembench_agents.cases.tracks import TrackUnavailable

    libraries = tuple(library) if library else DEFAULT_LIBRARIES

    def said(record: FreshRecord) -> None:
        refused = f", {len(record.redraws)} draws refused" if record.redraws else ""
        on = ", ".join(record.libraries)
        typer.echo(f"{record.id}: {record.domain}, draw {record.draw}, calibrated on {on}{refused}")

    try:
        if case_id is not None:
            records = [regenerate(case_id, out, libraries)]
            said(records[0])
        elif family is None:
            raise GenerationError("name a family (--family) or a fresh case id (--id)")
        else:
            records = draw_cases(Request(family, seed, count, domain, libraries), out, progress=said)
    except (GenerationError, TrackUnavailable) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    for rec in records:
        for r in rec.redraws:
            typer.echo(f"  {rec.id} draw {r.draw} refused by {r.check}: {r.reason}", err=True)
    typer.echo(f"generated {len(records)} cases into {out}; {redraw_summary(records)}")

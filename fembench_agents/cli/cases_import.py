"""`fembench-agents cases import PATH`: the published PDEAgent-Bench records as
cases of the DOLFINx track (fembench_agents/cases/published.py), written to a
folder of their own (default cases/imported, gitignored)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from fembench_agents.cli.cases import cases_app
from fembench_agents.errors import read_text_file


@cases_app.command("import")
def import_published(
    path: Annotated[Path, typer.Argument(help="benchmark_v2.jsonl of the published benchmark")],
    out: Annotated[Path, typer.Option("--out", help="the folder the imported cases go to")] = Path("cases/imported"),
    only: Annotated[list[str] | None, typer.Option("--only", help="import only these ids")] = None,
    workers: Annotated[
        int,
        typer.Option("--workers", min=0, help="worker processes building records side by side (0: in this process)"),
    ] = 2,
) -> None:
    """Turn published records into leak-free cases of the dolfinx track and report the counts."""
    from fembench_agents.cases import published, published_domains, published_import
    from fembench_agents.cases.tracks import get_track

    ok, why = get_track(published.LIBRARY).available()
    if not ok:
        typer.echo(f"error: the dolfinx track is unavailable: {why}", err=True)
        raise typer.Exit(2)
    if not path.is_file():
        typer.echo(f"error: no file {path}", err=True)
        raise typer.Exit(2)
    built, views, report = published_import.import_records(
        read_text_file(str(path), "published records file").splitlines(), set(only) if only else None, workers
    )
    published_import.write(out, built, views, report)
    summary = report.as_dict()
    marked = summary["marked_leaking"]
    typer.echo(
        f"read {summary['read']} records: imported {summary['imported']} ({summary['leak_free']} leak-free, "
        f"{len(marked)} marked as leaking; {len(summary['numerical_references'])} with a numerical reference), "
        f"excluded {summary['excluded']}"
    )
    for case_id, why in marked.items():
        typer.echo(f"  marked as leaking, selected only by its id: {case_id}: {why}")
    for reason, count in summary["excluded_by_reason"].items():
        typer.echo(f"  excluded, {reason}: {count}")
        if reason == published_domains.DOMAIN_REASON.split(":")[0]:
            for what, n in summary["excluded_domains"].items():
                typer.echo(f"    {what}: {n}")
    decisions = summary["decisions"]
    typer.echo(
        "  decision: legacy `tolerance` ignored by our gates (alpha_acc 10; `score --gates published` applies it): "
        f"{decisions['legacy_tolerance_ignored']}"
    )
    nested = decisions["evaluation_config_read_from_oracle_config"]
    typer.echo(f"  decision: evaluation_config read from inside oracle_config: {len(nested)} {json.dumps(nested)}")
    typer.echo(
        f"  decision: thresholds removed from the case_spec: {decisions['thresholds_removed_from_the_case_spec']}"
    )
    derived = decisions["forcing_derived_from_the_solution"]
    typer.echo(
        f"  decision: forcing derived from the manufactured solution, as the published oracle solves "
        f"(3D records stating another): {len(derived)} {json.dumps(derived)}"
    )
    typer.echo(f"written to {out} (report: {out / published_import.REPORT_FILE}); next: cases calibrate --cases {out}")

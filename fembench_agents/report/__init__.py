"""Comparison reports over run directories: per-task tables, pass@k and
k-of-n, joint test success, stage-failure breakdowns, tokens, cost and time,
with bootstrap confidence intervals and exact paired tests between agents.

    report = build_report(["runs/a", "runs/b"])
    write_report(report, "reports/ab")   # report.json, report.md, plots/*.png|svg, tables/*.md|csv|json
"""

from __future__ import annotations

from pathlib import Path

from fembench_agents.report.export import TABLES_DIR, write_tables
from fembench_agents.report.plots import write_plots
from fembench_agents.report.render import isolation_warnings, render_markdown, rich_tables
from fembench_agents.report.schema import (
    Estimate,
    GroupSummary,
    PairedTest,
    Report,
    ReportSettings,
    RunInfo,
    TaskCell,
    TaskRow,
    TaskTable,
)
from fembench_agents.report.tables import build_report

JSON_NAME = "report.json"
MARKDOWN_NAME = "report.md"
PLOTS_DIR = "plots"


def write_report(report: Report, out_dir: str | Path) -> dict[str, Path]:
    """`report.json`, `report.md` (linking the plots), `plots/*.png` with
    their SVG twins and `tables/*` (each table as Markdown, CSV and JSON) in
    `out_dir`; returns the report files and the PNG plots, by name."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plots = write_plots(report, out / PLOTS_DIR)
    write_tables(report, out / TABLES_DIR)
    json_path, md_path = out / JSON_NAME, out / MARKDOWN_NAME
    json_path.write_text(report.model_dump_json(indent=1), encoding="utf-8")
    md_path.write_text(
        render_markdown(report, {c: p.relative_to(out).as_posix() for c, p in plots.items()}), encoding="utf-8"
    )
    return {"json": json_path, "markdown": md_path, **{p.stem: p for p in plots.values()}}


__all__ = [
    "Estimate",
    "GroupSummary",
    "PairedTest",
    "Report",
    "ReportSettings",
    "RunInfo",
    "TaskCell",
    "TaskRow",
    "TaskTable",
    "build_report",
    "isolation_warnings",
    "render_markdown",
    "rich_tables",
    "write_report",
]

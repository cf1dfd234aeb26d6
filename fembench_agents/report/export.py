"""A report on disk: `report.json`, `report.md` linking the plots, and every
table as its own Markdown, CSV and JSON file, so that a paper's table can be
pasted, loaded in a spreadsheet or read by a script."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from fembench_agents.report.contamination_view import contamination_sections
from fembench_agents.report.kind_parts import ReportSection, Rows, kind_sections
from fembench_agents.report.plots import write_plots
from fembench_agents.report.render import (
    cost_rows,
    md_table,
    paired_rows,
    reason_rows,
    render_markdown,
    scaling_rows,
    stage_rows,
    summary_rows,
    task_rows,
    task_table_title,
)
from fembench_agents.report.schema import Report

TABLES_DIR = "tables"
JSON_NAME = "report.json"
MARKDOWN_NAME = "report.md"
PLOTS_DIR = "plots"


def all_sections(report: Report) -> list[ReportSection]:
    """Every table the report has, in the order the Markdown report shows them."""
    if not report.groups:
        return []
    own = kind_sections(report)
    out = [ReportSection("summary", "Summary", summary_rows(report)), ReportSection("cost", "Cost", cost_rows(report))]
    if any(g.oracle is not None for g in report.groups):
        out.append(ReportSection("test_time_scaling", "Test-time scaling", scaling_rows(report)))
    out += contamination_sections(report)
    out += [s for s in own if not s.after_tasks]
    for t in report.task_tables:
        stem = "tasks_" + "".join(ch if ch.isalnum() else "_" for ch in f"{t.model}_{t.track}")
        out.append(ReportSection(stem, task_table_title(t), task_rows(t)))
    out += [s for s in own if s.after_tasks]
    out.append(ReportSection("stage_failures", "Stage failures", stage_rows(report)))
    if any(g.failure_reasons for g in report.groups):
        out.append(ReportSection("failure_reasons", "Failure reasons", reason_rows(report)))
    if report.paired:
        out.append(ReportSection("paired_tests", "Paired tests", paired_rows(report)))
    return out


def report_sections(report: Report) -> list[tuple[str, str, Rows]]:
    """(file stem, title, rows) of every table the report has, in the order
    the Markdown report shows them."""
    return [(s.stem, s.title, s.rows) for s in all_sections(report)]


def write_tables(report: Report, out_dir: str | Path) -> dict[str, Path]:
    """`<stem>.md`, `<stem>.csv` and `<stem>.json` (a list of objects keyed by
    column header) per table; returns "<stem>.<ext>" -> path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for stem, title, (headers, rows) in report_sections(report):
        md = out / f"{stem}.md"
        md.write_text("\n".join([f"# {title}", "", *md_table(headers, rows)]), encoding="utf-8")
        path = out / f"{stem}.csv"
        with open(path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(headers)
            writer.writerows(rows)
        js = out / f"{stem}.json"
        payload = {"title": title, "rows": [dict(zip(headers, r, strict=True)) for r in rows]}
        js.write_text(json.dumps(payload, indent=1), encoding="utf-8")
        written.update({md.name: md, path.name: path, js.name: js})
    return written


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

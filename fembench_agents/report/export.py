"""Every table of a report as its own Markdown, CSV and JSON file, so that a
paper's table can be pasted, loaded in a spreadsheet or read by a script."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from fembench_agents.report.paper_render import Rows, paper_sections
from fembench_agents.report.render import (
    case_rows,
    md_table,
    paired_rows,
    reason_rows,
    stage_rows,
    summary_rows,
    task_rows,
)
from fembench_agents.report.schema import Report

TABLES_DIR = "tables"


def report_sections(report: Report) -> list[tuple[str, str, Rows]]:
    """(file stem, title, rows) of every table the report has, in the order
    the Markdown report shows them."""
    if not report.groups:
        return []
    out: list[tuple[str, str, Rows]] = [("summary", "Summary", summary_rows(report))]
    out += paper_sections(report)
    for t in report.task_tables:
        stem = "tasks_" + "".join(ch if ch.isalnum() else "_" for ch in f"{t.model}_{t.track}")
        out.append((stem, f"Per task: {t.model}, {t.track} track", task_rows(t)))
    if report.case_stages:
        out.append(("case_stages", "PDE cases: per stage", case_rows(report)))
    out.append(("stage_failures", "Stage failures", stage_rows(report)))
    if any(g.failure_reasons for g in report.groups):
        out.append(("failure_reasons", "Failure reasons", reason_rows(report)))
    if report.paired:
        out.append(("paired_tests", "Paired tests", paired_rows(report)))
    return out


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

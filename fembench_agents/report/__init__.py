"""Comparison reports over run directories: per-task tables, pass@k and
k-of-n, joint test success, stage-failure breakdowns, tokens, cost and time,
with bootstrap confidence intervals and exact paired tests between agents.

    report = build_report(["runs/a", "runs/b"])
    write_report(report, "reports/ab")   # report.json, report.md, plots/*.png|svg, tables/*.md|csv|json

The names below load on first use: a kind's report part imports the report's
schema when the registry loads, and must not bring scipy and matplotlib with it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fembench_agents.report.export import JSON_NAME, MARKDOWN_NAME, PLOTS_DIR, write_report
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

_MODULE_OF = {
    "JSON_NAME": "export",
    "MARKDOWN_NAME": "export",
    "PLOTS_DIR": "export",
    "write_report": "export",
    "isolation_warnings": "render",
    "render_markdown": "render",
    "rich_tables": "render",
    "build_report": "tables",
    **dict.fromkeys(
        (
            "Estimate",
            "GroupSummary",
            "PairedTest",
            "Report",
            "ReportSettings",
            "RunInfo",
            "TaskCell",
            "TaskRow",
            "TaskTable",
        ),
        "schema",
    ),
}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "JSON_NAME",
    "MARKDOWN_NAME",
    "PLOTS_DIR",
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

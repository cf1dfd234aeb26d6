"""Rows of the paper-style tables and of the test-track aggregates, as text cells:
the Markdown, terminal, CSV and JSON exports all read these."""

from __future__ import annotations

import statistics

from fembench_agents.report.kind_parts import Rows
from fembench_agents.report.schema import PaperCell, PaperTable, Report


def _rate(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _yes(flag: bool) -> str:
    return "Y" if flag else "N"


def _n(table: PaperTable, col: str) -> int:
    return max((r.cells[col].repeats for r in table.rows if col in r.cells), default=0)


def paper_rows(table: PaperTable) -> Rows:
    """Code track: "any of n" and "n of n" side by side per column, and a
    total row counting the tasks; tests track: the mean joint score per task."""
    headers = ["Domain", "Tier", "Task"]
    if table.track == "code":
        for col in table.columns:
            n = _n(table, col)
            headers += [f"{col}: any of {n}", f"{col}: {n} of {n}"]
    else:
        headers += [f"{col}: joint" for col in table.columns]
    body = []
    for r in table.rows:
        cells: list[str] = [r.info.domain, r.info.tier, r.task_id]
        for col in table.columns:
            c: PaperCell | None = r.cells.get(col)
            if table.track == "code":
                cells += ["-", "-"] if c is None else [_yes(c.best_of_n), _yes(c.n_of_n)]
            else:
                cells.append("-" if c is None else f"{c.score:.2f}")
        body.append(cells)
    total: list[str] = ["", "", f"Total ({len(table.rows)} tasks)"]
    for col in table.columns:
        present = [r.cells[col] for r in table.rows if col in r.cells]
        if table.track == "code":
            total += [str(sum(c.best_of_n for c in present)), str(sum(c.n_of_n for c in present))]
        else:
            total.append(f"{statistics.fmean(c.score for c in present):.2f}" if present else "-")
    return headers, [*body, total]


def test_metric_rows(report: Report) -> Rows:
    headers = ["Model", "Agent", "Function correctness", "Tests pass reference", "Failures detected", "Joint success"]
    body = [
        [
            m.model,
            m.agent,
            _rate(m.function_correctness),
            _rate(m.reference_pass),
            _rate(m.failures_detected),
            _rate(m.joint_success),
        ]
        for m in report.test_metrics
    ]
    return headers, body


def breakdown_rows(report: Report, by: str) -> Rows:
    headers = ["Model", "Agent", "Track", by.capitalize(), "Tasks", "Episodes", "Correct", "Best of n", "n of n"]
    body = [
        [
            b.model,
            b.agent,
            b.track,
            b.value,
            str(b.tasks),
            str(b.episodes),
            f"{b.correct:.3f}",
            f"{b.best_of_n}/{b.tasks}",
            f"{b.n_of_n}/{b.tasks}",
        ]
        for b in report.breakdowns
        if b.by == by
    ]
    return headers, body


def diagnostic_rows(report: Report) -> Rows:
    threshold = f"{report.settings.near_miss_error:g}"
    headers = [
        "Model",
        "Agent",
        "Attempts",
        "Executable",
        "Wrong but executable",
        "Median error (wrong)",
        f"Near misses (error <= {threshold})",
    ]
    body = [
        [
            d.model,
            d.agent,
            str(d.attempts),
            f"{d.executable} ({_rate(d.executable_share)})",
            str(d.wrong_executable),
            "-" if d.median_error is None else f"{d.median_error:.2e}",
            f"{d.near_misses} ({_rate(d.near_miss_share)})",
        ]
        for d in report.diagnostics
    ]
    return headers, body

"""What the terminal shows of a `Report`: by default the summary, the per-task
tables and the paired tests, then one line naming where the rest is
(report.md and the viewer keep everything); `--full` prints every table. Either
way a table with nothing to show is left out, and the summary drops columns,
never cuts a name, to fit the terminal's width."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from fembench_agents.report.contamination_view import contamination_sections
from fembench_agents.report.kind_parts import Rows, kind_sections
from fembench_agents.report.render import (
    cost_rows,
    paired_rows,
    scaling_rows,
    stage_rows,
    summary_rows,
    task_rows,
    task_table_title,
)
from fembench_agents.report.schema import Report

KEYS = ("Model", "Agent", "Track", "Task")
STACKED = "Model / Agent / Track"
# The summary's columns in the order they go when the terminal is too narrow for all:
# first what report.md and the viewer show better, last what a reader looks for first.
DROPPED_FIRST = (
    "k-of-n",
    "pass@1",
    "Model calls (reused)",
    "Tokens (prompt/completion)",
    "Time (s)",
    "Solved",
    "pass@k",
    "Cost",
)
EMPTY = ("", "-")


def says_something(rows: Rows) -> bool:
    """False for a table without rows, or whose every cell outside its key columns is empty or "-"."""
    headers, body = rows
    values = [i for i, h in enumerate(headers) if h not in (*KEYS, STACKED)]
    return any(r[i] not in EMPTY for r in body for i in values)


def terminal_tables(report: Report, width: int, full: bool = False) -> list[Table]:
    titled: list[tuple[str, Rows]] = [(task_table_title(t), task_rows(t)) for t in report.task_tables]
    if full:
        titled += [("Summary", summary_rows(report)), ("Cost", cost_rows(report))]
        titled.append(("Stage failures", stage_rows(report)))
        own = kind_sections(report)
        ordered = [s for s in own if not s.after_tasks] + [s for s in own if s.after_tasks]
        titled += [(s.terminal_title or s.title, s.rows) for s in ordered if not s.repeats_summary]
    else:
        titled.append(("Summary", fitted(summary_rows(report), width)))
    titled.append(("Test-time scaling (oracle choice: an upper bound)", scaling_rows(report)))
    titled += [(s.title, s.rows) for s in contamination_sections(report)]
    if report.paired:
        titled.append(("Paired tests (exact McNemar, tasks)", paired_rows(report)))
    return [table(title, rows) for title, rows in titled if says_something(rows)]


def fitted(rows: Rows, width: int) -> Rows:
    """The rows without their empty columns, then without the least wanted ones until
    the table fits `width`; names are never cut."""
    headers, body = rows
    keep = [i for i, h in enumerate(headers) if h in KEYS or any(r[i] not in EMPTY for r in body)]
    for name in DROPPED_FIRST:
        if _width(headers, body, keep) <= width:
            break
        keep = [i for i in keep if headers[i] != name]
    headers, body = [headers[i] for i in keep], [[r[i] for i in keep] for r in body]
    if _width(headers, body, range(len(headers))) <= width:
        return headers, body
    # Still too wide (long model or agent names): the names stack in one column, one per line.
    names = [i for i, h in enumerate(headers) if h in KEYS]
    rest = [i for i in range(len(headers)) if i not in names]
    return (
        [STACKED, *(headers[i] for i in rest)],
        [["\n".join(r[i] for i in names), *(r[i] for i in rest)] for r in body],
    )


def table(title: str, rows: Rows) -> Table:
    headers, body = rows
    out = Table(title=title)
    for h in headers:
        # a name is never cut or wrapped: the other columns make room, or go (fitted)
        out.add_column(h, no_wrap=h in (*KEYS, STACKED), overflow="fold")
    for r in body:
        out.add_row(*r)
    return out


def _width(headers: Sequence[str], body: Sequence[Sequence[str]], keep: Sequence[int]) -> int:
    """The width the table needs with no cell wrapped: each column its widest cell plus
    padding and a rule (rich's box: 3 per column, 1 more at the edge)."""

    def cell(text: str) -> int:
        return max(len(line) for line in text.split("\n"))

    widths = [max(cell(headers[i]), *(cell(r[i]) for r in body)) if body else len(headers[i]) for i in keep]
    return sum(widths) + 3 * len(widths) + 1


def pointer(run_dirs: Sequence[str], full: bool, written: str | None) -> str:
    """The line under the tables: where the rest of the report is."""
    runs = " ".join(run_dirs)
    where = (
        f"the full report is in {written}" if written else f"`fembench-agents report {runs} --out DIR` writes report.md"
    )
    more = "" if full else f"; every table: `fembench-agents report {runs} --full`"
    return f"{where}{more}; episodes and attempts: `fembench-agents view {runs}`"

"""The viewer's index: one compact row per episode (what the filters read)
and the report's tables, each cell carrying the filter that lists the
episodes behind it."""

from __future__ import annotations

from typing import Any

from fembench_agents.report.export import report_sections
from fembench_agents.report.paper import task_info
from fembench_agents.report.schema import Report
from fembench_agents.report.tables import failure_stage
from fembench_agents.runs.log import EpisodeRecord

EPISODE_FIELDS = (
    "n",
    "model",
    "agent",
    "track",
    "task",
    "repeat",
    "status",
    "stage",
    "reason",
    "attempts",
    "score",
    "tokens",
    "cost",
    "seconds",
    "run",
    "domain",
    "tier",
    "knowledge",
)
Filter = dict[str, str]
# a header naming the column a row-level filter reads
_ROW_KEYS = {
    "Model": "model",
    "Agent": "agent",
    "Track": "track",
    "Library": "track",
    "Task": "task",
    "Tier": "tier",
    "Knowledge": "knowledge",
    "Domain": "domain",
}


def episode_status(ep: EpisodeRecord) -> str:
    return "error" if ep.status == "error" else ("passed" if ep.passed else "failed")


def episode_row(n: int, run_id: str, ep: EpisodeRecord) -> list[Any]:
    info = task_info(ep.task_id)
    return [
        n,
        ep.model,
        ep.agent,
        ep.track,
        ep.task_id,
        ep.repeat,
        episode_status(ep),
        failure_stage(ep) or "",
        ep.reason or "",
        ep.attempts,
        round(ep.score, 4),
        ep.prompt_tokens + ep.completion_tokens,
        ep.cost_usd,
        round(ep.seconds, 3),
        run_id,
        info.domain,
        info.tier,
        info.knowledge,
    ]


def _split_column(header: str) -> Filter:
    """ "model / agent: any of n" -> model and agent."""
    model, _, agent = header.rsplit(": ", 1)[0].rpartition(" / ")
    return {"model": model, "agent": agent}


def _cell_filter(stem: str, title: str, headers: list[str], row: list[str], j: int, report: Report) -> Filter | None:
    base = {_ROW_KEYS[h]: row[i] for i, h in enumerate(headers) if h in _ROW_KEYS and row[i]}
    if stem == "diagnostics":
        base["track"] = "code"
    if stem.startswith("paper_"):
        base["track"] = stem.removeprefix("paper_")
        if j >= 3:
            base.update(_split_column(headers[j]))
        base.pop("tier", None)
        base.pop("domain", None)
        if base.get("task", "").startswith("Total"):
            base.pop("task")
        return base
    if stem.startswith("tasks_"):
        table = next(t for t in report.task_tables if f"Per task: {t.model}, {t.track} track" == title)
        base.update(model=table.model, track=table.track)
        if j >= 1:
            base["agent"] = headers[j]
        return base
    if stem == "stage_failures" and j >= 4:
        base["stage"] = headers[j]
    if stem == "failure_reasons":
        base["stage"] = row[3].split("/")[0]
    if stem == "paired_tests":
        base.pop("agent", None)
        if headers[j] in ("Agent A", "Agent B"):
            base["agent"] = row[j]
    return base or None


def linked_sections(report: Report) -> list[dict[str, Any]]:
    """Each table as {stem, title, headers, rows, links}; links[i][j] is the
    episode filter behind cell (i, j), or None."""
    out = []
    for stem, title, (headers, rows) in report_sections(report):
        links = [[_cell_filter(stem, title, headers, row, j, report) for j in range(len(row))] for row in rows]
        out.append({"stem": stem, "title": title, "headers": headers, "rows": rows, "links": links})
    return out

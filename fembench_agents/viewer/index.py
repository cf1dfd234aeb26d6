"""The viewer's index: one compact row per episode (what the filters read)
and the report's tables, each cell carrying the filter that lists the
episodes behind it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fembench_agents.report.export import all_sections
from fembench_agents.report.kind_parts import Filter, ReportSection, report_part
from fembench_agents.report.render import task_table_title
from fembench_agents.report.schema import Report
from fembench_agents.report.tables import failure_stage
from fembench_agents.runs.log import EpisodeRecord
from fembench_agents.viewer.compare import ArmKey

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
    info = report_part(ep.track).task_info(ep.task_id)
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


# a paired-test column -> the tasks its comparison link shows: the disagreement
# patterns by which arms solved them ("AB": both, "none": neither), every task, or
# (the columns naming no count) the tasks where the two disagree
_PAIRED_SHOW = {"Tasks": "all", "Both": "AB", "A only": "A", "B only": "B", "Neither": "none"}


def compare_link(arms: Mapping[ArmKey, int], model: str, track: str, agents: tuple[str, str], show: str) -> Filter:
    """The link to the side-by-side comparison of two agents of one model on
    one track (the viewer's page reads "view": "compare" as that page)."""
    ids = ",".join(str(arms[(model, agent)]) for agent in agents)
    return {"view": "compare", "arms": ids, "track": track, "show": show}


def _cell_filter(
    section: ReportSection, row: list[str], j: int, report: Report, arms: Mapping[ArmKey, int]
) -> Filter | None:
    headers, stem, title = section.rows[0], section.stem, section.title
    base = {_ROW_KEYS[h]: row[i] for i, h in enumerate(headers) if h in _ROW_KEYS and row[i]}
    if section.links is not None:  # a kind's table that knows better
        return section.links(headers, row, j, base)
    if stem.startswith("tasks_"):
        table = next(t for t in report.task_tables if task_table_title(t) == title)
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
            base["agent"] = row[j]  # an agent's own episodes
            return base
        agents = (row[headers.index("Agent A")], row[headers.index("Agent B")])
        return compare_link(arms, base["model"], base["track"], agents, _PAIRED_SHOW.get(headers[j], "disagree"))
    return base or None


def linked_sections(report: Report, arms: Mapping[ArmKey, int]) -> list[dict[str, Any]]:
    """Each table as {stem, title, headers, rows, links}; links[i][j] is the
    episode filter behind cell (i, j), a paired test's link to the comparison
    of its two arms (`arms`: (model, agent) -> arm number), or None."""
    out = []
    for section in all_sections(report):
        headers, rows = section.rows
        links = [[_cell_filter(section, row, j, report, arms) for j in range(len(row))] for row in rows]
        out.append({"stem": section.stem, "title": section.title, "headers": headers, "rows": rows, "links": links})
    return out

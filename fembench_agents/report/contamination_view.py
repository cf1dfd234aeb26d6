"""The contamination section as tables and a plot: each model x agent x track's pass rate on
published tasks beside fresh instances of the same strata, per family and overall, with the
paired difference and its interval (report/contamination.py holds the rule; plots.py draws it)."""

from __future__ import annotations

from fembench_agents.report.kind_parts import ReportSection, Rows
from fembench_agents.report.schema import Report

NOTE = (
    "Pass rate on published tasks beside fresh instances of the same strata (a PDE case's family and "
    "domain; a function task's published id). A stratum's rate: the mean over its tasks of the share of "
    "repeats that passed. Per family and overall: the mean over the strata with tasks on both sides, and "
    "the paired difference published - fresh (positive: what recall of published tasks would give) with a "
    "{conf}% percentile bootstrap interval over those strata ({resamples} resamples, seed {seed}). Strata "
    "on one side only are listed below the table and are in no difference."
)


def contamination_rows(report: Report) -> Rows:
    conf = round(report.settings.confidence * 100)
    headers = ["Model", "Agent", "Track", "Family", "Strata", "Published (tasks)", "Fresh (tasks)"]
    headers.append(f"Published - fresh [{conf}% CI]")
    body = [
        [
            r.model,
            r.agent,
            r.track,
            r.scope,
            str(r.strata),
            f"{r.published:.3f} ({r.published_tasks})",
            f"{r.fresh:.3f} ({r.fresh_tasks})",
            f"{r.difference.value:+.3f} [{r.difference.low:+.3f}, {r.difference.high:+.3f}]",
        ]
        for r in report.contamination
    ]
    return headers, body


def unpaired_rows(report: Report) -> Rows:
    headers = ["Model", "Agent", "Track", "Stratum", "Only", "Tasks"]
    body = [[u.model, u.agent, u.track, u.stratum, u.side, str(u.tasks)] for u in report.contamination_unpaired]
    return headers, body


def contamination_sections(report: Report) -> list[ReportSection]:
    """The section's tables when any model x agent ran a fresh instance; else none."""
    if not (report.contamination or report.contamination_unpaired):
        return []
    s = report.settings
    note = NOTE.format(conf=round(s.confidence * 100), resamples=s.resamples, seed=s.seed)
    out = [ReportSection("contamination", "Published against fresh instances", contamination_rows(report), note=note)]
    if report.contamination_unpaired:
        title = "Published against fresh: unpaired strata"
        out.append(ReportSection("contamination_unpaired", title, unpaired_rows(report)))
    return out

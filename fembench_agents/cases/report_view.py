"""What reports and the viewer show of the PDE cases (`TaskKind.report`): the
per-stage table and the margins against the thresholds, their plot, and what
one case attempt measured."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fembench_agents.cases.outcomes import CaseOutcome
from fembench_agents.cases.report_rows import (
    case_gates,
    case_margins,
    case_rows,
    case_stage_rows,
    gates_named,
    margin_rows,
)
from fembench_agents.cases.strata import case_strata, origin_of
from fembench_agents.report.kind_parts import KindFigure, PlainReport, ReportSection
from fembench_agents.report.schema import Report, ReportSettings, TaskInfo
from fembench_agents.runs.log import AttemptRecord, EpisodeRecord

if TYPE_CHECKING:
    from matplotlib.figure import Figure

MARGINS_PNG = "case_margins.png"
STAGES_NOTE = (
    "Over every scored attempt. Executes: share of all attempts; accurate: share of those that "
    "executed; fast: share of the accurate ones (these passed); pass: share of all attempts."
)


def _draw_margins(report: Report) -> Figure:
    # matplotlib loads when a plot is drawn, not when the registry loads this kind
    from fembench_agents.cases.report_plots import margins_figure

    return margins_figure(report)


@dataclass(frozen=True)
class CaseReport(PlainReport):
    """The part every library track shares: its tables span the libraries. A
    case has no FEM-Bench domain, tier or knowledge class (the plain task info),
    its score is pass or fail and its headline is "correct"."""

    family: str = "pde"

    def report_fields(
        self, episodes: Sequence[EpisodeRecord], attempts: Sequence[AttemptRecord], settings: ReportSettings
    ) -> dict[str, list[Any]]:
        return {
            "case_stages": case_stage_rows(attempts),
            "case_margins": case_margins(attempts),
            "case_gates": case_gates(attempts),
        }

    def sections(self, report: Report) -> list[ReportSection]:
        out = []
        gates = gates_named(report)
        if report.case_margins:
            title = "PDE cases: error and time against the thresholds"
            note = f"Judged by the {gates}." if gates else None
            out.append(ReportSection("case_margins", title, margin_rows(report.case_margins), note=note))
        if report.case_stages:
            out.append(
                ReportSection(
                    "case_stages",
                    "PDE cases: per stage",
                    case_rows(report),
                    after_tasks=True,
                    note=f"{STAGES_NOTE} Judged by the {gates}." if gates else STAGES_NOTE,
                    terminal_title="PDE cases: per stage (share in brackets" + (f"; {gates})" if gates else ")"),
                )
            )
        return out

    def figures(self, report: Report) -> list[KindFigure]:
        if not report.case_margins:
            return []
        return [KindFigure("PDE error and time against the thresholds", MARGINS_PNG, _draw_margins)]

    def notes(self, report: Report) -> list[str]:
        gates = gates_named(report)
        return [f"PDE cases judged by the {gates}"] if gates else []

    def task_info(self, task_id: str) -> TaskInfo:
        """Where a case comes from, and its stratum "family/domain" (None: not in the cases folder's records)."""
        stratum = case_strata().get(task_id)
        return TaskInfo(domain="other", tier="-", knowledge="-", origin=origin_of(task_id), stratum=stratum)

    def facts(self, outcome: Any) -> list[str]:
        assert isinstance(outcome, CaseOutcome)
        facts = [f"library {outcome.library}, family {outcome.family}"]
        if outcome.relative_l2_error is not None:
            facts.append(f"relative L2 error {outcome.relative_l2_error:.3g}")
        if outcome.solve_seconds is not None:
            facts.append(f"solve time {outcome.solve_seconds:.3g} s")
        if outcome.error:
            facts.append(f"{outcome.error.type}: {outcome.error.message}")
        if outcome.thresholds is not None:
            facts.append(f"gates: {outcome.thresholds.label}")
        facts += [f"compatibility: {s}" for s in outcome.substitutions]
        return facts


CASE_REPORT = CaseReport()

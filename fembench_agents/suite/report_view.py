"""What reports and the viewer show of the function tasks (`TaskKind.report`):
the tables FEM-Bench and FEABench publish, a task id's domain, tier and
knowledge class, and what a function or test-suite attempt measured."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fembench_agents.report.kind_parts import CellLinks, Filter, KindFigure, PairedHeadline, ReportSection
from fembench_agents.report.schema import Report, ReportSettings, TaskInfo
from fembench_agents.runs.log import AttemptRecord, EpisodeRecord
from fembench_agents.suite import paper
from fembench_agents.suite.outcomes import FunctionOutcome, InputResult, TestSuiteOutcome
from fembench_agents.suite.paper_render import breakdown_rows, diagnostic_rows, paper_rows, test_metric_rows

BREAKDOWNS = (("tier", "By tier"), ("knowledge", "By knowledge class"), ("domain", "By domain"))


def _split_column(header: str) -> Filter:
    """ "model / agent: any of n" -> model and agent."""
    model, _, agent = header.rsplit(": ", 1)[0].rpartition(" / ")
    return {"model": model, "agent": agent}


def _paper_links(track: str) -> CellLinks:
    def links(headers: list[str], row: list[str], j: int, base: Filter) -> Filter:
        """A cell lists its track's episodes of its task (all tasks on the total
        row) by its column's model and agent; tier and domain follow from the task."""
        base["track"] = track
        if j >= 3:
            base.update(_split_column(headers[j]))
        base.pop("tier", None)
        base.pop("domain", None)
        if base.get("task", "").startswith("Total"):
            base.pop("task")
        return base

    return links


def _code_links(headers: list[str], row: list[str], j: int, base: Filter) -> Filter:
    """The diagnostics read the function attempts: their episodes are the code track's."""
    base["track"] = "code"
    return base


def _input_fact(i: InputResult) -> str:
    line = f"input {i.index}: {i.status}"
    if i.mismatch:
        line += f" ({i.mismatch}{' at ' + i.where if i.where else ''})"
    if i.relative_error is not None:
        line += f", relative error {i.relative_error:.3g}"
    if i.error:
        line += f", {i.error.type}: {i.error.message}"
    return line


@dataclass(frozen=True)
class FunctionReport:
    """One function track's part; both tracks share the family's tables."""

    headline_label: str
    graded: bool = False  # the tests track: an episode scores its joint test share
    paired_headline: PairedHeadline | None = None
    family: str = "function"

    def task_info(self, task_id: str) -> TaskInfo:
        return paper.task_info(task_id)

    def report_fields(
        self, episodes: Sequence[EpisodeRecord], attempts: Sequence[AttemptRecord], settings: ReportSettings
    ) -> dict[str, list[Any]]:
        return {
            "paper_tables": paper.paper_tables(episodes),
            "test_metrics": paper.test_track_metrics(episodes, attempts),
            "breakdowns": paper.breakdowns(episodes),
            "diagnostics": paper.diagnostics(attempts, settings.near_miss_error),
        }

    def sections(self, report: Report) -> list[ReportSection]:
        out: list[ReportSection] = []
        for t in report.paper_tables:
            title = "Functions correct per task" if t.track == "code" else "Joint test success per task"
            out.append(ReportSection(f"paper_{t.track}", title, paper_rows(t), links=_paper_links(t.track)))
        if report.test_metrics:
            title = "Test-track metrics (means over tasks)"
            out.append(ReportSection("test_track_metrics", title, test_metric_rows(report)))
        for by, title in BREAKDOWNS:
            if any(b.by == by for b in report.breakdowns):
                rows = breakdown_rows(report, by)
                out.append(ReportSection(f"by_{by}", title, rows, repeats_summary=_one_value_each(report, by)))
        if report.diagnostics:
            title = "Executability and near misses (every function attempt)"
            out.append(ReportSection("diagnostics", title, diagnostic_rows(report), links=_code_links))
        return out

    def figures(self, report: Report) -> list[KindFigure]:
        return []

    def facts(self, outcome: Any) -> list[str]:
        """Each input's status of a function; each test's verdicts of a test suite."""
        if isinstance(outcome, FunctionOutcome):
            return [_input_fact(i) for i in outcome.inputs]
        assert isinstance(outcome, TestSuiteOutcome)
        return [
            f"{t.name}: {'present' if t.present else 'missing'}, "
            f"{'passes' if t.passes_reference else 'fails'} on the reference, "
            f"detects {sum(t.detected.values())}/{len(t.detected)} expected failures"
            for t in outcome.tests
        ]

    def notes(self, report: Report) -> list[str]:
        return []


CODE_REPORT = FunctionReport(headline_label="functions correct")
TESTS_REPORT = FunctionReport(
    headline_label="joint test success",
    graded=True,
    paired_headline=PairedHeadline(x_track="code", title="Correctness vs test quality"),
)


def _one_value_each(report: Report, by: str) -> bool:
    """Every model x agent x track has one value of `by` (all its tasks of one tier, say)."""
    values: dict[tuple[str, str, str], set[str]] = {}
    for b in report.breakdowns:
        if b.by == by:
            values.setdefault((b.model, b.agent, b.track), set()).add(b.value)
    return all(len(v) == 1 for v in values.values())

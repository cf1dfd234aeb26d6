"""A kind registered from outside the package gets its report rows, plots and
viewer pages through its own `TaskKind.report` part, with no change to
report/ or viewer/: the generic tables from `PlainReport`, and whatever its
own part adds (a graded score, a section, a plot, task columns, facts)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
from matplotlib.figure import Figure
from run_builders import MODEL, attempt, episode, make_run
from viewer_runs import read_js_call

from fembench_agents.cases.tracks import TRACKS as LIBRARY_TRACKS
from fembench_agents.kinds import kind_for, register_kind, unregister_kind
from fembench_agents.kinds.contract import LoadedProblems, ScoringOptions
from fembench_agents.kinds.review import KindReport
from fembench_agents.report import Report, build_report, render_markdown, write_report
from fembench_agents.report.export import report_sections
from fembench_agents.report.kind_parts import (
    KIND_FIELDS,
    Filter,
    KindFigure,
    PairedHeadline,
    PlainReport,
    ReportSection,
    family_parts,
    kind_fields,
)
from fembench_agents.report.render import fmt_cell
from fembench_agents.report.schema import ReportSettings, TaskCell, TaskInfo
from fembench_agents.runs.log import AttemptRecord, EpisodeRecord
from fembench_agents.scoring.outcomes import OutcomeBase, StageResult
from fembench_agents.viewer import write_site


class ToyOutcome(OutcomeBase):
    kind: Literal["toy"] = "toy"
    measured: float = 0.0


class PlainToyOutcome(ToyOutcome):
    kind: Literal["plain-toy"] = "plain-toy"  # type: ignore[assignment]


def _toy_links(headers: list[str], row: list[str], j: int, base: Filter) -> Filter:
    return {**base, "track": "toy", "task": row[0]}


def _toy_figure(report: Report) -> Figure:
    return Figure()


ASKED: list[tuple[set[str], set[str], int]] = []  # what each call of ToyReport.report_fields was given


@dataclass(frozen=True)
class ToyReport(PlainReport):
    """A part that adds to every hook, so each is seen to be asked."""

    family: str = "toy"
    graded: bool = True
    headline_label: str | None = "toy score"

    def task_info(self, task_id: str) -> TaskInfo:
        return TaskInfo(domain=f"toy {task_id}", tier="TT", knowledge="KK")

    def report_fields(
        self, episodes: Sequence[EpisodeRecord], attempts: Sequence[AttemptRecord], settings: ReportSettings
    ) -> dict[str, list[Any]]:
        ASKED.append(({e.track for e in episodes}, {a.track for a in attempts}, len(episodes)))
        return {}

    def sections(self, report: Report) -> list[ReportSection]:
        return [ReportSection("toy_extra", "Toy extra", (["Task", "Toy"], [["t1", "x"]]), links=_toy_links)]

    def figures(self, report: Report) -> list[KindFigure]:
        return [KindFigure("Toy plot", "toy.png", _toy_figure)]

    def facts(self, outcome: Any) -> list[str]:
        return [f"toy measured {outcome.measured:g}"]


@dataclass(frozen=True)
class ToyKind:
    track: str
    label: str
    report: KindReport
    outcome_type: type[ToyOutcome] = ToyOutcome
    default_path: str = "toys"
    preload: tuple[str, ...] = ()
    scorer_key: str = "toy"
    feedback: Any = None

    def load(self, path: str, sandbox: Any, options: ScoringOptions, tracks: Sequence[str]) -> LoadedProblems:
        raise NotImplementedError

    def scorer(self, sandbox: Any, options: ScoringOptions) -> Any:
        raise NotImplementedError


@pytest.fixture
def toy_kinds() -> Iterator[None]:
    register_kind(ToyKind(track="toy", label="toy", report=ToyReport()))
    register_kind(ToyKind(track="plain-toy", label="plain toy", report=PlainReport(), outcome_type=PlainToyOutcome))
    yield
    unregister_kind("toy")
    unregister_kind("plain-toy")


def toy_outcome(track: str, task: str, passed: bool, measured: float) -> ToyOutcome:
    stages = (StageResult(stage="execute", passed=True), StageResult(stage="correct", passed=passed))
    outcome_type = ToyOutcome if track == "toy" else PlainToyOutcome
    return outcome_type(task_id=task, passed=passed, stages=stages, measured=measured)


def toy_run(directory: Path) -> Path:
    out: list[AttemptRecord | EpisodeRecord] = []
    for track in ("toy", "plain-toy"):
        for repeat, (passed, score) in enumerate([(True, 1.0), (False, 0.5)]):
            ep = episode("single", "t1", repeat, passed, track=track, score=score)
            out += [attempt(ep, 0, toy_outcome(track, "t1", passed, 0.25 * (repeat + 1))), ep]  # type: ignore[arg-type]
    return make_run(directory, "toys", out)


def test_a_third_kind_gets_the_generic_tables_and_its_parts_additions(toy_kinds: None, tmp_path: Path) -> None:
    ASKED.clear()
    report = build_report([toy_run(tmp_path / "run")])
    assert ASKED == [({"toy"}, {"toy"}, 2)]  # once, with its own family's records only
    toy, plain = sorted(report.groups, key=lambda g: g.track != "toy")
    assert (toy.track, toy.passed, toy.episodes) == ("toy", 1, 2)
    assert toy.joint_tests is not None and toy.joint_tests.value == 0.75  # graded: the mean episode score
    assert plain.joint_tests is None  # PlainReport: pass or fail only
    assert fmt_cell(TaskCell(passes=1, repeats=2, score=0.75), "toy") == "1/2 (0.75)"
    assert fmt_cell(TaskCell(passes=1, repeats=2, score=0.75), "plain-toy") == "1/2"
    assert [stem for stem, _, _ in report_sections(report)] == [
        "summary",
        "cost",
        "toy_extra",
        "tasks_mock_model_plain_toy",
        "tasks_mock_model_toy",
        "stage_failures",
        "failure_reasons",
    ]
    md = render_markdown(report)
    assert "## Toy extra\n\n| Task | Toy |\n|---|---|\n| t1 | x |\n" in md
    assert "| t1 | 1/2 (0.75) |" in md and "| t1 | 1/2 |" in md
    written = write_report(report, tmp_path / "report")
    assert sorted(p.name for p in written.values() if p.suffix == ".png") == [
        "correctness.png",
        "pass_rate_cost.png",
        "stage_failures.png",
        "toy.png",
    ]
    assert (tmp_path / "report" / "plots" / "toy.svg").is_file()


def test_the_viewer_shows_a_third_kinds_facts_task_columns_and_links(toy_kinds: None, tmp_path: Path) -> None:
    write_site([toy_run(tmp_path / "run")], tmp_path / "site")
    (index,) = read_js_call(tmp_path / "site" / "data" / "index.js", "fembenchIndex")
    fields = index["fields"]
    rows = {(r[fields.index("track")], r[fields.index("repeat")]): r for r in index["episodes"]}
    toy_row, plain_row = rows[("toy", 0)], rows[("plain-toy", 0)]
    assert [toy_row[fields.index(f)] for f in ("domain", "tier", "knowledge")] == ["toy t1", "TT", "KK"]
    assert [plain_row[fields.index(f)] for f in ("domain", "tier", "knowledge")] == ["other", "-", "-"]
    extra = next(s for s in index["sections"] if s["stem"] == "toy_extra")
    assert extra["links"] == [[{"task": "t1", "track": "toy"}, {"task": "t1", "track": "toy"}]]
    facts = {}
    for n, row in enumerate(index["episodes"]):
        _, view = read_js_call(tmp_path / "site" / "data" / "episodes" / f"{n}.js", "fembenchEpisode")
        facts[(row[fields.index("track")], row[fields.index("repeat")])] = view["attempts"][0]["facts"]
    assert facts[("toy", 1)] == ["toy measured 0.5"]
    assert facts[("plain-toy", 1)] == []  # PlainReport: the stages say it all
    assert [p["caption"] for p in index["plots"]] == [
        "Correctness",
        "Stage failures",
        "Pass rate against cost",
        "Toy plot",
    ]


def test_a_part_filling_no_field_of_the_report_is_refused(toy_kinds: None) -> None:
    class Misnamed(PlainReport):
        def report_fields(self, *args: Any) -> dict[str, list[Any]]:
            return {"toy_tables": [1]}

    register_kind(ToyKind(track="misnamed", label="misnamed", report=Misnamed(family="misnamed")))
    try:
        ep = episode("single", "t1", 0, True, track="misnamed", model=MODEL)
        with pytest.raises(ValueError, match=r"^the 'misnamed' report part fills 'toy_tables', which is no kind"):
            kind_fields([ep], [], ReportSettings())
    finally:
        unregister_kind("misnamed")


def test_the_built_in_kinds_parts() -> None:
    """Code and tests share the papers' tables; every library shares one PDE part."""
    assert list(family_parts()) == ["function", "pde"]
    code, tests = kind_for("code").report, kind_for("tests").report
    assert (code.family, code.graded, code.headline_label, code.paired_headline) == (
        "function",
        False,
        "functions correct",
        None,
    )
    assert (tests.family, tests.graded, tests.headline_label) == ("function", True, "joint test success")
    assert tests.paired_headline == PairedHeadline(x_track="code", title="Correctness vs test quality")
    libraries = {id(kind_for(t).report) for t in LIBRARY_TRACKS}
    assert len(libraries) == 1 and kind_for("dolfinx").report.family == "pde"
    assert code.task_info("FEM_2D_quad_CC0_H1_T3") == TaskInfo(
        domain="FEM 2D", tier="T3", knowledge="CC0", stratum="FEM_2D_quad_CC0_H1_T3"
    )
    assert kind_for("numpy-scipy").report.task_info("FEM_2D_quad_CC0_H1_T3") == TaskInfo(
        domain="other", tier="-", knowledge="-"
    )


def test_a_kind_fills_only_the_reports_kind_sections() -> None:
    assert KIND_FIELDS == (
        "case_stages",
        "paper_tables",
        "test_metrics",
        "breakdowns",
        "diagnostics",
        "case_margins",
        "case_gates",
    )

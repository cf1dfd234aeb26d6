"""The paper-style tables and aggregates on a hand-built run mixing the code,
tests and PDE tracks: every figure pinned, and every table written as
Markdown, CSV and JSON, every plot as PNG and SVG."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from matplotlib.container import BarContainer
from run_builders import (
    MODEL,
    TASK_1D,
    TASK_2D,
    TASK_3D,
    TASK_OTHER,
    attempt,
    case_outcome,
    episode,
    function_outcome,
    make_run,
    suite_outcome,
)

from fembench_agents.cases import sensitivity
from fembench_agents.cases.outcomes import CaseOutcome, CaseThresholds
from fembench_agents.cases.report_rows import case_gates, case_margins, case_rows, case_stage_rows, margin_rows
from fembench_agents.cases.report_view import CASE_REPORT
from fembench_agents.report import Report, build_report, render_markdown, write_report
from fembench_agents.report.export import report_sections
from fembench_agents.report.plots import correctness_figure
from fembench_agents.report.render import fmt_cell, fmt_cost, md_table, rich_tables, summary_rows
from fembench_agents.report.schema import (
    AgentMetrics,
    BreakdownRow,
    CaseMargins,
    CaseStageRow,
    Diagnostics,
    PaperCell,
    PaperRow,
    PaperTable,
    TaskCell,
    TaskInfo,
)
from fembench_agents.runs.log import AttemptRecord, EpisodeRecord, RunManifest, write_manifest
from fembench_agents.scoring.outcomes import StageResult
from fembench_agents.scoring.sandbox import IsolationReport
from fembench_agents.suite import paper
from fembench_agents.suite.paper import diagnostics, last_attempts, paper_tables, task_info
from fembench_agents.suite.paper_render import diagnostic_rows, paper_rows

CODE_PASSES = {
    "single": {TASK_1D: [True, True], TASK_2D: [True, False], TASK_3D: [False, False], TASK_OTHER: [False, False]},
    "loop": {TASK_1D: [True, True], TASK_2D: [True, True], TASK_3D: [True, False]},
}
# the single agent's one attempt per code episode: (status, relative error) per input
SINGLE_INPUTS: dict[tuple[str, int], list[tuple[str, float | None]] | None] = {
    (TASK_1D, 0): [("match", None), ("match", None)],
    (TASK_1D, 1): [("match", None)],
    (TASK_2D, 0): [("match", None)],
    (TASK_2D, 1): [("match", None), ("mismatch", 0.005)],  # a near miss
    (TASK_3D, 0): [("mismatch", 0.5), ("mismatch", 0.2)],  # worst input: 0.5
    (TASK_3D, 1): [("error", None)],  # did not run on every input
    (TASK_OTHER, 0): [("mismatch", None)],  # wrong shape: ran, no error measured
    (TASK_OTHER, 1): None,  # failed to parse
}


def mixed_records() -> list[AttemptRecord | EpisodeRecord]:
    out: list[AttemptRecord | EpisodeRecord] = []
    for agent, tasks in CODE_PASSES.items():
        for task, passes in tasks.items():
            for repeat, passed in enumerate(passes):
                ep = episode(agent, task, repeat, passed)
                if agent == "single":
                    out.append(attempt(ep, 1, function_outcome(task, SINGLE_INPUTS[(task, repeat)], passed)))
                out.append(ep)
    suite = episode("single", TASK_1D, 0, False, track="tests", score=0.5, stage=("tests", "failure_not_detected"))
    out += [
        attempt(suite, 1, suite_outcome(TASK_1D, [(True, {"f1": True, "f2": True}), (False, {"f1": True})])),
        suite,
    ]
    failed_call = episode("single", TASK_2D, 0, False, track="tests", stage=("model_error", "model_error"))
    out += [attempt(failed_call, 1, None), failed_call]
    for repeat, (err, secs, ran) in enumerate([(2e-3, 0.5, True), (5e-4, None, True), (None, None, False)]):
        case = episode("single", "poisson_1", repeat, False, track="numpy-scipy", stage=("executes", "not_a_dict"))
        out += [attempt(case, 1, case_outcome("poisson_1", err, secs, executed=ran)), case]
    return out


@pytest.fixture
def report(tmp_path: Path) -> Report:
    return build_report([make_run(tmp_path / "mixed", "mixed", mixed_records())])


def test_task_ids_name_domain_tier_and_knowledge_class() -> None:
    assert task_info(TASK_3D) == TaskInfo(domain="MSA 3D", tier="T1", knowledge="CC1", stratum=TASK_3D)
    assert task_info(TASK_2D) == TaskInfo(domain="FEM 2D", tier="T3", knowledge="CC0", stratum=TASK_2D)
    assert task_info(TASK_OTHER) == TaskInfo(domain="other", tier="-", knowledge="-", stratum=TASK_OTHER)


def test_the_code_table_puts_best_of_n_beside_n_of_n_by_domain(report: Report) -> None:
    code = next(t for t in report.paper_tables if t.track == "code")
    headers, rows = paper_rows(code)
    loop, single = f"{MODEL} / loop", f"{MODEL} / single"
    assert headers == [
        "Domain",
        "Tier",
        "Task",
        f"{loop}: any of 2",
        f"{loop}: 2 of 2",
        f"{single}: any of 2",
        f"{single}: 2 of 2",
    ]
    assert rows == [
        ["FEM 1D", "T0", TASK_1D, "Y", "Y", "Y", "Y"],
        ["FEM 2D", "T3", TASK_2D, "Y", "Y", "Y", "N"],
        ["MSA 3D", "T1", TASK_3D, "Y", "N", "N", "N"],
        ["other", "-", TASK_OTHER, "-", "-", "N", "N"],
        ["", "", "Total (4 tasks)", "3", "2", "2", "1"],
    ]


def test_the_code_table_is_headed_by_the_most_repeats_any_task_has() -> None:
    """A task run 3 times beside one run twice: "any of 3", and the twice-run task's cells as they are."""
    eps = [episode("loop", TASK_1D, r, r == 2) for r in range(3)] + [
        episode("loop", TASK_2D, r, True) for r in range(2)
    ]
    (code,) = paper_tables(eps)
    headers, rows = paper_rows(code)
    assert headers[3:] == [f"{MODEL} / loop: any of 3", f"{MODEL} / loop: 3 of 3"]
    assert rows[:2] == [["FEM 1D", "T0", TASK_1D, "Y", "N"], ["FEM 2D", "T3", TASK_2D, "Y", "Y"]]


def test_the_tests_table_shows_the_joint_score_per_task(report: Report) -> None:
    tests = next(t for t in report.paper_tables if t.track == "tests")
    assert paper_rows(tests)[1] == [
        ["FEM 1D", "T0", TASK_1D, "0.50"],
        ["FEM 2D", "T3", TASK_2D, "0.00"],
        ["", "", "Total (2 tasks)", "0.25"],
    ]


def test_the_four_test_track_metrics_keep_reference_and_detection_shares(report: Report) -> None:
    loop, single = report.test_metrics
    assert loop.function_correctness == pytest.approx(2.5 / 3)
    assert (loop.agent, loop.reference_pass, loop.failures_detected, loop.joint_success) == ("loop", None, None, None)
    # a suite that never got scored passes nothing and detects nothing
    assert single == AgentMetrics(
        model=MODEL,
        agent="single",
        function_correctness=0.375,
        reference_pass=0.25,
        failures_detected=0.5,
        joint_success=0.25,
    )


def test_breakdowns_by_tier_knowledge_class_and_domain(report: Report) -> None:
    def rows(agent: str, track: str, by: str) -> list[tuple[str, int, float, int, int]]:
        return [
            (b.value, b.tasks, b.correct, b.best_of_n, b.n_of_n)
            for b in report.breakdowns
            if (b.agent, b.track, b.by) == (agent, track, by)
        ]

    assert rows("single", "code", "tier") == [
        ("-", 1, 0.0, 0, 0),
        ("T0", 1, 1.0, 1, 1),
        ("T1", 1, 0.0, 0, 0),
        ("T3", 1, 0.5, 1, 0),
    ]
    assert rows("single", "code", "knowledge") == [("-", 1, 0.0, 0, 0), ("CC0", 2, 0.75, 2, 1), ("CC1", 1, 0.0, 0, 0)]
    assert rows("loop", "code", "domain") == [
        ("FEM 1D", 1, 1.0, 1, 1),
        ("FEM 2D", 1, 1.0, 1, 1),
        ("MSA 3D", 1, 0.5, 1, 0),
    ]
    assert rows("single", "tests", "tier") == [("T0", 1, 0.0, 0, 0), ("T3", 1, 0.0, 0, 0)]
    assert {b.track for b in report.breakdowns} == {"code", "tests"}  # PDE cases have no tiers
    assert isinstance(report.breakdowns[0], BreakdownRow) and report.breakdowns[0].episodes == 2


def test_executability_and_near_misses_over_every_function_attempt(report: Report) -> None:
    assert report.diagnostics == [
        Diagnostics(
            model=MODEL,
            agent="single",
            attempts=8,
            executable=6,
            executable_share=0.75,
            wrong_executable=3,
            median_error=(0.005 + 0.5) / 2,
            near_misses=1,
            near_miss_share=0.5,
        )
    ]


def test_pde_errors_and_times_are_measured_against_their_thresholds(report: Report) -> None:
    (margins,) = report.case_margins
    assert margins.error_ratios == pytest.approx([2.0, 0.5])
    assert margins.time_ratios == pytest.approx([0.5])
    assert margin_rows(report.case_margins)[1] == [
        [MODEL, "single", "numpy-scipy", "poisson", "1.2 [0.88, 1.6]", "1/2", "0.5", "1/1"]
    ]
    (stages,) = report.case_stages
    assert (stages.attempts, stages.executes, stages.accurate, stages.fast) == (3, 2, 1, 0)


def test_every_table_is_written_as_markdown_csv_and_json(report: Report, tmp_path: Path) -> None:
    out = tmp_path / "out"
    written = write_report(report, out)
    stems = {p.stem for p in (out / "tables").iterdir()}
    assert sorted(stems) == [
        "by_domain",
        "by_knowledge",
        "by_tier",
        "case_margins",
        "case_stages",
        "cost",
        "diagnostics",
        "failure_reasons",
        "paired_tests",
        "paper_code",
        "paper_tests",
        "stage_failures",
        "summary",
        "tasks_mock_model_code",  # one per-task table per model and track: mock/model's three
        "tasks_mock_model_numpy_scipy",
        "tasks_mock_model_tests",
        "test_track_metrics",
    ]
    assert (out / "tables" / "tasks_mock_model_tests.md").read_text().splitlines()[0] == (
        "# Per task: mock/model, tests track"
    )
    for stem in stems:
        assert {p.suffix for p in (out / "tables").glob(f"{stem}.*")} == {".md", ".csv", ".json"}
    with open(out / "tables" / "test_track_metrics.csv", newline="") as fh:
        assert list(csv.reader(fh))[2] == [MODEL, "single", "0.375", "0.250", "0.500", "0.250"]
    assert (out / "tables" / "test_track_metrics.md").read_text() == (
        "# Test-track metrics (means over tasks)\n\n"
        "| Model | Agent | Function correctness | Tests pass reference | Failures detected | Joint success |\n"
        "|---|---|---|---|---|---|\n"
        f"| {MODEL} | loop | 0.833 | - | - | - |\n"
        f"| {MODEL} | single | 0.375 | 0.250 | 0.500 | 0.250 |\n"
    )
    data = json.loads((out / "tables" / "diagnostics.json").read_text())
    assert data["rows"][0]["Wrong but executable"] == "3"
    assert data["rows"][0]["Near misses (error <= 0.01)"] == "1 (0.500)"
    for png in (out / "plots").glob("*.png"):
        assert png.with_suffix(".svg").read_text().lstrip().startswith("<?xml")
    assert {p.name for p in (out / "plots").glob("*.svg")} == {
        "correctness.svg",
        "stage_failures.svg",
        "pass_rate_cost.svg",
        "case_margins.svg",
    }
    assert written["json"].exists()
    md = render_markdown(report)
    assert "## Functions correct per task" in md and "## Executability and near misses" in md
    assert Report.model_validate_json(written["json"].read_text()) == report


def test_the_terminal_shows_every_table_titled_in_order(report: Report) -> None:
    tables = rich_tables(report)
    assert [(t.title, t.row_count) for t in tables] == [
        ("Per task: mock/model, code track", 4),
        ("Per task: mock/model, numpy-scipy track", 1),
        ("Per task: mock/model, tests track", 2),
        ("Summary", 4),
        ("Cost", 4),
        ("Stage failures", 4),
        ("Functions correct per task", 5),
        ("Joint test success per task", 3),
        ("Test-track metrics (means over tasks)", 2),
        ("By tier", 9),
        ("By knowledge class", 6),
        ("By domain", 9),
        ("Executability and near misses (every function attempt)", 1),
        ("PDE cases: error and time against the thresholds", 1),
        (
            "PDE cases: per stage (share in brackets; gates: ours (alpha_acc 10, tau_min 1e-06, alpha_time 2, t_floor 0.1 s))",
            1,
        ),
        ("Paired tests (exact McNemar, tasks)", 1),
    ]
    summary = tables[3]
    assert [c.header for c in summary.columns] == summary_rows(report)[0]


def test_a_report_without_episodes_says_so_under_each_runs_isolation(tmp_path: Path) -> None:
    accepted = IsolationReport(level="basic", detail="no user namespace", accepted_weak=True)
    weak = IsolationReport(level="basic", detail="no user namespace")
    confined = IsolationReport(level="namespaced", detail="root")
    runs = []
    for run_id, isolation, commit in (
        ("a", accepted, None),
        ("b", weak, "abc1234"),
        ("c", confined, None),
        ("d", None, None),
    ):
        run = make_run(tmp_path / run_id, run_id, [])
        write_manifest(
            run,
            RunManifest(run_id=run_id, config={}, task_hashes={}, versions={}, isolation=isolation, git_commit=commit),
        )
        runs.append(run)
    text = render_markdown(build_report(runs), {"Correct": "plots/correct.png"}).replace(str(tmp_path), "<tmp>")
    assert text == (
        "# Comparison report\n\n"
        "| Run | Path | Episodes | Git commit | Isolation |\n"
        "|---|---|---|---|---|\n"
        "| a | <tmp>/a | 0 | - | basic (accepted) |\n"
        "| b | <tmp>/b | 0 | abc1234 | basic |\n"
        "| c | <tmp>/c | 0 | - | namespaced |\n"
        "| d | <tmp>/d | 0 | - | not recorded |\n\n"
        f"**Warning**: run a: {accepted.summary()}\n\n"
        f"**Warning**: run b: {weak.summary()}\n\n"
        "No finished episodes.\n"
    )  # and no plots of nothing


def test_failure_reasons_are_a_table_when_any_group_failed_for_a_reason(report: Report) -> None:
    def stems(groups: list) -> list[str]:
        return [stem for stem, _, _ in report_sections(report.model_copy(update={"groups": groups}))]

    assert all(g.failure_reasons for g in report.groups)
    one_without = [report.groups[0].model_copy(update={"failure_reasons": {}}), *report.groups[1:]]
    assert "failure_reasons" in stems(one_without)
    assert "failure_reasons" not in stems([g.model_copy(update={"failure_reasons": {}}) for g in report.groups])


def test_plots_are_linked_at_the_end_of_the_report(report: Report) -> None:
    plots = {"Correct (95% CI)": "plots/correct.png", "Stage failures": "plots/stages.png"}
    assert render_markdown(report, plots) == render_markdown(report) + (
        "\n## Plots\n\n![Correct (95% CI)](plots/correct.png)\n\n![Stage failures](plots/stages.png)\n"
    )


def test_what_was_not_measured_is_a_dash_and_an_unknown_cost_is_unknown(report: Report) -> None:
    assert (fmt_cost(None), fmt_cost(0.123456), fmt_cost(0.0)) == ("unknown", "$0.1235", "$0.0000")
    usage = {"model_calls": 5, "reused_calls": 2, "prompt_tokens": 12345, "completion_tokens": 678}
    group = report.groups[0].model_copy(update={**usage, "cost_usd": None, "seconds": 3.14159})
    headers, (row,) = summary_rows(report.model_copy(update={"groups": [group]}))
    assert dict(zip(headers, row, strict=True))["Model calls (reused)"] == "5 (2)"  # every call, the reused among them
    assert row[-3:] == ["12,345 / 678", "unknown", "3.1"]
    cells = [
        TaskCell(passes=1, repeats=1, score=0.5),
        TaskCell(passes=0, repeats=1, score=0.0),
        TaskCell(passes=1, repeats=3, score=0.25),
    ]
    assert [fmt_cell(c, "code") for c in cells] == ["Y", "N", "1/3"]
    assert [fmt_cell(c, "tests") for c in cells] == ["Y (0.50)", "N (0.00)", "1/3 (0.25)"]
    assert fmt_cell(None, "code") == "-"
    unscored = CaseStageRow(
        model="m", agent="a", library="numpy-scipy", family="poisson", attempts=0, executes=0, accurate=0, fast=0,
        executes_rate=None, accurate_rate=None, fast_rate=None, pass_rate=None, median_error=None, median_seconds=None,
    )  # fmt: skip
    assert case_rows(report.model_copy(update={"case_stages": [unscored]}))[1] == [
        ["m", "a", "numpy-scipy", "poisson", "0", "0 (-)", "0 (-)", "0 (-)", "-", "-"]
    ]
    unmeasured = Diagnostics(
        model="m", agent="a", attempts=2, executable=0, executable_share=0.0, wrong_executable=0,
        median_error=None, near_misses=0, near_miss_share=None,
    )  # fmt: skip
    assert diagnostic_rows(report.model_copy(update={"diagnostics": [unmeasured]}))[1] == [
        ["m", "a", "2", "0 (0.000)", "0", "-", "0 (-)"]
    ]
    tests = PaperTable(
        track="tests",
        columns=["m / a", "m / b"],
        rows=[
            PaperRow(task_id="t1", info=TaskInfo(domain="FEM 1D", tier="T0", knowledge="CC0"), cells={"m / a": PaperCell(passes=1, repeats=1, score=0.5), "m / b": PaperCell(passes=0, repeats=1, score=0.25)}),
            PaperRow(task_id="t2", info=TaskInfo(domain="FEM 1D", tier="T1", knowledge="CC0"), cells={"m / a": PaperCell(passes=0, repeats=1, score=0.0)}),
        ],
    )  # fmt: skip
    assert paper_rows(tests)[1] == [
        ["FEM 1D", "T0", "t1", "0.50", "0.25"],
        ["FEM 1D", "T1", "t2", "0.00", "-"],
        ["", "", "Total (2 tasks)", "0.25", "0.25"],
    ]
    untimed = CaseMargins(
        model="m", agent="a", library="dolfinx", family="heat", error_ratios=[4.0, 0.5, 1.0, 2.0], time_ratios=[]
    )  # every attempt inaccurate or this machine uncalibrated: nothing timed
    assert margin_rows([untimed])[1] == [["m", "a", "dolfinx", "heat", "1.5 [0.88, 2.5]", "2/4", "-", "0/0"]]
    assert md_table(["a|b", "c"], [["x|y", "z"]]) == ["| a\\|b | c |", "|---|---|", "| x\\|y | z |", ""]


def test_a_breakdown_table_is_shown_only_for_what_the_report_breaks_down_by(report: Report) -> None:
    by_tier = report.model_copy(update={"breakdowns": [b for b in report.breakdowns if b.by == "tier"]})
    stems = [stem for stem, _, _ in report_sections(by_tier)]
    assert [s for s in stems if s.startswith("by_")] == ["by_tier"]
    assert [s for s, _, _ in report_sections(report) if s.startswith("by_")] == ["by_tier", "by_knowledge", "by_domain"]


def test_the_markdown_report_of_the_mixed_run_reads_exactly_as_checked_by_hand(report: Report, tmp_path: Path) -> None:
    """Every figure a reader sees, pinned: tests/fixtures/report_mixed.md was checked against the records
    above (shares, pass@k, intervals, medians, quartiles, the McNemar p) before it was committed; a change
    to any rule or rendering shows here as a diff to check again."""
    expected = (Path(__file__).parent / "fixtures" / "report_mixed.md").read_text()
    assert render_markdown(report).replace(str(tmp_path), "<tmp>") + "\n" == expected


def test_report_over_a_compare_directory_prints_and_writes_the_paper_tables(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from fembench_agents.cli import app

    make_run(tmp_path / "compare" / "mock__mixed", "mixed", mixed_records())
    out = tmp_path / "report"
    result = CliRunner().invoke(app, ["report", str(tmp_path / "compare"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    titles = ("Functions correct per task", "Test-track metrics", "By knowledge class", "Executability")
    assert not any(title in result.output for title in titles)  # the terminal's short report
    assert f"the full report is in {out / 'report.md'}; every table: " in result.output
    # the short report too names the gates that judged the PDE attempts
    assert "PDE cases judged by the gates: ours (alpha_acc 10, tau_min 1e-06, alpha_time 2, t_floor 0.1 s)" in (
        result.output.replace("\n", " ")
    )
    full = CliRunner().invoke(app, ["report", str(tmp_path / "compare"), "--full"])
    assert full.exit_code == 0, full.output
    for title in titles:
        assert title in full.output
    assert (
        (out / "tables" / "paper_code.csv").read_text().splitlines()[1].startswith("FEM 1D,T0,FEM_1D_bar_CC0_H0_T0,Y,Y")
    )


# ----- the builders on their own, where the mixed run cannot tell rules apart ------------------------------------

T1_LATER = "FEM_1D_axial_CC0_H0_T1"  # sorts before TASK_1D (…_T0) by id, after it by tier
EARLY_OTHER = "axial_custom"  # outside the suite: sorts first by id, last in the papers' order


def test_rows_follow_the_papers_order_and_a_cell_scores_the_mean_of_its_repeats() -> None:
    eps = [
        episode("single", t, k, False, track="tests", score=s)
        for t, scores in ((T1_LATER, (0.5, 0.25)), (EARLY_OTHER, (1.0,)), (TASK_1D, (0.0, 1.0, 0.5)))
        for k, s in enumerate(scores)
    ]
    (table,) = paper_tables(eps)  # no code episode: the tests table still comes
    assert table.track == "tests"
    assert [r.task_id for r in table.rows] == [TASK_1D, T1_LATER, EARLY_OTHER]
    column = f"{MODEL} / single"
    assert [(r.cells[column].repeats, r.cells[column].score) for r in table.rows] == [(3, 0.5), (2, 0.375), (1, 1.0)]


def test_function_correctness_is_a_mean_over_tasks_whatever_their_repeats() -> None:
    code = [episode("single", TASK_1D, 0, True)] + [episode("single", TASK_2D, r, False) for r in range(3)]
    (metrics,) = paper.test_track_metrics(code, [])
    assert metrics.function_correctness == 0.5  # (1 + 0) / 2 tasks, not 1 of 4 episodes


def test_the_last_scored_attempt_counts_and_a_rewritten_one_wins() -> None:
    suite = episode("single", TASK_1D, 0, False, track="tests", score=0.5, attempts=3)
    all_detected = suite_outcome(TASK_1D, [(True, {"f1": True})])
    none_detected = suite_outcome(TASK_1D, [(True, {"f1": False})])
    records = [
        attempt(suite, 1, none_detected),
        attempt(suite, 2, none_detected),
        attempt(suite, 2, all_detected),  # attempt 2 scored again (a resumed run): the later record wins
        attempt(suite, 3, None),  # a failed model call: no verdict rests on it
    ]
    assert last_attempts(records)[suite.episode] is records[2]
    (metrics,) = paper.test_track_metrics([suite], records)
    assert (metrics.reference_pass, metrics.failures_detected, metrics.joint_success) == (1.0, 1.0, 0.5)


def test_a_near_miss_includes_its_bound_and_a_group_without_errors_has_no_median() -> None:
    def scored(agent: str, inputs: list[tuple[str, float | None]], passed: bool) -> AttemptRecord:
        return attempt(episode(agent, TASK_1D, 0, passed), 1, function_outcome(TASK_1D, inputs, passed))

    clean, near = diagnostics(  # by agent
        [
            scored("near", [("mismatch", 0.01)], False),  # exactly at the bound: a near miss
            scored("near", [("mismatch", 0.03)], False),
            scored("clean", [("match", None)], True),
        ],
        near_miss_error=0.01,
    )
    assert (near.agent, near.near_misses, near.near_miss_share, near.median_error) == ("near", 1, 0.5, 0.02)
    assert (clean.agent, clean.wrong_executable, clean.median_error, clean.near_miss_share) == ("clean", 0, None, None)


def test_an_attempt_scored_again_counts_once_in_the_diagnostics_as_its_latest_record(tmp_path: Path) -> None:
    # a session that ended in an error, its episode redone on resume (a finished one never is)
    wrong = episode("loop", TASK_1D, 0, False).model_copy(update={"status": "error"})
    right = episode("loop", TASK_1D, 0, True)
    records = [
        attempt(wrong, 1, function_outcome(TASK_1D, [("mismatch", 0.5)], False)),
        wrong,
        attempt(right, 1, function_outcome(TASK_1D, [("match", None)], True)),  # the later record wins
        right,
    ]
    (diag,) = build_report([make_run(tmp_path / "r", "r", records)]).diagnostics
    assert (diag.attempts, diag.executable, diag.wrong_executable, diag.median_error) == (1, 1, 0, None)


def test_the_pde_stage_table_and_margins_count_each_gate_over_the_one_before() -> None:
    def case_attempt(k: int, outcome: CaseOutcome) -> AttemptRecord:
        return attempt(episode("single", "poisson_1", k, outcome.passed, track="numpy-scipy"), 1, outcome)

    strict = CaseThresholds(
        e_base=1e-4, tau_acc=1e-3, t_base=1.0, tau_time=2.0, alpha_acc=10, tau_min=1e-6, alpha_time=2, t_floor=0.1
    )
    poisson = [
        case_outcome("poisson_1", 2e-4, 0.5).model_copy(update={"thresholds": strict}),  # passes all three
        case_outcome("poisson_1", 5e-4, 2.5).model_copy(update={"thresholds": strict}),  # accurate, too slow
        case_outcome("poisson_1", 3e-3, 0.8),  # not accurate (tau_time 1.0)
        case_outcome("poisson_1", None, 0.2),  # ran, wrong shape: no error measured
        case_outcome("poisson_1", None, 0.3, executed=False),  # timed, then NaN in the domain
    ]
    poisson[1] = poisson[1].model_copy(
        update={"stages": (*poisson[1].stages[:2], StageResult(stage="fast", passed=False))}
    )
    unmeasured = strict.model_copy(update={"tau_acc": 0.0, "tau_time": 0.0})
    poisson.append(case_outcome("poisson_1", 1e-4, 0.1).model_copy(update={"thresholds": unmeasured}))
    heat = [case_outcome("heat_1", None, None, executed=False, family="heat")]
    records = [case_attempt(k, o) for k, o in enumerate(poisson + heat)]

    heat_row, poisson_row = case_stage_rows(records)
    assert poisson_row == CaseStageRow(
        model=MODEL, agent="single", library="numpy-scipy", family="poisson",
        attempts=6, executes=5, accurate=3, fast=2,
        executes_rate=5 / 6, accurate_rate=3 / 5, fast_rate=2 / 3, pass_rate=2 / 6,
        median_error=3.5e-4,  # of 2e-4, 5e-4, 3e-3 and 1e-4: the attempts that executed and were measured
        median_seconds=0.5,  # of 0.5, 2.5, 0.8, 0.2 and 0.1
    )  # fmt: skip
    assert (heat_row.family, heat_row.attempts, heat_row.executes) == ("heat", 1, 0)
    assert (heat_row.executes_rate, heat_row.accurate_rate, heat_row.fast_rate, heat_row.pass_rate) == (
        0.0, None, None, 0.0
    )  # fmt: skip
    assert (heat_row.median_error, heat_row.median_seconds) == (None, None)

    heat_margins, poisson_margins = case_margins(records)
    # over the executed attempts with thresholds to divide by: error / tau_acc, time / tau_time
    assert poisson_margins.error_ratios == pytest.approx([0.2, 0.5, 3.0])
    assert poisson_margins.time_ratios == pytest.approx([0.25, 1.25, 0.8, 0.2])
    assert (heat_margins.error_ratios, heat_margins.time_ratios) == ([], [])
    exact = case_outcome("poisson_1", 0.0, 0.4).model_copy(update={"thresholds": strict})  # an exact solver
    (exact_margins,) = case_margins([case_attempt(0, exact)])
    assert (exact_margins.error_ratios, exact_margins.time_ratios) == ([0.0], [0.2])
    at_bounds = case_outcome("poisson_1", 1e-3, 2.0).model_copy(update={"thresholds": strict})  # ratios 1.0: within
    assert margin_rows(case_margins([case_attempt(0, exact), case_attempt(1, at_bounds)]))[1] == [
        [MODEL, "single", "numpy-scipy", "poisson", "0.5 [0.25, 0.75]", "2/2", "0.6 [0.4, 0.8]", "2/2"]
    ]


def test_the_pde_sections_name_the_gates_that_judged_each_attempt(report: Report) -> None:
    def case_attempt(k: int, outcome: CaseOutcome) -> AttemptRecord:
        return attempt(episode("single", "poisson_1", k, outcome.passed, track="numpy-scipy"), 1, outcome)

    ours = case_outcome("poisson_1", 2e-4, 0.5)
    assert ours.thresholds is not None
    published = ours.model_copy(
        update={"thresholds": ours.thresholds.model_copy(update={"gates": "published", "alpha_acc": 0.05})}
    )
    unjudged = ours.model_copy(update={"thresholds": None})  # a reply without code: no gate judged it
    records = [case_attempt(k, o) for k, o in enumerate((ours, published, unjudged))]
    labels = ["ours (alpha_acc 10, tau_min 1e-06, alpha_time 2, t_floor 0.1 s)", "published (per record)"]
    assert case_gates(records) == labels
    by_published = report.model_copy(update={"case_gates": ["published (per record)"]})
    margins, stages = CASE_REPORT.sections(by_published)
    assert margins.note == "Judged by the gates: published (per record)."
    assert stages.note is not None and stages.note.endswith(" Judged by the gates: published (per record).")
    assert stages.terminal_title == "PDE cases: per stage (share in brackets; gates: published (per record))"
    assert CASE_REPORT.notes(by_published) == ["PDE cases judged by the gates: published (per record)"]
    both = CASE_REPORT.sections(report.model_copy(update={"case_gates": labels}))[0]
    assert both.note == f"Judged by the gates: {labels[0]}; {labels[1]}."
    margins, stages = CASE_REPORT.sections(
        report.model_copy(update={"case_gates": []})
    )  # a report written before gates were named
    assert (margins.note, stages.terminal_title) == (None, "PDE cases: per stage (share in brackets)")
    assert CASE_REPORT.notes(report.model_copy(update={"case_gates": []})) == []


SENSITIVITY = CaseThresholds(
    e_base=1e-4, tau_acc=1e-3, t_base=1.0, tau_time=2.0, alpha_acc=10, tau_min=1e-6, alpha_time=2, t_floor=0.1
)


def recorded_case(error: float | None, seconds: float | None, **thresholds: float | None) -> CaseOutcome:
    th = SENSITIVITY.model_copy(update=thresholds)
    return case_outcome("poisson_1", error, seconds).model_copy(update={"thresholds": th})


def test_sensitivity_recomputes_a_verdict_against_both_bounds_and_their_floors() -> None:
    # recorded: accurate at error <= max(10 x 1e-4, 1e-6) = 1e-3, fast at time <= 2 x max(1.0, 0.1) = 2.0
    assert sensitivity.passes(recorded_case(1e-3, 2.0))  # both bounds included
    assert not sensitivity.passes(recorded_case(1.5e-3, 2.0)) and sensitivity.passes(
        recorded_case(1.5e-3, 2.0), alpha_acc=15
    )
    assert not sensitivity.passes(recorded_case(1e-3, 2.5)) and sensitivity.passes(
        recorded_case(1e-3, 2.5), alpha_time=2.5
    )
    assert not sensitivity.passes(recorded_case(1e-3, 1.5), alpha_time=1)  # a stricter target fails what passed
    assert not sensitivity.passes(recorded_case(5e-4, 1.0), alpha_acc=4)
    # the floors: a tiny e_base leaves the bound at tau_min, a tiny t_base at alpha_time x t_floor
    assert sensitivity.passes(recorded_case(1e-6, 1.0, e_base=1e-9)) and not sensitivity.passes(
        recorded_case(1.1e-6, 1.0, e_base=1e-9)
    )
    assert sensitivity.passes(
        recorded_case(1.1e-6, 1.0, e_base=1e-9), alpha_acc=2000
    )  # 2000 x 1e-9 = 2e-6 over the floor
    assert sensitivity.passes(recorded_case(1e-4, 0.2, t_base=0.01)) and not sensitivity.passes(
        recorded_case(1e-4, 0.21, t_base=0.01)
    )
    assert sensitivity.passes(recorded_case(1e-4, 0.21, t_base=0.01), alpha_time=3)
    # nothing to recompute from: never passes, whatever the alphas
    loose = {"alpha_acc": 1e9, "alpha_time": 1e9}
    not_run = case_outcome("poisson_1", 1e-4, 0.5, executed=False).model_copy(update={"thresholds": SENSITIVITY})
    unmeasured = [recorded_case(None, 0.5), recorded_case(float("nan"), 0.5), recorded_case(float("inf"), 0.5)]
    untimed = [recorded_case(1e-4, None), recorded_case(1e-4, 0.5, t_base=None)]
    for outcome in (
        not_run,
        *unmeasured,
        *untimed,
        case_outcome("poisson_1", 1e-4, 0.5).model_copy(update={"thresholds": None}),
    ):
        assert not sensitivity.passes(outcome) and not sensitivity.passes(outcome, **loose)


def test_sensitivity_curves_count_every_latest_scored_attempt_per_model_agent_and_library(tmp_path: Path) -> None:
    def case_attempt(agent: str, k: int, index: int, outcome: CaseOutcome | None) -> AttemptRecord:
        return attempt(episode(agent, "poisson_1", k, False, track="numpy-scipy"), index, outcome)

    records: list[AttemptRecord | EpisodeRecord] = [
        case_attempt("loop", 0, 1, recorded_case(3e-3, 0.5)),  # rescued at alpha_acc 30
        case_attempt("loop", 0, 2, recorded_case(5e-4, 1.5)),  # a feedback loop's attempts each count
        case_attempt("loop", 1, 0, recorded_case(1e-2, 0.5)),  # redone below (a resume): the later record counts
        case_attempt("loop", 1, 0, recorded_case(1e-4, 3.0)),  # passes at alpha_time 3
        case_attempt("loop", 2, 1, None),  # the model call failed: nothing scored
        case_attempt("single", 0, 1, recorded_case(1e-4, 0.5).model_copy(update={"library": "scikit-fem"})),
        attempt(episode("single", TASK_1D, 0, True), 1, function_outcome(TASK_1D, [("match", None)], True)),
    ]
    run = make_run(tmp_path / "run", "run", records)
    found = sensitivity.curves([run], alpha_acc=(1.0, 10.0, 30.0), alpha_time=(1.0, 2.0, 3.0))
    assert [(c.agent, c.library, c.varied, c.attempts, c.pass_rates) for c in found] == [
        ("loop", "numpy-scipy", "alpha_acc", 3, (0.0, 1 / 3, 2 / 3)),  # at alpha_time 2
        ("loop", "numpy-scipy", "alpha_time", 3, (0.0, 1 / 3, 2 / 3)),  # at alpha_acc 10
        ("single", "scikit-fem", "alpha_acc", 1, (1.0, 1.0, 1.0)),
        ("single", "scikit-fem", "alpha_time", 1, (1.0, 1.0, 1.0)),
    ]
    assert {(c.model, c.alphas) for c in found} == {(MODEL, (1.0, 10.0, 30.0)), (MODEL, (1.0, 2.0, 3.0))}


def test_the_correctness_plot_shows_each_groups_headline_rate(tmp_path: Path) -> None:
    # no agent ran both tracks: one bar per group, the tests track's at its joint test success
    coder = episode("coder", TASK_1D, 0, True)
    tester = episode("tester", TASK_1D, 0, False, track="tests", score=0.5, stage=("tests", "failure_not_detected"))
    records: list[AttemptRecord | EpisodeRecord] = [
        attempt(coder, 0, function_outcome(TASK_1D, [("match", None)], True)),
        coder,
        attempt(tester, 0, suite_outcome(TASK_1D, [(True, {"f1": True, "f2": True}), (False, {"f1": True})])),
        tester,
    ]
    report = build_report([make_run(tmp_path / "r", "r", records)])
    ax = correctness_figure(report).axes[0]
    assert [(t.get_text(), p.get_height()) for t, p in zip(ax.get_xticklabels(), ax.patches, strict=True)] == [
        ("coder / code", 1.0),
        ("tester / tests", 0.5),
    ]
    assert ax.get_ylabel() == "correct / joint test success"


def test_a_bars_whisker_spans_its_interval_which_need_not_be_symmetric(tmp_path: Path) -> None:
    records: list[AttemptRecord | EpisodeRecord] = []
    for task, passed in ((TASK_1D, True), (TASK_2D, True), (TASK_3D, True), (TASK_OTHER, False)):
        ep = episode("coder", task, 0, passed)
        records += [attempt(ep, 0, function_outcome(task, [("match" if passed else "mismatch", None)], passed)), ep]
    report = build_report([make_run(tmp_path / "r", "r", records)])
    (group,) = report.groups
    e = group.correct
    assert e.value == 0.75 and e.high - e.value != e.value - e.low  # 3 of 4 tasks: closer to 1 above than below
    ax = correctness_figure(report).axes[0]
    (bar,) = ax.patches
    (bars,) = [c for c in ax.containers if isinstance(c, BarContainer)]
    assert bars.errorbar is not None
    (whisker,) = bars.errorbar.lines[2][0].get_segments()
    assert bar.get_height() == 0.75
    assert [y for _, y in whisker] == pytest.approx([e.low, e.high])

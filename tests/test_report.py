"""The reporting module: statistics against hand-computed values, tables from
synthetic run directories, Markdown rows, PNG plots, unknown cost."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import pytest
from rich.console import Console
from scipy.stats import binomtest

from fembench_agents.report import (
    Report,
    ReportSettings,
    build_report,
    render_markdown,
    rich_tables,
    write_report,
)
from fembench_agents.report.stats import (
    bootstrap_ci,
    k_of_n,
    majority_passed,
    mcnemar_exact,
    pass_at_k,
)
from fembench_agents.runs.log import EpisodeRecord, RunLog, RunManifest, episode_key, write_manifest

MODEL = "mock/model"
TASKS = ["t1", "t2", "t3", "t4", "t5"]
# passes per task out of 3 repeats, and how the failures failed
PASSES = {"single": [3, 2, 1, 0, 0], "loop": [3, 3, 3, 2, 1]}
FAILURES = {
    "single": {
        "t2": ("correct", "wrong_output"),
        "t3": ("correct", "wrong_output"),
        "t4": ("parse", "syntax_error"),
        "t5": ("execute", "runtime_error"),
    },
    "loop": {"t4": ("correct", "wrong_output"), "t5": ("correct", "wrong_output")},
}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def episode(
    agent: str,
    task: str,
    repeat: int,
    passed: bool,
    *,
    track: str = "code",
    score: float | None = None,
    stage: tuple[str, str] | None = None,
    cost: float | None = 0.01,
    status: str = "done",
) -> EpisodeRecord:
    return EpisodeRecord(
        episode=episode_key(MODEL, agent, track, task, repeat),
        task_id=task,
        track=track,  # type: ignore[arg-type]
        agent=agent,
        model=MODEL,
        repeat=repeat,
        status=status,
        passed=passed,  # type: ignore[arg-type]
        score=float(passed) if score is None else score,
        attempts=1 if agent == "single" else 3,
        first_pass_attempt=1 if passed else None,
        failed_stage=None if passed else stage[0] if stage else None,
        reason=None if passed else stage[1] if stage else None,
        prompt_tokens=100,
        completion_tokens=50,
        cost_usd=cost,
        model_seconds=1.0,
        seconds=2.0,
    )


def make_run(directory: Path, run_id: str, records: list[EpisodeRecord]) -> Path:
    directory.mkdir(parents=True)
    write_manifest(directory, RunManifest(run_id=run_id, config={}, task_hashes={}, versions={}))
    with RunLog(directory) as log:
        for r in records:
            log.append(r)
    return directory


def code_episodes(agent: str) -> list[EpisodeRecord]:
    out = []
    for task, passes in zip(TASKS, PASSES[agent], strict=True):
        for repeat in range(3):
            passed = repeat < passes
            cost = None if (agent == "loop" and task == "t5" and repeat == 2) else 0.01
            stage = ("model_error", "model_error") if cost is None else FAILURES[agent].get(task)
            out.append(episode(agent, task, repeat, passed, stage=stage, cost=cost))
    return out


@pytest.fixture
def code_runs(tmp_path: Path) -> list[Path]:
    return [
        make_run(tmp_path / "run-single", "run-single", code_episodes("single")),
        make_run(tmp_path / "run-loop", "run-loop", code_episodes("loop")),
    ]


@pytest.fixture
def report(code_runs: list[Path]) -> Report:
    return build_report(code_runs)


# ---------------------------------------------------------------- statistics


def exact_pass_at_k(n: int, c: int, k: int) -> Fraction:
    return 1 - Fraction(math.comb(n - c, k), math.comb(n, k))


def test_pass_at_k_hand_values() -> None:
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)  # 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(3, 1, 2) == pytest.approx(2 / 3)  # 1 - C(2,2)/C(3,2)
    assert pass_at_k(20, 5, 10) == pytest.approx(float(exact_pass_at_k(20, 5, 10)), rel=1e-12)


def test_pass_at_k_edge_cases() -> None:
    assert pass_at_k(4, 4, 1) == 1.0  # n = c
    assert pass_at_k(4, 0, 1) == 0.0 and pass_at_k(4, 0, 4) == 0.0  # c = 0
    assert pass_at_k(5, 3, 3) == 1.0  # k > n - c: every draw of 3 holds a pass
    assert pass_at_k(1, 1, 1) == 1.0 and pass_at_k(1, 0, 1) == 0.0


def test_pass_at_k_is_stable_for_large_n() -> None:
    # C(5000, 2500) overflows a float; the product form does not
    value = pass_at_k(5000, 3, 2500)
    assert value == pytest.approx(float(exact_pass_at_k(5000, 3, 2500)), rel=1e-9)
    assert pass_at_k(2000, 1, 1) == pytest.approx(1 / 2000, rel=1e-12)


@pytest.mark.parametrize(("n", "c", "k"), [(3, 4, 1), (3, -1, 1), (3, 1, 0), (3, 1, 4), (0, 0, 1)])
def test_pass_at_k_rejects_bad_arguments(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError, match="pass@k"):
        pass_at_k(n, c, k)


def test_k_of_n_and_majority() -> None:
    assert k_of_n([(3, 3), (3, 2), (3, 1), (3, 0), (3, 0)]) == {1: 3, 2: 2, 3: 1}
    assert k_of_n([]) == {}
    assert majority_passed(3, 2) and not majority_passed(2, 1) and not majority_passed(3, 1)


def test_bootstrap_ci_contains_estimate_and_is_reproducible() -> None:
    values = [1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0.5, 0.25]
    mean = sum(values) / len(values)
    low, high = bootstrap_ci(values, seed=7)
    assert low <= mean <= high and low < high
    assert (low, high) == bootstrap_ci(values, seed=7)
    assert (low, high) != bootstrap_ci(values, seed=8)
    narrow = bootstrap_ci(values, confidence=0.5, seed=7)
    assert low <= narrow[0] <= narrow[1] <= high
    assert bootstrap_ci([0.4], seed=1) == (0.4, 0.4)
    assert bootstrap_ci([1, 1, 1]) == (1.0, 1.0)
    with pytest.raises(ValueError, match="at least one"):
        bootstrap_ci([])


def test_mcnemar_against_hand_computed_binomial() -> None:
    # 1 task only A solves, 6 only B solves: p = 2 * P[X <= 1], X ~ Bin(7, 1/2) = 2 * 8/128
    a = [True] * 3 + [True] + [False] * 6 + [False] * 2
    b = [True] * 3 + [False] + [True] * 6 + [False] * 2
    result = mcnemar_exact(a, b)
    assert (result.pairs, result.both, result.a_only, result.b_only, result.neither) == (12, 3, 1, 6, 2)
    assert result.p_value == pytest.approx(0.125)
    assert result.p_value == pytest.approx(binomtest(1, 7, 0.5).pvalue)
    assert mcnemar_exact([False] * 5, [True] * 5).p_value == pytest.approx(2 / 32)
    assert mcnemar_exact([True, False, True, False], [False, True, False, True]).p_value == 1.0
    assert mcnemar_exact([True, False], [True, False]).p_value == 1.0  # no discordant pairs
    with pytest.raises(ValueError, match="length"):
        mcnemar_exact([True], [True, False])


# ---------------------------------------------------------------- tables


def test_groups_from_synthetic_runs(report: Report) -> None:
    assert [r.run_id for r in report.runs] == ["run-single", "run-loop"]
    assert [(g.agent, g.track) for g in report.groups] == [("loop", "code"), ("single", "code")]
    loop, single = report.groups
    assert (single.tasks, single.repeats_min, single.repeats_max, single.episodes) == (5, 3, 3, 15)
    assert (single.passed, single.tasks_solved, loop.passed, loop.tasks_solved) == (6, 2, 12, 4)
    assert single.pass_at_k[1] == pytest.approx(0.4)
    assert single.pass_at_k[2] == pytest.approx((1 + 1 + 2 / 3) / 5)
    assert single.pass_at_k[3] == pytest.approx(0.6)
    assert loop.pass_at_k[3] == pytest.approx(1.0)
    assert single.k_of_n == {1: 3, 2: 2, 3: 1} and loop.k_of_n == {1: 5, 2: 4, 3: 3}
    assert single.correct.value == pytest.approx(0.4)
    assert single.correct.low <= 0.4 <= single.correct.high
    assert single.joint_tests is None
    assert single.stage_failures == {"correct": 3, "execute": 3, "parse": 3}
    assert single.failure_reasons == {"correct/wrong_output": 3, "execute/runtime_error": 3, "parse/syntax_error": 3}
    assert loop.stage_failures == {"correct": 2, "model_error": 1}
    assert (single.prompt_tokens, single.completion_tokens) == (1500, 750)
    assert single.seconds == pytest.approx(30.0) and single.model_seconds == pytest.approx(15.0)
    assert single.runs == ["run-single"]


def test_unknown_cost_propagates(report: Report, tmp_path: Path) -> None:
    loop, single = report.groups
    assert loop.cost_usd is None
    assert single.cost_usd == pytest.approx(0.15)
    assert json.loads(report.model_dump_json())["groups"][0]["cost_usd"] is None
    md = render_markdown(report)
    loop_row = next(line for line in md.splitlines() if line.startswith(f"| {MODEL} | loop | code |"))
    single_row = next(line for line in md.splitlines() if line.startswith(f"| {MODEL} | single | code |"))
    assert "| unknown |" in loop_row and "| $0.1500 |" in single_row


def test_per_task_table_and_paired_test(report: Report) -> None:
    (table,) = report.task_tables
    assert (table.model, table.track, table.agents) == (MODEL, "code", ["loop", "single"])
    cells = {r.task_id: (r.cells["loop"].passes, r.cells["single"].passes) for r in table.rows}
    assert cells == {"t1": (3, 3), "t2": (3, 2), "t3": (3, 1), "t4": (2, 0), "t5": (1, 0)}
    (paired,) = report.paired
    # majority-solved: loop t1-t4, single t1-t2 -> discordant 2 (loop only) and 0
    assert (paired.agent_a, paired.agent_b, paired.tasks) == ("loop", "single", 5)
    assert (paired.both, paired.a_only, paired.b_only, paired.neither) == (2, 2, 0, 1)
    assert paired.p_value == pytest.approx(0.5)


def test_markdown_rows(report: Report) -> None:
    md = render_markdown(report)
    lines = md.splitlines()
    assert "| t3 | 3/3 | 1/3 |" in lines
    assert "| t5 | 1/3 | 0/3 |" in lines
    cells = [line.strip("| ").split(" | ") for line in lines[lines.index("## Summary") :]]
    summary = {c[1]: c[3:] for c in cells[:6] if c[0] == MODEL}
    # passed, solved, correct [interval], pass@1, pass@k, k-of-n, joint tests, calls (reused), tokens, cost, time;
    # the intervals: percentile bootstrap over the tasks' shares (single: 1, 2/3, 1/3, 0, 0), seed 0
    assert summary["single"] == [
        "6/15", "2/5", "0.400 [0.067, 0.733]", "0.400", "0.600 (k=3)", "1:3 2:2 3:1", "-", "0 (0)", "1,500 / 750",
        "$0.1500", "30.0",
    ]  # fmt: skip
    assert summary["loop"] == [
        "12/15", "4/5", "0.800 [0.533, 1.000]", "0.800", "1.000 (k=3)", "1:5 2:4 3:3", "-", "0 (0)", "1,500 / 750",
        "unknown", "30.0",
    ]  # fmt: skip
    assert f"| {MODEL} | code | loop | single | 5 | 2 | 2 | 0 | 1 | 0.5 |" in lines
    stage_header = next(line for line in lines if line.startswith("| Model | Agent | Track | Failed |"))
    assert stage_header.endswith("| parse | execute | correct | model_error |")
    assert f"| {MODEL} | single | code | 9/15 | 3 | 3 | 3 | 0 |" in lines


def test_single_repeat_cells_are_yes_no(tmp_path: Path) -> None:
    run = make_run(
        tmp_path / "r",
        "r",
        [episode("single", t, 0, t in ("t1", "t2"), stage=("parse", "syntax_error")) for t in TASKS],
    )
    report = build_report([run])
    lines = render_markdown(report).splitlines()
    assert "| t1 | Y |" in lines and "| t3 | N |" in lines
    (g,) = report.groups
    assert g.pass_at_k == {1: pytest.approx(0.4)} and report.paired == []


def test_tests_track_joint_success(tmp_path: Path) -> None:
    scores = {"t1": 1.0, "t2": 0.5, "t3": 0.0, "t4": 0.75, "t5": 0.25}
    records = [
        episode("single", t, r, s == 1.0, track="tests", score=s, stage=("tests", "failure_not_detected"))
        for t, s in scores.items()
        for r in range(2)
    ]
    report = build_report([make_run(tmp_path / "r", "r", records)])
    (g,) = report.groups
    assert g.joint_tests is not None and g.joint_tests.value == pytest.approx(0.5)
    assert g.joint_tests.low <= 0.5 <= g.joint_tests.high
    assert g.correct.value == pytest.approx(0.2) and g.stage_failures == {"tests": 8}
    assert "| t2 | 0/2 (0.50) |" in render_markdown(report).splitlines()


def test_resumed_error_is_replaced_and_duplicates_are_refused(tmp_path: Path) -> None:
    records = [
        episode("single", "t1", 0, False, status="error", cost=None),
        episode("single", "t1", 0, True),
        episode("single", "t2", 0, False, status="error"),
    ]
    run = make_run(tmp_path / "r", "r", records)
    (g,) = build_report([run]).groups
    # the replaced error record's unknown cost is not counted; the kept one's is
    assert (g.episodes, g.passed, g.errors, g.cost_usd) == (2, 1, 1, pytest.approx(0.02))
    assert g.stage_failures == {"error": 1}
    # the session records a model failure before any scored attempt as stage "model"
    model_down = episode("single", "t1", 0, False, status="error", stage=("model", "model_error"))
    (g,) = build_report([make_run(tmp_path / "m", "m", [model_down])]).groups
    assert g.stage_failures == {"model_error": 1} and g.failure_reasons == {"model_error": 1}
    twin = make_run(tmp_path / "twin", "twin", [episode("single", "t1", 0, True)])
    with pytest.raises(ValueError, match="appears in run r and in run twin"):
        build_report([run, twin])


def test_not_a_run_directory(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="not a run directory"):
        build_report([tmp_path])


def test_report_round_trips_through_json(report: Report) -> None:
    again = Report.model_validate_json(report.model_dump_json())
    assert again == report


def test_settings_are_recorded_and_reproducible(code_runs: list[Path]) -> None:
    settings = ReportSettings(resamples=500, confidence=0.9, seed=3)
    a, b = build_report(code_runs, settings), build_report(list(reversed(code_runs)), settings)
    assert a.settings == settings
    assert [g.correct for g in a.groups] == [g.correct for g in b.groups]


def test_rich_tables_render(report: Report) -> None:
    console = Console(record=True, width=250)
    for table in rich_tables(report):
        console.print(table)
    text = console.export_text()
    assert "single" in text and "unknown" in text and "Paired tests" in text


# ---------------------------------------------------------------- files and plots


def assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    assert len(data) > 5_000


def test_write_report_files(report: Report, tmp_path: Path) -> None:
    written = write_report(report, tmp_path / "out")
    assert set(written) == {"json", "markdown", "correctness", "stage_failures", "pass_rate_cost"}
    assert Report.model_validate_json(written["json"].read_text()) == report
    assert json.loads(written["json"].read_text())["schema_version"] == 1
    assert (written["json"].name, written["markdown"].name) == ("report.json", "report.md")
    md = written["markdown"].read_text()
    assert "](plots/correctness.png)" in md and "](plots/stage_failures.png)" in md
    assert_png(written["correctness"])
    assert_png(written["stage_failures"])


def test_plots_with_one_agent_and_with_both_tracks(tmp_path: Path) -> None:
    one = build_report([make_run(tmp_path / "one", "one", code_episodes("single"))])
    for p in write_report(one, tmp_path / "one-out").values():
        if p.suffix == ".png":
            assert_png(p)
    tests_records = [
        episode(agent, t, 0, i % 2 == 0, track="tests", score=i / 4, stage=("tests", "missing_test"))
        for agent in ("single", "loop")
        for i, t in enumerate(TASKS)
    ]
    both = build_report(
        [
            make_run(tmp_path / "a", "a", code_episodes("single") + code_episodes("loop")),
            make_run(tmp_path / "b", "b", tests_records),
        ]
    )
    assert {(g.agent, g.track) for g in both.groups} == {(a, t) for a in ("single", "loop") for t in ("code", "tests")}
    assert len(both.paired) == 2
    for p in write_report(both, tmp_path / "both-out").values():
        if p.suffix == ".png":
            assert_png(p)


def test_empty_and_failure_free_reports_still_plot(tmp_path: Path) -> None:
    empty = build_report([make_run(tmp_path / "e", "e", [])])
    assert empty.groups == [] and "No finished episodes." in render_markdown(empty)
    perfect = build_report([make_run(tmp_path / "p", "p", [episode("single", t, 0, True) for t in TASKS])])
    for report, name in ((empty, "e-out"), (perfect, "p-out")):
        for p in write_report(report, tmp_path / name).values():
            if p.suffix == ".png":
                assert PNG_SIGNATURE == p.read_bytes()[:8]

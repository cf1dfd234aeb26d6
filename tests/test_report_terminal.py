"""The terminal's report: short by default (per-task tables, the summary fitted to
the width, paired tests, one line saying where the rest is), every table with
--full, and never a table with nothing to show or a cut name."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from run_builders import TASK_1D, attempt, episode, function_outcome, make_run
from test_report_paper import mixed_records

from fembench_agents.report import build_report
from fembench_agents.report.render import rich_tables
from fembench_agents.report.schema import Estimate
from fembench_agents.report.terminal import fitted, pointer, says_something, table, terminal_tables

PER_TASK = [
    ("Per task: mock/model, code track", 4),
    ("Per task: mock/model, numpy-scipy track", 1),
    ("Per task: mock/model, tests track", 2),
]


def test_the_short_report_is_per_task_summary_and_paired_tests(tmp_path: Path) -> None:
    report = build_report([make_run(tmp_path / "mixed", "mixed", mixed_records())])
    short = terminal_tables(report, 160)
    assert [(t.title, t.row_count) for t in short] == [
        *PER_TASK,
        ("Summary", 4),
        ("Paired tests (exact McNemar, tasks)", 1),
    ]
    assert [c.header for c in short[3].columns] == [
        "Model",
        "Agent",
        "Track",
        "Passed",
        "Solved",
        "Correct [95% CI]",
        "pass@k",
        "Joint tests [95% CI]",
        "Cost",
        "Time (s)",
    ]
    full = terminal_tables(report, 160, full=True)
    assert [t.title for t in full] == [t.title for t in rich_tables(report)]  # nothing here is empty


def test_the_summary_drops_columns_not_names_to_fit() -> None:
    headers = ["Model", "Agent", "Track", "Passed", "Solved", "Correct [95% CI]", "pass@1", "pass@k", "k-of-n"]
    headers += ["Joint tests [95% CI]", "Model calls (reused)", "Tokens (prompt/completion)", "Cost", "Time (s)"]
    model, agent = "anthropic/claude-3-5-haiku-20241022", "feedback-loop:3+prompt:prompts/long_name.md"
    row = [model, agent, "code", "5/6", "2/3", "0.833 [0.500, 1.000]", "0.833", "1.000 (k=2)", "1:3 2:2", "-"]
    row += ["6 (0)", "600 / 240", "$0.0060", "6.0"]
    kept = {w: fitted((headers, [row]), w)[0] for w in (250, 160, 140, 120, 80)}
    assert kept[250] == [h for h in headers if h != "Joint tests [95% CI]"]  # all "-": nothing to show
    assert kept[160] == ["Model", "Agent", "Track", "Passed", "Solved", "Correct [95% CI]", "pass@k", "Cost"]
    assert kept[140] == ["Model", "Agent", "Track", "Passed", "Correct [95% CI]", "Cost"]
    # without Cost still 125 wide: the names stack, one per line, whole
    assert kept[120] == kept[80] == ["Model / Agent / Track", "Passed", "Correct [95% CI]"]
    assert fitted((headers, [row]), 80) == (
        ["Model / Agent / Track", "Passed", "Correct [95% CI]"],
        [[f"{model}\n{agent}\ncode", "5/6", "0.833 [0.500, 1.000]"]],
    )
    console = Console(record=True, width=80)
    console.print(table("Summary", fitted((headers, [row]), 80)))
    lines = console.export_text().splitlines()
    assert any(model in line for line in lines) and any(agent in line for line in lines)
    assert max(len(line) for line in lines) <= 80


def test_a_table_says_something_only_outside_its_key_columns() -> None:
    assert not says_something((["Task", "single"], []))
    assert not says_something((["Model", "Agent", "Track", "Joint"], [["m", "a", "code", "-"], ["m", "b", "code", ""]]))
    assert says_something((["Model", "Agent", "Track", "Joint"], [["m", "a", "code", "-"], ["m", "b", "code", "0"]]))


def test_a_breakdown_with_one_value_each_stays_in_the_file_not_the_terminal(tmp_path: Path) -> None:
    records: list = []
    for repeat, passed in enumerate([True, False]):
        ep = episode("single", TASK_1D, repeat, passed)
        records += [attempt(ep, 1, function_outcome(TASK_1D, [("match" if passed else "mismatch", 0.0)], passed)), ep]
    report = build_report([make_run(tmp_path / "one", "one", records)])
    every = [t.title for t in rich_tables(report)]
    assert {"By tier", "By knowledge class", "By domain"} <= set(every)
    full = [t.title for t in terminal_tables(report, 160, full=True)]
    assert full == [t for t in every if not t.startswith("By ")]


def test_the_line_under_the_tables_says_where_the_rest_is() -> None:
    assert pointer(["runs/main/a", "runs/main/b"], False, None) == (
        "`fembench-agents report runs/main/a runs/main/b --out DIR` writes report.md; every table: "
        "`fembench-agents report runs/main/a runs/main/b --full`; episodes and attempts: "
        "`fembench-agents view runs/main/a runs/main/b`"
    )
    assert pointer(["r"], True, "r/report/report.md") == (
        "the full report is in r/report/report.md; episodes and attempts: `fembench-agents view r`"
    )


def test_cost_per_attempt_episode_and_solved_task(tmp_path: Path) -> None:
    from fembench_agents.report.plots import cost_figure, cost_per_task
    from fembench_agents.report.render import cost_rows

    report = build_report([make_run(tmp_path / "mixed", "mixed", mixed_records())])
    loop = next(g for g in report.groups if g.agent == "loop")
    # 3 tasks, 2 solved; 12 attempts over 6 episodes; 1,800 tokens; $0.03; and a group with an unpriced call
    loop = loop.model_copy(update={"attempts": 12, "prompt_tokens": 1500, "completion_tokens": 300, "cost_usd": 0.03})
    unpriced = loop.model_copy(update={"agent": "paid", "cost_usd": None})
    report = report.model_copy(update={"groups": [loop, unpriced]})
    assert cost_rows(report)[1] == [
        ["mock/model", "loop", "code", "12", "150", "300", "900", "$0.0025", "$0.0050", "$0.0150"],
        ["mock/model", "paid", "code", "12", "150", "300", "900", "unpriced", "unpriced", "unpriced"],
    ]
    assert (cost_per_task(loop), cost_per_task(unpriced)) == (0.01, None)
    ax = cost_figure(report).axes[0]
    assert ax.get_title() == "Pass rate against cost (1 unpriced not shown)"
    (bars,) = ax.containers  # one point per priced group, with its interval
    points = bars.lines[0]
    assert (list(points.get_xdata()), list(points.get_ydata())) == ([0.01], [loop.correct.value])
    # every call free (the embedded model): tokens per task stand in for dollars, which tell nothing apart
    free = [loop.model_copy(update={"cost_usd": 0.0}), unpriced.model_copy(update={"cost_usd": 0.0, "agent": "b"})]
    free[1] = free[1].model_copy(update={"prompt_tokens": 3000})
    ax = cost_figure(report.model_copy(update={"groups": free})).axes[0]
    assert ax.get_title() == "Pass rate against tokens"
    assert ax.get_xlabel() == "tokens per task (prompt + completion; every call was free)"
    assert [list(c.lines[0].get_xdata()) for c in ax.containers] == [[600.0], [1100.0]]
    # one priced call that cost something: dollars again, the free group at $0
    mixed = [free[0], free[1].model_copy(update={"cost_usd": 0.03})]
    ax = cost_figure(report.model_copy(update={"groups": mixed})).axes[0]
    assert ax.get_title() == "Pass rate against cost"
    assert [list(c.lines[0].get_xdata()) for c in ax.containers] == [[0.0], [0.01]]


def test_test_time_scaling_shows_the_oracle_choice_as_the_upper_bound_it_is(tmp_path: Path) -> None:
    from fembench_agents.report.render import render_markdown, scaling_rows

    report = build_report([make_run(tmp_path / "mixed", "mixed", mixed_records())])
    assert scaling_rows(report)[1] == [] and "Test-time scaling" not in render_markdown(report)
    loop = next(g for g in report.groups if g.agent == "loop")
    best = loop.model_copy(update={"agent": "best-of:2", "oracle": Estimate(value=1.0, low=1.0, high=1.0)})
    report = report.model_copy(update={"groups": [loop, best]})
    assert scaling_rows(report) == (
        ["Model", "Agent", "Track", "Chosen: correct [95% CI]", "Oracle choice, upper bound [95% CI]"],
        [["mock/model", "best-of:2", "code", "0.833 [0.500, 1.000]", "1.000 [1.000, 1.000]"]],
    )
    assert "## Test-time scaling" in render_markdown(report) and "an upper bound, not a score" in render_markdown(
        report
    )
    assert "Test-time scaling (oracle choice: an upper bound)" in [t.title for t in terminal_tables(report, 160)]

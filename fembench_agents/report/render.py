"""Text renderings of a `Report`: Markdown for files, rich tables for the
terminal. Both read the same rows, so they never disagree."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.table import Table

from fembench_agents.report.contamination_view import contamination_sections
from fembench_agents.report.kind_parts import ReportSection, Rows, kind_sections, report_part
from fembench_agents.report.schema import (
    STAGE_ORDER,
    Estimate,
    GroupSummary,
    Report,
    RunInfo,
    TaskCell,
    TaskTable,
)


def fmt_estimate(e: Estimate | None) -> str:
    return "-" if e is None else f"{e.value:.3f} [{e.low:.3f}, {e.high:.3f}]"


def fmt_cost(cost: float | None) -> str:
    return "unknown" if cost is None else f"${cost:.4f}"


def fmt_cell(cell: TaskCell | None, track: str) -> str:
    """Y/N for a single repeat, passes/repeats with several; a graded track
    (the tests track) adds the mean score (the joint test score)."""
    if cell is None:
        return "-"
    text = ("Y" if cell.passes else "N") if cell.repeats == 1 else f"{cell.passes}/{cell.repeats}"
    return f"{text} ({cell.score:.2f})" if report_part(track).graded else text


def _pass_at_k(g: GroupSummary) -> str:
    k = max(g.pass_at_k)
    return "-" if k == 1 else f"{g.pass_at_k[k]:.3f} (k={k})"


def summary_rows(report: Report) -> Rows:
    conf = round(report.settings.confidence * 100)
    headers = [
        "Model",
        "Agent",
        "Track",
        "Passed",
        "Solved",
        f"Correct [{conf}% CI]",
        "pass@1",
        "pass@k",
        "k-of-n",
        f"Joint tests [{conf}% CI]",
        "Model calls (reused)",
        "Tokens (prompt/completion)",
        "Cost",
        "Time (s)",
    ]
    rows = [
        [
            g.model,
            g.agent,
            g.track,
            f"{g.passed}/{g.episodes}",
            f"{g.tasks_solved}/{g.tasks}",
            fmt_estimate(g.correct),
            f"{g.pass_at_k[1]:.3f}",
            _pass_at_k(g),
            " ".join(f"{k}:{v}" for k, v in g.k_of_n.items()),
            fmt_estimate(g.joint_tests),
            f"{g.model_calls} ({g.reused_calls})",
            f"{g.prompt_tokens:,} / {g.completion_tokens:,}",
            fmt_cost(g.cost_usd),
            f"{g.seconds:.1f}",
        ]
        for g in report.groups
    ]
    return headers, rows


def _per(total: float | None, count: int, money: bool) -> str:
    if total is None:
        return "unpriced"
    if count == 0:
        return "-"
    return f"${total / count:.4f}" if money else f"{total / count:,.0f}"


def cost_rows(report: Report) -> Rows:
    """Tokens (prompt + completion) and dollars per attempt, per episode and per solved task:
    what a pass costs beside how often it comes."""
    headers = ["Model", "Agent", "Track", "Attempts", "Tokens / attempt", "Tokens / episode"]
    headers += ["Tokens / solved task", "$ / attempt", "$ / episode", "$ / solved task"]
    rows = []
    for g in report.groups:
        tokens = float(g.prompt_tokens + g.completion_tokens)
        rows.append(
            [
                g.model,
                g.agent,
                g.track,
                str(g.attempts),
                _per(tokens, g.attempts, False),
                _per(tokens, g.episodes, False),
                _per(tokens, g.tasks_solved, False),
                _per(g.cost_usd, g.attempts, True),
                _per(g.cost_usd, g.episodes, True),
                _per(g.cost_usd, g.tasks_solved, True),
            ]
        )
    return headers, rows


def scaling_rows(report: Report) -> Rows:
    """Test-time scaling: the sample a scaffold chose beside the oracle choice among the same
    samples (chosen by the hidden verdict: an upper bound no agent can reach by itself)."""
    conf = round(report.settings.confidence * 100)
    headers = ["Model", "Agent", "Track", f"Chosen: correct [{conf}% CI]", f"Oracle choice, upper bound [{conf}% CI]"]
    rows = [
        [g.model, g.agent, g.track, fmt_estimate(g.correct), fmt_estimate(g.oracle)]
        for g in report.groups
        if g.oracle is not None
    ]
    return headers, rows


def stage_columns(report: Report) -> list[str]:
    present = {s for g in report.groups for s in g.stage_failures}
    return [s for s in STAGE_ORDER if s in present] + sorted(present - set(STAGE_ORDER))


def stage_rows(report: Report) -> Rows:
    stages = stage_columns(report)
    headers = ["Model", "Agent", "Track", "Failed", *stages]
    rows = [
        [
            g.model,
            g.agent,
            g.track,
            f"{g.episodes - g.passed}/{g.episodes}",
            *(str(g.stage_failures.get(s, 0)) for s in stages),
        ]
        for g in report.groups
    ]
    return headers, rows


def reason_rows(report: Report) -> Rows:
    headers = ["Model", "Agent", "Track", "Stage/reason", "Episodes"]
    rows = [
        [g.model, g.agent, g.track, reason, str(n)] for g in report.groups for reason, n in g.failure_reasons.items()
    ]
    return headers, rows


def paired_rows(report: Report) -> Rows:
    headers = ["Model", "Track", "Agent A", "Agent B", "Tasks", "Both", "A only", "B only", "Neither", "p"]
    rows = [
        [
            p.model,
            p.track,
            p.agent_a,
            p.agent_b,
            str(p.tasks),
            str(p.both),
            str(p.a_only),
            str(p.b_only),
            str(p.neither),
            f"{p.p_value:.4g}",
        ]
        for p in report.paired
    ]
    return headers, rows


def task_table_title(t: TaskTable) -> str:
    return f"Per task: {t.model}, {t.track} track"


def task_rows(t: TaskTable) -> Rows:
    return (["Task", *t.agents], [[r.task_id, *(fmt_cell(r.cells.get(a), t.track) for a in t.agents)] for r in t.rows])


def md_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return [line(headers), "|" + "---|" * len(headers), *(line(r) for r in rows), ""]


def budget_lines(report: Report) -> list[str]:
    """The runs' episode budgets, said once when they agree and flagged when they differ (the
    agents compared then did not work under the same caps), then the episodes each cap ended."""
    budgets = {r.run_id: r.episode_budget or "none" for r in report.runs}
    if set(budgets.values()) == {"none"}:
        return []
    if len(set(budgets.values())) == 1:
        out = [f"Episode budget: {next(iter(budgets.values()))} (every run)."]
    else:
        each = "; ".join(f"{run}: {b}" for run, b in budgets.items())
        out = [
            f"**Warning**: the runs' episode budgets differ ({each}): their agents did not work under the same caps."
        ]
    out += [
        f"{g.model} / {g.agent} / {g.track}: "
        + ", ".join(f"{n} episode(s) ended by {cap}" for cap, n in g.budget_stops.items())
        + "."
        for g in report.groups
        if g.budget_stops
    ]
    return out


def isolation_warnings(report: Report) -> list[str]:
    """One line per run whose generated code ran with less than namespaced isolation."""
    return [
        f"run {r.run_id}: {r.isolation.summary()}"
        for r in report.runs
        if r.isolation is not None and not r.isolation.confined
    ]


def _isolation_cell(run: RunInfo) -> str:
    if run.isolation is None:
        return "not recorded"
    accepted = " (accepted)" if run.isolation.accepted_weak else ""
    return f"{run.isolation.level}{accepted}"


def _md_section(section: ReportSection) -> list[str]:
    note = [section.note, ""] if section.note else []
    return [f"## {section.title}", "", *note, *md_table(*section.rows)]


def render_markdown(report: Report, plots: Mapping[str, str] | None = None) -> str:
    """The whole report as Markdown; `plots` maps a caption to an image path
    relative to the Markdown file."""
    s = report.settings
    out = ["# Comparison report", ""]
    out += md_table(
        ["Run", "Path", "Episodes", "Git commit", "Isolation"],
        [[r.run_id, r.path, str(r.episodes), r.git_commit or "-", _isolation_cell(r)] for r in report.runs],
    )
    out += [f"**Warning**: {w}\n" for w in isolation_warnings(report)]
    if not report.groups:
        return "\n".join([*out, "No finished episodes.", ""])
    out += [
        f"Intervals: {round(s.confidence * 100)}% percentile bootstrap over tasks, {s.resamples} "
        f"resamples, seed {s.seed}. Correct: mean over tasks of the share of repeats that passed. "
        "Solved: tasks a strict majority of whose repeats passed. k-of-n: tasks passed in at least "
        "k repeats. Model calls: one per model sample; reused: served by the response cache (the "
        "same sample asked again, e.g. after a resume) or a recording, not asked again; tokens and "
        "cost count each sample once, at its recorded figures. Cost is unknown when any call's price was unknown. Time is summed over episodes.",
        "",
        "## Summary",
        "",
    ]
    out += md_table(*summary_rows(report))
    out += [f"{line}\n" for line in budget_lines(report)]
    out += [
        "## Cost",
        "",
        "Tokens are prompt plus completion; a solved task is one a strict majority of whose repeats passed; "
        "unpriced: some call had no price.",
        "",
    ]
    out += md_table(*cost_rows(report))
    if any(g.oracle is not None for g in report.groups):
        out += [
            "## Test-time scaling",
            "",
            "Each best-of-N episode hands in one of its samples, chosen from what an agent may see. "
            "The oracle choice takes a passing sample whenever there is one (the hidden verdict "
            "decides): an upper bound, not a score any agent earned.",
            "",
        ]
        out += md_table(*scaling_rows(report))
    for section in contamination_sections(report):
        out += _md_section(section)
    own = kind_sections(report)
    for section in (s for s in own if not s.after_tasks):
        out += _md_section(section)
    for t in report.task_tables:
        out += [f"## {task_table_title(t)}", ""]
        out += md_table(*task_rows(t))
    for section in (s for s in own if s.after_tasks):
        out += _md_section(section)
    out += ["## Stage failures", ""]
    out += md_table(*stage_rows(report))
    if any(g.failure_reasons for g in report.groups):
        out += md_table(*reason_rows(report))
    if report.paired:
        out += [
            "## Paired tests",
            "",
            "Exact two-sided McNemar test on the tasks both agents ran; a task counts as solved "
            "when a strict majority of its repeats passed. A only / B only are the discordant tasks. "
            "In the viewer (`fembench-agents view`) a count opens the two agents side by side, task by "
            "task, at the tasks it counts; Model, Track and p open the tasks where the two disagree.",
            "",
        ]
        out += md_table(*paired_rows(report))
    if plots:
        out += ["## Plots", ""]
        out += [f"![{caption}]({path})\n" for caption, path in plots.items()]
    return "\n".join(out)


def _rich_table(title: str, rows: Rows) -> Table:
    headers, body = rows
    table = Table(title=title)
    for h in headers:
        table.add_column(h)
    for r in body:
        table.add_row(*r)
    return table


def rich_tables(report: Report) -> list[Table]:
    """Per-task results, summary, stage failures and paired tests, for `Console.print`."""
    tables = [_rich_table(task_table_title(t), task_rows(t)) for t in report.task_tables]
    tables += [_rich_table("Summary", summary_rows(report)), _rich_table("Cost", cost_rows(report))]
    if any(g.oracle is not None for g in report.groups):
        tables.append(_rich_table("Test-time scaling (oracle choice: an upper bound)", scaling_rows(report)))
    tables.append(_rich_table("Stage failures", stage_rows(report)))
    tables += [_rich_table(s.title, s.rows) for s in contamination_sections(report)]
    own = kind_sections(report)
    tables += [_rich_table(s.terminal_title or s.title, s.rows) for s in own if not s.after_tasks]
    tables += [_rich_table(s.terminal_title or s.title, s.rows) for s in own if s.after_tasks]
    if report.paired:
        tables.append(_rich_table("Paired tests (exact McNemar, tasks)", paired_rows(report)))
    return tables

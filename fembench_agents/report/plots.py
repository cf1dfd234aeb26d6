"""PNG and SVG plots of a `Report`, drawn on matplotlib's Agg canvas without pyplot
(no global figure state, no display needed)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from fembench_agents.report.kind_parts import kind_figures, report_part
from fembench_agents.report.render import stage_columns
from fembench_agents.report.schema import Estimate, GroupSummary, Report

CORRECTNESS_PNG = "correctness.png"
STAGES_PNG = "stage_failures.png"
COST_PNG = "pass_rate_cost.png"
CONTAMINATION_PNG = "contamination.png"
# The bars' label when the groups' kinds do not all name their headline alike.
MIXED_HEADLINE = "correct / joint test success"


def _labeler(report: Report, with_track: bool) -> Callable[[GroupSummary], str]:
    several_models = len({g.model for g in report.groups}) > 1
    several_tracks = with_track and len({g.track for g in report.groups}) > 1

    def label(g: GroupSummary) -> str:
        parts = ([g.model] if several_models else []) + [g.agent] + ([g.track] if several_tracks else [])
        return " / ".join(parts)

    return label


def _err(e: Estimate) -> tuple[float, float]:
    return max(0.0, e.value - e.low), max(0.0, e.high - e.value)


def new_figure(width: float = 7.0, height: float = 5.0) -> Figure:
    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _headline(g: GroupSummary) -> Estimate:
    """A graded track's mean score (joint test success), else the share correct."""
    return g.joint_tests if g.joint_tests else g.correct


def _pairs(report: Report) -> tuple[str, str, str, list[tuple[GroupSummary, GroupSummary]]]:
    """The first plotted pair of tracks (x, y, title) and its (x, y) groups, per model/agent that ran both."""
    for y_track in dict.fromkeys(g.track for g in report.groups):
        pair = report_part(y_track).paired_headline
        if pair is None:
            continue
        xs = {(g.model, g.agent): g for g in report.groups if g.track == pair.x_track}
        ys = {(g.model, g.agent): g for g in report.groups if g.track == y_track}
        both = sorted(xs.keys() & ys.keys())
        if both:
            return pair.x_track, y_track, pair.title, [(xs[k], ys[k]) for k in both]
    return "", "", "", []


def correctness_figure(report: Report) -> Figure:
    """A kind's headline plotted against another's (joint test success against
    functions correct), one labelled point per model/agent that ran both tracks;
    otherwise a bar per group of its headline rate with its confidence interval."""
    conf = round(report.settings.confidence * 100)
    x_track, y_track, title, both = _pairs(report)
    fig = new_figure()
    ax = fig.add_subplot()
    if both:
        label = _labeler(report, with_track=False)
        for c, t in both:
            across, up = _headline(c), _headline(t)
            ax.errorbar(
                across.value,
                up.value,
                xerr=np.array([_err(across)]).T,
                yerr=np.array([_err(up)]).T,
                fmt="o",
                capsize=3,
            )
            ax.annotate(label(c), (across.value, up.value), textcoords="offset points", xytext=(5, 5), fontsize=8)
        ax.set(
            xlim=(-0.05, 1.05),
            ylim=(-0.05, 1.05),
            xlabel=f"{report_part(x_track).headline_label or 'correct'} (mean over tasks)",
            ylabel=report_part(y_track).headline_label or "correct",
            title=f"{title} ({conf}% CI)",
        )
        ax.grid(alpha=0.3)
    elif report.groups:
        label = _labeler(report, with_track=True)
        heads = [_headline(g) for g in report.groups]
        x = np.arange(len(heads))
        ax.bar(x, [h.value for h in heads], yerr=np.array([_err(h) for h in heads]).T, capsize=4, color="tab:blue")
        ax.set_xticks(x, [label(g) for g in report.groups], rotation=30, ha="right")
        labels = {report_part(g.track).headline_label for g in report.groups}
        ylabel = next(iter(labels)) if len(labels) == 1 else None
        ylabel = ylabel or MIXED_HEADLINE
        ax.set(ylim=(0, 1.05), ylabel=ylabel, title=f"{ylabel.capitalize()} ({conf}% CI)")
        ax.grid(axis="y", alpha=0.3)
    else:
        ax.text(0.5, 0.5, "no episodes", ha="center", va="center")
        ax.set_axis_off()
    return fig


def stage_failures_figure(report: Report) -> Figure:
    """Failed episodes per group, stacked by the stage they failed at."""
    groups = report.groups
    stages = stage_columns(report)
    fig = new_figure(width=max(6.0, 1.0 * len(groups) + 3.0))
    ax = fig.add_subplot()
    if groups:
        label = _labeler(report, with_track=True)
        x = np.arange(len(groups))
        bottom = np.zeros(len(groups))
        colors = [f"C{i % 10}" for i in range(len(stages))]
        for stage, color in zip(stages, colors, strict=True):
            heights = np.array([g.stage_failures.get(stage, 0) for g in groups], dtype=float)
            ax.bar(x, heights, bottom=bottom, label=stage, color=color)
            bottom += heights
        ax.set_xticks(x, [label(g) for g in groups], rotation=30, ha="right")
        ax.set(ylabel="failed episodes", title="Where attempts failed")
        ax.set_ylim(0, max(1.0, float(bottom.max()) * 1.1))
        if stages:
            ax.legend(title="stage", fontsize=8)
        else:
            ax.text(0.5, 0.5, "no failures", transform=ax.transAxes, ha="center", va="center")
    else:
        ax.text(0.5, 0.5, "no episodes", ha="center", va="center")
        ax.set_axis_off()
    return fig


def cost_per_task(g: GroupSummary) -> float | None:
    return None if g.cost_usd is None or g.tasks == 0 else g.cost_usd / g.tasks


def tokens_per_task(g: GroupSummary) -> float:
    return (g.prompt_tokens + g.completion_tokens) / g.tasks if g.tasks else 0.0


def cost_figure(report: Report) -> Figure:
    """Each model x agent x track's headline (with its interval) against its dollars per task:
    a scaffold that solves as much for less sits up and to the left. When every priced call
    was free (the embedded model), dollars tell nothing apart and tokens per task stand in."""
    label = _labeler(report, with_track=True)
    priced = [(g, c) for g in report.groups if (c := cost_per_task(g)) is not None]
    unpriced = len(report.groups) - len(priced)
    fig = new_figure()
    ax = fig.add_subplot()
    if not priced:
        ax.text(0.5, 0.5, "no priced episodes", ha="center", va="center")
        ax.set_axis_off()
        return fig
    free = all(c == 0 for _, c in priced)
    if free:
        priced = [(g, tokens_per_task(g)) for g, _ in priced]
    for k, (g, c) in enumerate(priced):
        e = _headline(g)
        low, high = _err(e)
        ax.errorbar([c], [e.value], yerr=[[low], [high]], fmt="o", color=f"C{k % 10}", capsize=4, label=label(g))
    xlabel = "tokens per task (prompt + completion; every call was free)" if free else "cost per task (USD)"
    ax.set(xlabel=xlabel, ylabel="pass rate (share of repeats passed, mean over tasks)")
    title = "Pass rate against tokens" if free else "Pass rate against cost"
    ax.set_title(title + (f" ({unpriced} unpriced not shown)" if unpriced else ""))
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlim(left=0.0, right=max(c for _, c in priced) * 1.15 or 1.0)
    ax.legend(fontsize=8)
    return fig


def contamination_figure(report: Report) -> Figure:
    """One row per model x agent x track and scope: the paired difference with its interval,
    and a line at 0 (no difference)."""
    rows = report.contamination
    fig = new_figure(height=max(3.0, 0.4 * len(rows) + 1.5))
    ax = fig.add_subplot()
    if not rows:
        ax.text(0.5, 0.5, "no stratum with published and fresh tasks", ha="center", va="center")
        ax.set_axis_off()
        return fig
    y = list(range(len(rows)))[::-1]
    for k, r in zip(y, rows, strict=True):
        d = r.difference
        color = "black" if r.scope == "overall" else "tab:blue"
        ax.errorbar([d.value], [k], xerr=[[d.value - d.low], [d.high - d.value]], fmt="o", color=color, capsize=3)
    labels = [f"{r.model} / {r.agent} / {r.track}: {r.scope}" for r in rows]
    ax.set_yticks(y, labels, fontsize=8)
    ax.axvline(0.0, color="grey", linewidth=1)
    conf = round(report.settings.confidence * 100)
    ax.set(xlim=(-1.05, 1.05), xlabel="pass rate, published - fresh", title=f"Published against fresh ({conf}% CI)")
    ax.grid(axis="x", alpha=0.3)
    return fig


def plot_correctness(report: Report, path: str | Path) -> Path:
    correctness_figure(report).savefig(path)
    return Path(path)


def plot_stage_failures(report: Report, path: str | Path) -> Path:
    stage_failures_figure(report).savefig(path)
    return Path(path)


def write_plots(report: Report, out_dir: str | Path) -> dict[str, Path]:
    """Every plot as PNG and SVG into `out_dir`; caption -> the PNG (the SVG
    sits beside it under the same stem). The kinds' own plots (the PDE
    margins) follow, each only when the report has its data."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figures: dict[str, tuple[str, Callable[[Report], Figure]]] = {
        "Correctness": (CORRECTNESS_PNG, correctness_figure),
        "Stage failures": (STAGES_PNG, stage_failures_figure),
        "Pass rate against cost": (COST_PNG, cost_figure),
    }
    if report.contamination or report.contamination_unpaired:
        figures["Published against fresh"] = (CONTAMINATION_PNG, contamination_figure)
    figures.update({f.caption: (f.file_name, f.draw) for f in kind_figures(report)})
    written = {}
    for caption, (name, draw) in figures.items():
        fig = draw(report)
        png = out / name
        fig.savefig(png, format="png")
        fig.savefig(png.with_suffix(".svg"), format="svg")
        written[caption] = png
    return written

"""PNG and SVG plots of a `Report`, drawn on matplotlib's Agg canvas without pyplot
(no global figure state, no display needed)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from fembench_agents.report.render import stage_columns
from fembench_agents.report.schema import Estimate, GroupSummary, Report

CORRECTNESS_PNG = "correctness.png"
STAGES_PNG = "stage_failures.png"
MARGINS_PNG = "case_margins.png"


def _labeler(report: Report, with_track: bool) -> Callable[[GroupSummary], str]:
    several_models = len({g.model for g in report.groups}) > 1
    several_tracks = with_track and len({g.track for g in report.groups}) > 1

    def label(g: GroupSummary) -> str:
        parts = ([g.model] if several_models else []) + [g.agent] + ([g.track] if several_tracks else [])
        return " / ".join(parts)

    return label


def _err(e: Estimate) -> tuple[float, float]:
    return max(0.0, e.value - e.low), max(0.0, e.high - e.value)


def _new(width: float = 7.0, height: float = 5.0) -> Figure:
    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _headline(g: GroupSummary) -> Estimate:
    return g.joint_tests if g.track == "tests" and g.joint_tests else g.correct


def correctness_figure(report: Report) -> Figure:
    """Functions correct (x) against joint test success (y), one labelled point
    per model/agent that ran both tracks; otherwise a bar per group of its
    headline rate (correctness, or joint test success on the tests track)
    with its confidence interval."""
    conf = round(report.settings.confidence * 100)
    code = {(g.model, g.agent): g for g in report.groups if g.track == "code"}
    tests = {(g.model, g.agent): g for g in report.groups if g.track == "tests"}
    both = sorted(code.keys() & tests.keys())
    fig = _new()
    ax = fig.add_subplot()
    if both:
        label = _labeler(report, with_track=False)
        for key in both:
            c, t = code[key], tests[key]
            assert t.joint_tests is not None
            ax.errorbar(
                c.correct.value,
                t.joint_tests.value,
                xerr=np.array([_err(c.correct)]).T,
                yerr=np.array([_err(t.joint_tests)]).T,
                fmt="o",
                capsize=3,
            )
            ax.annotate(
                label(c), (c.correct.value, t.joint_tests.value), textcoords="offset points", xytext=(5, 5), fontsize=8
            )
        ax.set(
            xlim=(-0.05, 1.05),
            ylim=(-0.05, 1.05),
            xlabel="functions correct (mean over tasks)",
            ylabel="joint test success",
            title=f"Correctness vs test quality ({conf}% CI)",
        )
        ax.grid(alpha=0.3)
    elif report.groups:
        label = _labeler(report, with_track=True)
        heads = [_headline(g) for g in report.groups]
        x = np.arange(len(heads))
        ax.bar(x, [h.value for h in heads], yerr=np.array([_err(h) for h in heads]).T, capsize=4, color="tab:blue")
        ax.set_xticks(x, [label(g) for g in report.groups], rotation=30, ha="right")
        tracks = {g.track for g in report.groups}
        ylabel = (
            "joint test success"
            if tracks == {"tests"}
            else ("functions correct" if tracks == {"code"} else "correct / joint test success")
        )
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
    fig = _new(width=max(6.0, 1.0 * len(groups) + 3.0))
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


def margins_figure(report: Report) -> Figure:
    """PDE attempts that executed: error / tau_acc and time / tau_time per
    model x agent x library x family, on a log scale, the gate at 1."""
    rows = [m for m in report.case_margins if m.error_ratios or m.time_ratios]
    fig = _new(width=9.0, height=max(3.0, 0.4 * len(rows) + 2.0))
    axes = fig.subplots(1, 2, sharey=True)
    labels = [f"{m.model} / {m.agent} / {m.library} / {m.family}" for m in rows]
    for ax, field, title in ((axes[0], "error_ratios", "error / tau_acc"), (axes[1], "time_ratios", "time / tau_time")):
        for y, m in enumerate(rows):
            values = [max(v, 1e-12) for v in getattr(m, field)]
            ax.scatter(values, [y] * len(values), s=12, alpha=0.6, color="tab:blue")
        ax.axvline(1.0, color="tab:red", linestyle="--", linewidth=1)
        ax.set_xscale("log")
        ax.set(title=title, xlabel="ratio (<= 1 passes the gate)")
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(range(len(rows)), labels, fontsize=8)
    if not rows:
        axes[0].text(0.5, 0.5, "no executed attempts", transform=axes[0].transAxes, ha="center", va="center")
    return fig


def plot_correctness(report: Report, path: str | Path) -> Path:
    correctness_figure(report).savefig(path)
    return Path(path)


def plot_stage_failures(report: Report, path: str | Path) -> Path:
    stage_failures_figure(report).savefig(path)
    return Path(path)


def write_plots(report: Report, out_dir: str | Path) -> dict[str, Path]:
    """Every plot as PNG and SVG into `out_dir`; caption -> the PNG (the SVG
    sits beside it under the same stem). The PDE margins plot only when the
    report has PDE cases."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figures = {
        "Correctness": (CORRECTNESS_PNG, correctness_figure),
        "Stage failures": (STAGES_PNG, stage_failures_figure),
    }
    if report.case_margins:
        figures["PDE error and time against the thresholds"] = (MARGINS_PNG, margins_figure)
    written = {}
    for caption, (name, draw) in figures.items():
        fig = draw(report)
        png = out / name
        fig.savefig(png, format="png")
        fig.savefig(png.with_suffix(".svg"), format="svg")
        written[caption] = png
    return written

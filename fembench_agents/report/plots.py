"""PNG plots of a `Report`, drawn on matplotlib's Agg canvas without pyplot
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


def plot_correctness(report: Report, path: str | Path) -> Path:
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
    fig.savefig(path, format="png")
    return Path(path)


def plot_stage_failures(report: Report, path: str | Path) -> Path:
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
    fig.savefig(path, format="png")
    return Path(path)


def write_plots(report: Report, out_dir: str | Path) -> dict[str, Path]:
    """Both plots into `out_dir`; caption -> file."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return {
        "Correctness": plot_correctness(report, out / CORRECTNESS_PNG),
        "Stage failures": plot_stage_failures(report, out / STAGES_PNG),
    }

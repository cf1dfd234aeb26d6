"""The PDE cases' plot: every executed attempt's error and time against its thresholds."""

from __future__ import annotations

from matplotlib.figure import Figure

from fembench_agents.report.plots import new_figure
from fembench_agents.report.schema import Report


def margins_figure(report: Report) -> Figure:
    """PDE attempts that executed: error / tau_acc and time / tau_time per
    model x agent x library x family, on a log scale, the gate at 1."""
    rows = [m for m in report.case_margins if m.error_ratios or m.time_ratios]
    fig = new_figure(width=9.0, height=max(3.0, 0.4 * len(rows) + 2.0))
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

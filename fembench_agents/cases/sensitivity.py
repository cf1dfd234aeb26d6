"""Threshold sensitivity of a finished PDE run: pass rates recomputed for other
alpha_acc and alpha_time values from what every case outcome stores (its error,
its fastest time, e_base, t_base and the floors), without running any solver.

Exact for a larger alpha_time and for any alpha_acc. For a smaller alpha_time it
is a lower bound: an accurate attempt under the recorded time target was never
re-timed, and a re-timing might have rescued it under a stricter one.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from pydantic import BaseModel, ConfigDict

from fembench_agents.cases.outcomes import CaseOutcome
from fembench_agents.runs.reader import latest_attempts, open_run

ALPHA_ACC = (1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0)
ALPHA_TIME = (1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0)
PLOT = "sensitivity"


class SensitivityCurve(BaseModel):
    """Pass rate of one model x agent x library against one alpha, the other held at its recorded value."""

    model_config = ConfigDict(frozen=True)
    model: str
    agent: str
    library: str
    varied: str  # "alpha_acc" | "alpha_time"
    alphas: tuple[float, ...]
    pass_rates: tuple[float, ...]
    attempts: int


def passes(o: CaseOutcome, alpha_acc: float | None = None, alpha_time: float | None = None) -> bool:
    """The verdict under other alphas (None: the recorded one)."""
    th = o.thresholds
    if th is None or not any(s.stage == "executes" and s.passed for s in o.stages):
        return False
    err = o.relative_l2_error
    a_acc = th.alpha_acc if alpha_acc is None else alpha_acc
    if err is None or not math.isfinite(err) or err > max(a_acc * th.e_base, th.tau_min):
        return False
    a_time = th.alpha_time if alpha_time is None else alpha_time
    if th.t_base is None or o.solve_seconds is None:
        return False
    return o.solve_seconds <= a_time * max(th.t_base, th.t_floor)


def curves(
    run_dirs: Iterable[str | os.PathLike[str]],
    alpha_acc: Sequence[float] = ALPHA_ACC,
    alpha_time: Sequence[float] = ALPHA_TIME,
) -> list[SensitivityCurve]:
    """Over every scored case attempt of the runs, per model x agent x library."""
    grouped: dict[tuple[str, str, str], list[CaseOutcome]] = defaultdict(list)
    for directory in run_dirs:
        for record in latest_attempts(open_run(directory).records).values():
            if isinstance(record.outcome, CaseOutcome):
                grouped[(record.model, record.agent, record.outcome.library)].append(record.outcome)
    out = []
    for (model, agent, library), outcomes in sorted(grouped.items()):
        n = len(outcomes)
        for varied, alphas in (("alpha_acc", alpha_acc), ("alpha_time", alpha_time)):
            rates = tuple(
                sum(passes(o, **{varied: a}) for o in outcomes) / n
                for a in alphas  # type: ignore[arg-type]
            )
            out.append(SensitivityCurve(model=model, agent=agent, library=library, varied=varied,
                                        alphas=tuple(alphas), pass_rates=rates, attempts=n))  # fmt: skip
    return out


def plot(found: list[SensitivityCurve], out_dir: Path) -> list[Path]:
    """One figure, a panel per alpha; written as PNG and SVG."""
    fig = Figure(figsize=(10.0, 4.5), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 2, sharey=True)
    for ax, varied in zip(axes, ("alpha_acc", "alpha_time"), strict=True):
        for c in (c for c in found if c.varied == varied):
            ax.plot(c.alphas, c.pass_rates, marker="o", label=f"{c.model} / {c.agent} / {c.library} (n={c.attempts})")
        ax.set_xscale("log")
        ax.set_xlabel(varied)
        ax.set_ylim(-0.02, 1.02)
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("pass rate")
    axes[0].legend(fontsize=7, loc="lower right")
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / f"{PLOT}.png", out_dir / f"{PLOT}.svg"]
    for p in paths:
        fig.savefig(p, metadata={"Date": None} if p.suffix == ".svg" else None)
    return paths

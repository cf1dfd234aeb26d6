"""The PDE cases' outcome: a solver attempt, executes -> accurate -> fast, with
the figures its verdict was measured against kept apart (evaluator-only)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from fembench_agents.scoring.outcomes import ErrorInfo, OutcomeBase

# Which gates judge a PDE attempt: ours (each case record's alpha_acc, tau_min, alpha_time, or a
# scorer's override), or the published record's own multipliers (`--gates published`, gates.published_config).
GateSet = Literal["ours", "published"]
GATE_SETS: tuple[GateSet, ...] = ("ours", "published")
PUBLISHED_LABEL = "published (per record)"


class CaseThresholds(BaseModel):
    """What a PDE verdict was measured against. Evaluator-only: the log keeps it
    (so pass rates can be recomputed for other alphas); feedback never reads it."""

    model_config = ConfigDict(frozen=True)
    e_base: float
    tau_acc: float
    t_base: float | None
    tau_time: float | None
    alpha_acc: float
    tau_min: float
    alpha_time: float
    t_floor: float
    calibration: str | None = None  # the machine calibration's id
    gates: GateSet = "ours"  # which gates judged: a log written before this field was judged by ours

    @property
    def label(self) -> str:
        """The gates as a report names them: ours with their figures, or the published record's (which vary)."""
        if self.gates == "published":
            return PUBLISHED_LABEL
        return (
            f"ours (alpha_acc {self.alpha_acc:g}, tau_min {self.tau_min:g}, alpha_time {self.alpha_time:g}, "
            f"t_floor {self.t_floor:g} s)"
        )


class CaseOutcome(OutcomeBase):
    """A PDE solver attempt: executes -> accurate -> fast. Everything but
    `thresholds` is the attempt's own: its error norms, its fastest solve time,
    what it said about itself."""

    kind: Literal["case"] = "case"
    library: str
    family: str
    relative_l2_error: float | None = None
    solve_seconds: float | None = None  # the fastest timed call (the fast gate's figure)
    timings: tuple[float, ...] = ()
    max_abs_error: float | None = None
    rmse: float | None = None
    solver_info: dict[str, str | int | float | bool | None] = {}
    error: ErrorInfo | None = None  # the attempt's own exception, if solve raised
    thresholds: CaseThresholds | None = None
    # compatibility options applied (cases/compat.py): rewrites of the program, readings of its output
    substitutions: tuple[str, ...] = ()

    # A PDE attempt's measured times (and the thresholds of a re-calibrated
    # machine) vary between scorings; its verdict is what must not.
    varying_fields: ClassVar[frozenset[str]] = frozenset(
        {"seconds", "isolation", "timings", "solve_seconds", "thresholds"}
    )

    def verdict_data(self) -> dict[str, object]:
        data = super().verdict_data()
        for stage in data["stages"]:  # type: ignore[attr-defined]
            if stage["stage"] == "fast":
                stage.pop("detail", None)
        return data


def gate_labels(outcomes: Iterable[CaseOutcome]) -> list[str]:
    """The gates that judged `outcomes`, each named once (an outcome no gate judged names none)."""
    return sorted({o.thresholds.label for o in outcomes if o.thresholds is not None})

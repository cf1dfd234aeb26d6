"""The PDE cases' outcome: a solver attempt, executes -> accurate -> fast, with
the figures its verdict was measured against kept apart (evaluator-only)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from fembench_agents.scoring.outcomes import ErrorInfo, OutcomeBase


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
    substitutions: tuple[str, ...] = ()  # compatibility rewrites applied to the program (cases/compat.py)

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

"""Typed outcomes of scoring one attempt: what feedback builders, reports and
logs read. They describe the attempt (its own errors, which input failed and
how, the size of its error) and never carry reference values or sources.

Every outcome is a sequence of stages; an attempt passes when every stage it
reached passed. Function attempts go parse -> imports -> execute -> correct,
test-suite attempts parse -> imports -> tests; a solver-writing track adds its
own kind with its own stages (executes -> accurate -> fast) on the same base.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from fembench_agents.vocabulary import FailureReason, InputStatus, Stage

SCHEMA_VERSION = 1


def share(flags: Iterable[bool]) -> float:
    """The fraction of true flags; 0.0 when there are none."""
    values = list(flags)
    return sum(values) / len(values) if values else 0.0


def first_failed(stages: Iterable[StageResult]) -> StageResult | None:
    return next((s for s in stages if not s.passed), None)


class StageResult(BaseModel):
    model_config = ConfigDict(frozen=True)
    stage: Stage
    passed: bool
    reason: FailureReason | None = None
    detail: str | None = None  # about the attempt only: safe to show its author
    seconds: float | None = None  # wall time spent on this stage alone; None where it is not timed apart


class ErrorInfo(BaseModel):
    model_config = ConfigDict(frozen=True)
    type: str
    message: str = ""
    traceback: tuple[str, ...] = ()  # lines from the attempt's own code only

    @property
    def summary(self) -> str:
        """`Type: message`, or the type alone when the message is empty or withheld."""
        return f"{self.type}: {self.message}" if self.message else self.type


class InputResult(BaseModel):
    model_config = ConfigDict(frozen=True)
    index: int
    status: InputStatus
    error: ErrorInfo | None = None
    mismatch: str | None = None  # shape_mismatch, value_mismatch, non_finite, expected_exception, ...
    where: str | None = None  # e.g. output[1] (a path into the output, never a value)
    relative_error: float | None = None
    seconds: float | None = None


class OutcomeBase(BaseModel):
    model_config = ConfigDict(frozen=True)
    schema_version: int = SCHEMA_VERSION
    task_id: str
    passed: bool
    stages: tuple[StageResult, ...]
    isolation: str = "unknown"
    seconds: float = 0.0

    @property
    def failed_stage(self) -> Stage | None:
        failed = first_failed(self.stages)
        return failed.stage if failed else None

    @property
    def stage_reached(self) -> str:
        return self.stages[-1].stage if self.stages else "none"

    @property
    def reason(self) -> FailureReason | None:
        failed = first_failed(self.stages)
        return failed.reason if failed else None

    @property
    def episode_score(self) -> float:
        """An episode's score when this is its last outcome: 1 or 0 here; a kind may grade partial success."""
        return float(self.passed)

    # What varies from one scoring of the same attempt to the next (measured times).
    varying_fields: ClassVar[frozenset[str]] = frozenset({"seconds", "isolation"})

    def verdict_data(self) -> dict[str, object]:
        """Everything about the verdict, without what varies between scorings of the same attempt."""
        data = self.model_dump(exclude=set(self.varying_fields))
        for stage in data["stages"]:
            stage.pop("seconds", None)
        return data


class FunctionOutcome(OutcomeBase):
    kind: Literal["function"] = "function"
    inputs: tuple[InputResult, ...] = ()

    def verdict_data(self) -> dict[str, object]:
        data = super().verdict_data()
        for item in data["inputs"]:  # type: ignore[attr-defined]
            item.pop("seconds", None)
        return data


class TestResult(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    present: bool
    passes_reference: bool = False
    reference_error: ErrorInfo | None = None  # type and own traceback lines; no message
    detected: dict[str, bool] = {}  # expected-failure name -> the test failed on it

    @property
    def detects_all(self) -> bool:
        return self.present and all(self.detected.values())

    @property
    def joint(self) -> bool:
        return self.passes_reference and self.detects_all


class TestSuiteOutcome(OutcomeBase):
    kind: Literal["tests"] = "tests"
    tests: tuple[TestResult, ...] = ()

    @property
    def joint_score(self) -> float:
        return share(t.joint for t in self.tests)

    @property
    def episode_score(self) -> float:
        return self.joint_score

    @property
    def reference_pass_share(self) -> float:
        return share(t.passes_reference for t in self.tests)

    @property
    def detection_share(self) -> float:
        return share(v for t in self.tests for v in t.detected.values())


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


Outcome = Annotated[FunctionOutcome | TestSuiteOutcome | CaseOutcome, Field(discriminator="kind")]
AnyOutcome = FunctionOutcome | TestSuiteOutcome | CaseOutcome

"""Typed outcomes of scoring one attempt: what feedback builders, reports and
logs read. They describe the attempt (its own errors, which input failed and
how, the size of its error) and never carry reference values or sources.

Every outcome is a sequence of stages; an attempt passes when every stage it
reached passed. Each task kind brings its own outcome model on `OutcomeBase`,
tagged by its `kind` field (the function tasks': suite/outcomes.py; the PDE
cases': cases/outcomes.py), and registers it with the kind.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from fembench_agents.vocabulary import FailureReason, Stage

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

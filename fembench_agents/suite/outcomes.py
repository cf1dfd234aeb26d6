"""The function tasks' outcomes: a function attempt (parse -> imports ->
execute -> correct, with a result per verification input) and a test-suite
attempt (parse -> imports -> tests, with each test's verdict on the reference
and on every expected failure)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from fembench_agents.scoring.outcomes import ErrorInfo, OutcomeBase, share
from fembench_agents.vocabulary import InputStatus


class InputResult(BaseModel):
    model_config = ConfigDict(frozen=True)
    index: int
    status: InputStatus
    error: ErrorInfo | None = None
    mismatch: str | None = None  # shape_mismatch, value_mismatch, non_finite, expected_exception, ...
    where: str | None = None  # e.g. output[1] (a path into the output, never a value)
    relative_error: float | None = None
    seconds: float | None = None


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

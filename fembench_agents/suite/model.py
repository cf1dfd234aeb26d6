"""The function task as the rest of the product sees it: typed, plain data."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from fembench_agents.scoring import codec
from fembench_agents.suite.fresh_spec import FreshInputs

_TIER = re.compile(r"_CC(\d+)_H(\d+)_T(\d+)$")


class Tier(BaseModel):
    """Parsed from the id suffix `_CC<c>_H<h>_T<t>`."""

    model_config = ConfigDict(frozen=True)
    conceptual_challenge: int
    helpers_used: int
    help_level: int

    @classmethod
    def from_task_id(cls, task_id: str) -> Tier | None:
        m = _TIER.search(task_id)
        return cls(conceptual_challenge=int(m[1]), helpers_used=int(m[2]), help_level=int(m[3])) if m else None

    @property
    def label(self) -> str:
        return f"CC{self.conceptual_challenge}/H{self.helpers_used}/T{self.help_level}"


class SourceFunction(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    source: str


class TestCase(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    source: str
    docstring: str
    expected_failures: tuple[SourceFunction, ...]


class InvarianceRule(BaseModel):
    """An output (by path into the returned value) defined only up to sign or scale."""

    model_config = ConfigDict(frozen=True)
    path: tuple[int | str, ...] = ()
    invariance: Literal["sign", "scale"]


class Comparison(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    rtol: float = Field(default=1e-6, ge=0)
    atol: float = Field(default=1e-9, ge=0)
    rules: tuple[InvarianceRule, ...] = ()


class Task(BaseModel):
    """A function task. `inputs` hold the verification inputs as tagged data
    (see `codec`); reference outputs are not part of the task: the evaluator
    computes them in the sandbox."""

    model_config = ConfigDict(frozen=True)
    task_id: str
    short_description: str
    created_date: str
    created_by: str
    path: str
    module_source: str
    main_name: str
    main_signature: str
    main_docstring: str
    main_source: str
    helpers: tuple[SourceFunction, ...]
    required_imports: tuple[str, ...]
    inputs: tuple[Any, ...]
    tests: tuple[TestCase, ...]
    module_functions: dict[str, str]
    tier: Tier | None
    comparison: Comparison = Comparison()
    time_limit: float | None = None
    python_version: str | None = None
    package_versions: dict[str, str] = {}
    fresh_inputs: FreshInputs | None = None  # how its inputs may be drawn afresh (`fresh_spec`)
    # on a fresh instance (`fresh_tasks`): the published task's id; its inputs are drawn ones
    published_id: str | None = None

    @field_validator("time_limit")
    @classmethod
    def _positive(cls, v: float | None) -> float | None:
        if v is not None and v <= 0:
            raise ValueError("time_limit must be positive")
        return v

    @property
    def content_hash(self) -> str:
        """The module's; a fresh instance's covers its drawn inputs too (its reference outputs differ)."""
        text = self.module_source if self.published_id is None else self.module_source + codec.dumps(self.inputs)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def hidden_dir(self) -> Path:
        """The task's folder: its module holds the reference, hidden from every sandboxed job."""
        return Path(self.path).parent

    @property
    def leak(self) -> None:
        """A task module never shows its reference to a solver."""
        return None

    @property
    def helper_names(self) -> tuple[str, ...]:
        return tuple(h.name for h in self.helpers)

    @property
    def test_names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tests)

    @property
    def expected_failure_names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(f.name for t in self.tests for f in t.expected_failures))

    @property
    def builds_inputs(self) -> bool:
        """Some verification inputs hold callables or the module's own objects:
        the sandbox builds them from the task module (`codec.TASK_INPUT`)."""
        return any(isinstance(x, dict) and codec.TASK_INPUT in x for x in self.inputs)

    def decoded_inputs(self) -> list[list[Any] | None]:
        """The verification inputs as values; an input built in the sandbox is
        None here (the parent never holds it)."""
        return [None if isinstance(x, dict) and codec.TASK_INPUT in x else codec.from_data(x) for x in self.inputs]

    def unprovided_helpers(self) -> tuple[SourceFunction, ...]:
        """Module functions the reference relies on that the solver is not given
        (the helpers a T3 solver must write itself)."""
        skip = {self.main_name, "task_info", *self.helper_names, *self.test_names, *self.expected_failure_names}
        return tuple(SourceFunction(name=n, source=s) for n, s in self.module_functions.items() if n not in skip)

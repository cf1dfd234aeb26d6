"""How a function task's verification inputs may be drawn afresh: the optional
task_info key `fresh_inputs` (our extension, TASK_FORMAT.md), read into typed
rules, and the ids that tell a fresh instance from its published task.

A declaration names every parameter of the main function once: either drawn by
one or more rules, or fixed with the reason the docstring gives. Each rule
draws the argument's numbers anew and leaves its structure (shapes, integer
connectivity, flags, dict keys) as published, so a drawn input is the published
one with new numbers. `docs/fresh_instances.md` lists each task's ranges."""

from __future__ import annotations

import ast
import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

# Bumped whenever a change to the rules or to the order of draws would draw other inputs for a seed.
GENERATOR_VERSION = 1
FRESH_MARK = "~fresh"
_FRESH_ID = re.compile(rf"^(?P<published>.+){re.escape(FRESH_MARK)}(?P<seed>\d+)$")


def fresh_id(published_id: str, seed: int) -> str:
    """`FEM_1D_uniform_mesh_CC0_H0_T0` drawn with seed 7 -> `FEM_1D_uniform_mesh_CC0_H0_T0~fresh7`."""
    return f"{published_id}{FRESH_MARK}{seed}"


def published_id(task_id: str) -> str:
    """The published task a fresh instance was drawn from; a published id is its own."""
    m = _FRESH_ID.match(task_id)
    return m["published"] if m else task_id


def is_fresh(task_id: str) -> bool:
    return _FRESH_ID.match(task_id) is not None


class _Rule(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    arguments: tuple[str, ...] = Field(min_length=1)  # parameter names of the main function
    # inside dicts (at any depth), only the values under these keys; every value when empty
    keys: tuple[str, ...] = ()


class Uniform(_Rule):
    """Every float of the argument replaced by its own draw from [low, high]."""

    draw: Literal["uniform"]
    low: float
    high: float

    @model_validator(mode="after")
    def _ordered(self) -> Uniform:
        if not self.low < self.high:
            raise ValueError(f"uniform: low {self.low} must be below high {self.high}")
        return self


class Integer(_Rule):
    """An integer argument (a mesh size) drawn from low..high, both included."""

    draw: Literal["integer"]
    low: int
    high: int

    @model_validator(mode="after")
    def _ordered(self) -> Integer:
        if not self.low <= self.high:
            raise ValueError(f"integer: low {self.low} must not exceed high {self.high}")
        return self


class Choice(_Rule):
    """An argument drawn from the values the docstring supports (a quadrature order)."""

    draw: Literal["choice"]
    values: tuple[int | float, ...] = Field(min_length=1)


class Scale(_Rule):
    """Every nonzero float multiplied by its own log-uniform factor in [low, high]
    (material values, loads); with `signs`, the sign is drawn too. A zero stays
    zero, so an unloaded DOF stays unloaded. With `common`, one factor (and sign)
    for every number the rule draws: a stiffness matrix stays symmetric and
    keeps its null space."""

    draw: Literal["scale"]
    low: float = Field(gt=0)
    high: float = Field(gt=0)
    signs: bool = False
    common: bool = False

    @model_validator(mode="after")
    def _ordered(self) -> Scale:
        if not self.low < self.high:
            raise ValueError(f"scale: low {self.low} must be below high {self.high}")
        return self


class Affine(_Rule):
    """Coordinates moved by one map for all its arguments: x_a -> s_a x_a + t_a on
    each axis a, s_a from [scale] (positive), t_a from [shift]. It keeps what
    validity rests on: an element stays uninverted, collinear nodes stay
    collinear and others not, a vertical member stays vertical, x_min < x_max.
    An array's last index is its axis; a scalar's axis is given in `axes`
    (one per argument, default 0), and a dict value's is its argument's."""

    draw: Literal["affine"]
    dimensions: int = Field(ge=1, le=3)
    scale: tuple[float, float]
    shift: tuple[float, float]
    axes: tuple[int, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> Affine:
        if not 0 < self.scale[0] < self.scale[1]:
            raise ValueError(f"affine: scale {list(self.scale)} must be 0 < low < high")
        if not self.shift[0] <= self.shift[1]:
            raise ValueError(f"affine: shift {list(self.shift)} must be low <= high")
        if self.axes and len(self.axes) != len(self.arguments):
            raise ValueError(f"affine: {len(self.axes)} axes for {len(self.arguments)} arguments")
        if any(not 0 <= a < self.dimensions for a in self.axes):
            raise ValueError(f"affine: axes {list(self.axes)} must lie in 0..{self.dimensions - 1}")
        return self

    def axis_of(self, argument: str) -> int:
        return self.axes[self.arguments.index(argument)] if self.axes else 0


Rule = Annotated[Uniform | Integer | Choice | Scale | Affine, Field(discriminator="draw")]


class FreshInputs(BaseModel):
    """A task's `fresh_inputs` declaration. `only_fixed`: the task gets no fresh
    inputs, and why (its only argument is a rule the docstring limits to a few
    values, all of them published)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    draws: tuple[Rule, ...] = ()
    fixed: dict[str, str] = {}  # parameter -> why the docstring fixes it
    only_fixed: str | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> FreshInputs:
        if self.only_fixed is not None and (self.draws or self.fixed):
            raise ValueError("only_fixed excludes draws and fixed")
        if self.only_fixed is None and not self.draws:
            raise ValueError("give draws (and fixed), or only_fixed with the reason")
        drawn = {a for rule in self.draws for a in rule.arguments}
        both = sorted(drawn & set(self.fixed))
        if both:
            raise ValueError(f"parameters both drawn and fixed: {', '.join(both)}")
        return self

    def check_parameters(self, parameters: tuple[str, ...]) -> None:
        """Every parameter is drawn or fixed, and nothing else is named; a ValueError names the gap."""
        if self.only_fixed is not None:
            return
        named = {a for rule in self.draws for a in rule.arguments} | set(self.fixed)
        unknown = sorted(named - set(parameters))
        if unknown:
            raise ValueError(f"names no parameter of the main function: {', '.join(unknown)}")
        missing = [p for p in parameters if p not in named]
        if missing:
            raise ValueError(f"parameters neither drawn nor fixed: {', '.join(missing)}")


def parameter_names(signature: str) -> tuple[str, ...]:
    """The positional parameter names of a `def` line (the task's `main_signature`)."""
    node = ast.parse(signature + "\n    ...").body[0]
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    return tuple(a.arg for a in (*node.args.posonlyargs, *node.args.args))

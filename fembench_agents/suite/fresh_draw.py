"""Drawing one fresh verification input from a published one by a task's rules
(`fresh_spec`). Pure and in the parent: the same task, seed, input and draw
number give the same values, byte for byte, on any machine.

Each (task, seed, input, draw) has its own stream, `random.Random` seeded with
the text `fembench-fresh-inputs/v<GENERATOR_VERSION>/<task id>/<seed>/<input>/<draw>`
(Python seeds a string through its SHA-512, the same on every platform), so a
redraw of input 1 does not move input 2. The rules draw in their declared
order; each walks its arguments in order, dicts in insertion order and arrays
in C order. Drawn numbers are rounded to 4 significant digits, so a drawn
input reads plainly in a log; numbers an affine map computes are not."""

from __future__ import annotations

import copy
import math
import random
from collections.abc import Callable
from typing import Any

import numpy as np

from fembench_agents.suite.fresh_spec import (
    GENERATOR_VERSION,
    Affine,
    Choice,
    FreshInputs,
    Integer,
    Rule,
    Scale,
    Uniform,
)

Leaf = Callable[[float, int], float]  # (value, axis) -> new value


def stream(task_id: str, seed: int, index: int, draw: int) -> random.Random:
    return random.Random(f"fembench-fresh-inputs/v{GENERATOR_VERSION}/{task_id}/{seed}/{index}/{draw}")


def rounded(x: float) -> float:
    return float(f"{x:.4g}")


def draw_input(spec: FreshInputs, parameters: tuple[str, ...], published: list[Any], rng: random.Random) -> list[Any]:
    """`published` (one input's argument list) with every drawn argument's numbers drawn anew."""
    args = copy.deepcopy(published)
    for rule in spec.draws:
        leaf = _leaf_function(rule, rng)
        for name in rule.arguments:
            position = parameters.index(name)
            if position >= len(args):
                continue  # left to its default in this input
            axis = rule.axis_of(name) if isinstance(rule, Affine) else 0
            args[position] = _apply(rule, args[position], leaf, rng, axis, name)
    return args


def _leaf_function(rule: Rule, rng: random.Random) -> Leaf:
    """What a rule does to one float; an affine map's parameters are drawn here, once per rule."""
    if isinstance(rule, Uniform):
        return lambda x, axis: rounded(rng.uniform(rule.low, rule.high))
    if isinstance(rule, Scale):
        log_low, log_high = math.log(rule.low), math.log(rule.high)

        def factor() -> float:
            size = rounded(math.exp(rng.uniform(log_low, log_high)))
            return size * rng.choice((-1.0, 1.0)) if rule.signs else size

        if rule.common:
            one = factor()
            return lambda x, axis: x * one

        return lambda x, axis: x if x == 0.0 else x * factor()
    if isinstance(rule, Affine):
        scales = [rounded(rng.uniform(*rule.scale)) for _ in range(rule.dimensions)]
        shifts = [rounded(rng.uniform(*rule.shift)) for _ in range(rule.dimensions)]
        return lambda x, axis: scales[axis] * x + shifts[axis]
    return lambda x, axis: x  # integer and choice draw whole arguments (`_apply`)


def _apply(rule: Rule, value: Any, leaf: Leaf, rng: random.Random, axis: int, name: str) -> Any:
    if isinstance(rule, Integer):
        _require_number(value, name, rule.draw, integer=True)
        return rng.randint(rule.low, rule.high)
    if isinstance(rule, Choice):
        _require_number(value, name, rule.draw, integer=False)
        return rng.choice(rule.values)
    return _walk(value, leaf, rule.keys, axis, rule.dimensions if isinstance(rule, Affine) else 0, name)


def _require_number(value: Any, name: str, draw: str, integer: bool) -> None:
    ok = isinstance(value, int) if integer else isinstance(value, (int, float))
    if not ok or isinstance(value, bool):
        raise ValueError(f"{draw} draw of {name!r}: the published value is {type(value).__name__}, not a number")


def _walk(value: Any, leaf: Leaf, keys: tuple[str, ...], axis: int, dimensions: int, name: str) -> Any:
    """`value` with `leaf` applied to each float in it: integers, booleans, None and
    text stay as published (node indices, flags, counts), and so does a dict value
    whose key is not among `keys` when keys are given."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return leaf(value, axis)
    if isinstance(value, np.ndarray):
        if value.dtype.kind != "f":
            return value
        out = value.astype(np.float64, copy=True)
        flat = out.reshape(-1)
        width = dimensions if dimensions > 1 else 0
        if width and (out.ndim == 0 or out.shape[-1] != width):
            raise ValueError(f"affine draw of {name!r}: an array of shape {out.shape}, not (..., {width})")
        for i in range(flat.size):
            flat[i] = leaf(float(flat[i]), i % width if width else axis)
        return out.astype(value.dtype, copy=False)
    if isinstance(value, (list, tuple)):
        walked = [_walk(v, leaf, keys, axis, dimensions, name) for v in value]
        return walked if isinstance(value, list) else tuple(walked)
    if isinstance(value, dict):
        return {
            k: _walk(v, leaf, (), axis, dimensions, name)
            if not keys or k in keys
            else _inner(v, leaf, keys, axis, dimensions, name)
            for k, v in value.items()
        }
    raise ValueError(f"cannot draw {name!r}: it holds a {type(value).__name__}")


def _inner(value: Any, leaf: Leaf, keys: tuple[str, ...], axis: int, dimensions: int, name: str) -> Any:
    """A dict value not under `keys`: only dicts nested in it are searched for them."""
    if isinstance(value, dict):
        return _walk(value, leaf, keys, axis, dimensions, name)
    if isinstance(value, (list, tuple)) and any(isinstance(v, dict) for v in value):
        return _walk(value, leaf, keys, axis, dimensions, name)
    return value

"""The grammar of fresh solutions periodic in one direction of the unit square (a case file's
`periodic = ["x"]` or `["y"]`, cases/own_periodic.py): with s the periodic coordinate and r the
other one, a sum of two or three terms of distinct kinds, each 1-periodic in s with all its
derivatives (so the value, the normal derivative and the forcing agree on the paired sides):

  smooth        a*cos(2*m*pi*s + q)*exp(c*r)     or  a*sin(2*m*pi*s + q)*r**j
  oscillatory   a*sin(2*m*pi*s + q)*cos(n*pi*r)
  boundary_layer a*cos(2*m*pi*s + q)*exp(-w*r) or exp(-w*(1 - r)): the layer on a Dirichlet side
  across        a*exp(c*r)  or  a*r**j           (no s at all: the mean flow across the period)

m in {1, 2} (one or two periods), n, q, c, j, w and a from the lists of grammar.py. The corner
term has no place here: a periodic square has no corner of its own."""

from __future__ import annotations

from fractions import Fraction
from typing import Literal

from fembench_agents.cases.generate.grammar import (
    AMPLITUDES,
    EXP_RATES,
    LAYER_WIDTHS,
    PHASES,
    POWERS,
    WAVENUMBERS,
    Draw,
    number,
    plus,
    scaled,
)

PERIODS = (1, 2)  # m: periods across the unit square
PeriodicKind = Literal["smooth", "oscillatory", "boundary_layer", "across"]
PERIODIC_KINDS: tuple[PeriodicKind, ...] = ("smooth", "oscillatory", "boundary_layer", "across")
DIRECTIONS = ("x", "y")  # the periodic one; the other two sides are Dirichlet


def other(s: str) -> str:
    return "y" if s == "x" else "x"


def _period(d: Draw, s: str, fn: str) -> str:
    m, q = d.pick(PERIODS), d.pick(PHASES)
    phase = "" if q == 0 else f" + {number(q)}"
    return f"{fn}({2 * m}*pi*{s}{phase})"


def _across(d: Draw, r: str) -> str:
    if d.pick((0, 1)):
        return f"exp({scaled(d.pick(EXP_RATES), r)})"
    j = d.pick(POWERS)
    return r if j == 1 else f"{r}**{j}"


def periodic_term(kind: PeriodicKind, d: Draw, s: str) -> str:
    """One term of this kind, periodic in `s` (the text is in x and y, as every expression)."""
    a, r = d.pick(AMPLITUDES), other(s)
    if kind == "smooth":
        body = f"{_period(d, s, d.pick(('cos', 'sin')))}*{_across(d, r)}"
    elif kind == "oscillatory":
        n = d.pick(WAVENUMBERS)
        body = f"{_period(d, s, 'sin')}*cos({'' if n == 1 else f'{n}*'}pi*{r})"
    elif kind == "boundary_layer":
        width: Fraction = d.pick(LAYER_WIDTHS)
        distance = r if d.pick((0, 1)) == 0 else f"(1 - {r})"
        body = f"{_period(d, s, 'cos')}*exp(-{number(1 / width)}*{distance})"
    else:
        body = _across(d, r)
    return scaled(a, body)


def periodic_solution(d: Draw, s: str) -> tuple[str, tuple[PeriodicKind, ...]]:
    """The sum of two or three terms of distinct kinds (so at least one varies along `s`), and their kinds."""
    chosen = d.sample(PERIODIC_KINDS, d.pick((2, 3)))
    return plus(*(periodic_term(k, d, s) for k in chosen)), tuple(chosen)
